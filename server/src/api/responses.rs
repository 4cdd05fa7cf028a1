//! Typed success answers whose status is part of the contract (201, 202,
//! a download), so the handler's signature says what the OpenAPI document
//! says, and neither can drift from the other.

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{MediaType, Operation, Response as ApiResponse, SchemaObject, StatusCode};
use axum::Json;
use axum::http::{StatusCode as Status, header};
use axum::response::{IntoResponse, Response};
use heddle_engine::GraphDocument;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;

/// 201 Created, with the thing created as JSON.
pub struct Created<T>(pub T);

/// 202 Accepted, with the queued thing as JSON (a run: watch it on the
/// websocket or poll it).
pub struct Accepted<T>(pub T);

/// A graph document as a file to save: `Content-Disposition: attachment`.
pub struct Download {
    /// The file's name, e.g. `support-bot.heddle.json`.
    pub file: String,
    /// The document in the canonical format.
    pub json: String,
}

impl<T: Serialize> IntoResponse for Created<T> {
    fn into_response(self) -> Response {
        (Status::CREATED, Json(self.0)).into_response()
    }
}

impl<T: Serialize> IntoResponse for Accepted<T> {
    fn into_response(self) -> Response {
        (Status::ACCEPTED, Json(self.0)).into_response()
    }
}

impl IntoResponse for Download {
    fn into_response(self) -> Response {
        (
            [
                (header::CONTENT_TYPE, "application/json".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}\"", self.file),
                ),
            ],
            self.json,
        )
            .into_response()
    }
}

/// The documented JSON response carrying a `T`.
pub fn json_response<T: JsonSchema>(ctx: &mut GenContext, description: &str) -> ApiResponse {
    let json_schema = ctx.schema.subschema_for::<T>();
    ApiResponse {
        description: description.to_string(),
        content: IndexMap::from_iter([(
            "application/json".to_string(),
            MediaType {
                schema: Some(SchemaObject {
                    json_schema,
                    example: None,
                    external_docs: None,
                }),
                ..Default::default()
            },
        )]),
        ..Default::default()
    }
}

/// `response` as the operation's only one with `status` (`None`: the
/// default response).
pub fn only(
    status: Option<u16>,
    response: Option<ApiResponse>,
) -> Vec<(Option<StatusCode>, ApiResponse)> {
    response
        .map(|response| vec![(status.map(StatusCode::Code), response)])
        .unwrap_or_default()
}

impl<T: JsonSchema> OperationOutput for Created<T> {
    type Inner = T;

    fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<ApiResponse> {
        Some(json_response::<T>(ctx, "Created"))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<StatusCode>, ApiResponse)> {
        only(Some(201), Self::operation_response(ctx, operation))
    }
}

impl<T: JsonSchema> OperationOutput for Accepted<T> {
    type Inner = T;

    fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<ApiResponse> {
        Some(json_response::<T>(ctx, "Accepted: queued"))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<StatusCode>, ApiResponse)> {
        only(Some(202), Self::operation_response(ctx, operation))
    }
}

impl OperationOutput for Download {
    type Inner = GraphDocument;

    fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<ApiResponse> {
        Some(json_response::<GraphDocument>(
            ctx,
            "The graph document, as a file to save",
        ))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<StatusCode>, ApiResponse)> {
        only(Some(200), Self::operation_response(ctx, operation))
    }
}
