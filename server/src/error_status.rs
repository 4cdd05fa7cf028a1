//! Server functions answer every error with 500, even when the request was
//! at fault (a missing or malformed argument never reaches our code). This
//! layer reads the typed [`AppError`] in such a reply and gives it the
//! status it deserves (400 for bad input), so no bad request is reported as
//! the server's fault.

use axum::body::{Body, to_bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use heddle_wire::error::AppError;

/// Error bodies are a few hundred bytes; anything larger is left alone.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Maps a 500 carrying an [`AppError`] to that error's own status.
pub async fn correct_error_status(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(error) = serde_json::from_slice::<AppError>(&bytes)
        && let Ok(status) = StatusCode::from_u16(error.status_code())
    {
        parts.status = status;
    }
    Response::from_parts(parts, Body::from(bytes))
}
