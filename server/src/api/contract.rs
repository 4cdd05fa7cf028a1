//! The API's error contract, kept for every answer under `/api/v1`: an
//! error is JSON `{"error": {"code", "message"}}` whoever produced it. The
//! handlers answer so already; this layer rewrites what axum itself
//! answers (path and query rejections, unknown routes, wrong methods, the
//! body limit), which would otherwise be plain text or empty.

use axum::extract::Request;
use axum::http::{Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ErrorBody;

/// The most of a plain-text error body read to become the message.
const MAX_MESSAGE_BYTES: usize = 4096;

/// `/api/v1/...` that names no endpoint.
pub async fn unknown_endpoint(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("there is no endpoint {method} {}", uri.path()),
    )
}

/// Keeps the contract for everything under `/api/` (the JSON API and the
/// app's server functions) and `/v1/` (the OpenAI-compatible endpoints,
/// whose clients read `error.message` too), whichever layer answered: the
/// body limit, the router, an extractor.
pub async fn keep(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let api = path.starts_with("/api/") || path.starts_with("/v1/");
    let response = next.run(request).await;
    if api {
        json_errors(response).await
    } else {
        response
    }
}

/// Turns an error response that is not JSON into the contract's JSON.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_MESSAGE_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let (code, fallback) = match status {
        StatusCode::NOT_FOUND => ("not_found", "no such endpoint"),
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this endpoint does not take this method",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => ("too_large", "the request body is too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "unsupported_media_type",
            "send the body as application/json",
        ),
        StatusCode::TOO_MANY_REQUESTS => ("too_many_requests", "too many requests"),
        status if status.is_server_error() => (
            "internal",
            "something went wrong on the server; the details are in its log",
        ),
        _ => ("invalid_input", "the request is not valid"),
    };
    // A server error's text could hold internals: never shown.
    let message = if text.is_empty() || status.is_server_error() {
        fallback.to_string()
    } else {
        text
    };
    let mut rewritten = error(status, code, message);
    // Keep what the client needs (Allow on a 405, Retry-After).
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = parts.headers.get(&name) {
            rewritten.headers_mut().insert(name, value.clone());
        }
    }
    rewritten
}

fn error(status: StatusCode, code: &str, message: String) -> Response {
    ErrorBody::new(code, message).respond(status)
}
