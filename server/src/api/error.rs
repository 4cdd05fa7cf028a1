//! How the HTTP API answers errors: JSON with a stable code, a message,
//! and for graph problems the JSON paths; the status says whose fault it
//! is (400, 404, 409, 413, 415, 422) and a 500 only ever means ours.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use heddle_app::error::AppError;
use serde::de::DeserializeOwned;
use serde_json::json;

/// An API error response.
#[derive(Debug)]
pub struct ApiError(pub AppError);

impl From<AppError> for ApiError {
    fn from(error: AppError) -> Self {
        ApiError(error)
    }
}

impl ApiError {
    /// A 400 with this message.
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError(AppError::InvalidInput(message.into()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = self.0;
        let status =
            StatusCode::from_u16(error.status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut body = json!({
            "code": error.code(),
            "message": error.to_string(),
        });
        match &error {
            AppError::InvalidGraph { problems, .. } => body["problems"] = json!(problems),
            AppError::MissingCredentials { names } => body["missing_credentials"] = json!(names),
            AppError::Conflict {
                base_version,
                current_version,
            } => {
                body["base_version"] = json!(base_version);
                body["current_version"] = json!(current_version);
            }
            _ => {}
        }
        let mut response = (status, Json(json!({ "error": body }))).into_response();
        if let Some(seconds) = error.retry_after() {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// `Json<T>` whose rejections are API errors: a body that is not JSON, is
/// not a JSON object (every endpoint takes one; serde would otherwise
/// read `[]` as a struct), or does not fit, says where; a body over the
/// size limit is a 413.
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let value = match Json::<serde_json::Value>::from_request(request, state).await {
            Ok(Json(value)) => value,
            Err(rejection) => return Err(json_rejection(rejection)),
        };
        if !value.is_object() {
            return Err(ApiError::invalid(format!(
                "the request body must be a JSON object, not {}",
                kind(&value)
            ))
            .into_response());
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|error| {
                let path = error.path().to_string();
                let at = if path == "." {
                    String::new()
                } else {
                    format!("`{path}`: ")
                };
                ApiError::invalid(format!("{at}{}", error.into_inner())).into_response()
            })
    }
}

fn json_rejection(rejection: JsonRejection) -> Response {
    let (status, code) = match &rejection {
        JsonRejection::MissingJsonContentType(_) => {
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
        }
        JsonRejection::BytesRejection(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            (StatusCode::PAYLOAD_TOO_LARGE, "too_large")
        }
        _ => (StatusCode::BAD_REQUEST, "invalid_input"),
    };
    let message = match status {
        StatusCode::PAYLOAD_TOO_LARGE => format!(
            "the request body is larger than {} bytes",
            crate::api::MAX_BODY_BYTES
        ),
        _ => rejection.body_text(),
    };
    (
        status,
        Json(json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
