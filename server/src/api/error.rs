//! How the HTTP API answers errors: JSON with a stable code, a message,
//! and for graph problems the JSON paths; the status says whose fault it
//! is (400, 404, 409, 413, 415, 422) and a 500 only ever means ours.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use heddle_engine::validate::Problem;
use heddle_wire::error::AppError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

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

/// The body of every error under `/api/v1`: `{"error": {...}}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorDetail {
    /// A stable code: `not_found`, `invalid_input`, `invalid_graph`,
    /// `conflict`, `missing_credentials`, `unauthorized`, `forbidden`,
    /// `too_large`, `unsupported_media_type`, `method_not_allowed`,
    /// `too_many_requests`, `gone`, `busy`, `internal`.
    pub code: String,
    /// What went wrong, for people, saying where (a JSON path, a node id).
    pub message: String,
    /// `invalid_graph`: every problem, located.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<Problem>>,
    /// `missing_credentials`: the secrets the graph names that the caller
    /// has not saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_credentials: Option<Vec<String>>,
    /// `conflict`: the version the save was based on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_version: Option<i64>,
    /// `conflict`: the newest stored version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
}

impl ErrorBody {
    /// An error with only a code and a message.
    pub fn new(code: &str, message: String) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message,
                problems: None,
                missing_credentials: None,
                base_version: None,
                current_version: None,
            },
        }
    }

    /// The response: this body with `status`.
    pub fn respond(self, status: StatusCode) -> Response {
        (status, Json(self)).into_response()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = self.0;
        let status =
            StatusCode::from_u16(error.status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = error.retry_after();
        let mut body = ErrorBody::new(error.code(), error.to_string());
        match error {
            AppError::InvalidGraph { problems, .. } => body.error.problems = Some(problems),
            AppError::MissingCredentials { names } => body.error.missing_credentials = Some(names),
            AppError::Conflict {
                base_version,
                current_version,
            } => {
                body.error.base_version = Some(base_version);
                body.error.current_version = Some(current_version);
            }
            _ => {}
        }
        let mut response = body.respond(status);
        if let Some(seconds) = retry_after {
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
    ErrorBody::new(code, message).respond(status)
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
