//! `POST /api/v1/graphs/{id}/invoke`: run a graph's published version and
//! get its result in one call, the way other services call an agent
//! (docs/deploy-agents.md). It waits for the run to stop, up to
//! `wait_seconds`: 200 with the outcome when it finished, failed or
//! paused, 202 with where to poll when it is still running. With
//! `"stream": true` (or `Accept: text/event-stream`) the run's events
//! come as server-sent events, the outcome last. A paused run is answered
//! by invoking again with its `thread_id` and the answer as `resume`.
//!
//! Users call it with a session, scripts with an API key; either way it
//! runs the published version, never the draft.

use heddle_engine::ids::ThreadId;
use std::time::Duration;

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as ApiResponse, StatusCode};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use heddle_store::access::{require_thread, require_thread_to_run, require_to_run};
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunInfo, StartRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::params::GraphPath;
use super::responses::Accepted;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::runs::outcome::{self, Outcome};
use crate::state::AppState;

/// How long a call waits for the run by default, and at most.
const DEFAULT_WAIT_SECONDS: u32 = 30;
const MAX_WAIT_SECONDS: u32 = 300;

/// What to run, and how to answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeRequest {
    /// The run's input: channel values. A string for a `messages`
    /// channel is a user message.
    #[serde(default)]
    pub input: Value,
    /// The thread to run on: a conversation goes on where it was (only a
    /// thread this caller may use); a new one when absent.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// The answer to the paused run on `thread_id`: resumes it instead
    /// of starting a run.
    #[serde(default)]
    pub resume: Option<Value>,
    /// How long to wait for the run to stop, in seconds (0 to 300; 30 by
    /// default). 0 answers at once with where to poll.
    #[serde(default = "default_wait")]
    pub wait_seconds: u32,
    /// Stream the run's events as server-sent events, the outcome last.
    #[serde(default)]
    pub stream: bool,
}

fn default_wait() -> u32 {
    DEFAULT_WAIT_SECONDS
}

/// The answer: the outcome (200 when the run stopped, 202 while it runs),
/// or its events as they happen. Webhooks answer the same way.
pub enum InvokeAnswer {
    Stopped(Json<Outcome>),
    Running(Accepted<Outcome>),
    Stream(Response),
}

impl InvokeAnswer {
    /// The answer for `run` as it stands: 200 once it stopped, 202 while
    /// it is queued or running.
    pub async fn of(runs: &crate::runs::Runs, run: RunInfo) -> Result<InvokeAnswer, ApiError> {
        let stopped = !run.status.is_active();
        let outcome = outcome::outcome(runs, run).await?;
        Ok(match stopped {
            true => InvokeAnswer::Stopped(Json(outcome)),
            false => InvokeAnswer::Running(Accepted(outcome)),
        })
    }
}

impl IntoResponse for InvokeAnswer {
    fn into_response(self) -> Response {
        match self {
            InvokeAnswer::Stopped(outcome) => outcome.into_response(),
            InvokeAnswer::Running(outcome) => outcome.into_response(),
            InvokeAnswer::Stream(response) => response,
        }
    }
}

impl OperationOutput for InvokeAnswer {
    type Inner = Outcome;

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<StatusCode>, ApiResponse)> {
        let mut responses = Json::<Outcome>::inferred_responses(ctx, operation);
        // Asked for a stream, the 200 is server-sent events (the engine's
        // events, then `outcome`), each described as its fields.
        for (_, response) in &mut responses {
            response.content.insert(
                "text/event-stream".to_string(),
                aide::openapi::MediaType {
                    schema: Some(aide::openapi::SchemaObject {
                        json_schema: schemars::json_schema!({
                            "type": "object",
                            "properties": {
                                "event": {"type": "string", "description": "the engine event's type, or `outcome` last"},
                                "id": {"type": "string", "description": "the event's sequence number"},
                                "data": {"type": "string", "description": "the event (or the outcome) as JSON"}
                            },
                            "required": ["data"]
                        }),
                        example: None,
                        external_docs: None,
                    }),
                    ..Default::default()
                },
            );
        }
        responses.extend(Accepted::<Outcome>::inferred_responses(ctx, operation));
        responses
    }
}

pub async fn invoke(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<InvokeRequest>,
) -> Result<InvokeAnswer, ApiError> {
    let allowed = require_to_run(&state.db, &who.0, &id).await?;
    if request.wait_seconds > MAX_WAIT_SECONDS {
        return Err(ApiError(AppError::InvalidInput(format!(
            "`wait_seconds`: 0 to {MAX_WAIT_SECONDS}, not {}",
            request.wait_seconds
        ))));
    }
    let run = match request.resume {
        Some(value) => {
            let thread_id = request.thread_id.ok_or_else(|| {
                ApiError(AppError::InvalidInput(
                    "`thread_id`: a resume names the paused thread".into(),
                ))
            })?;
            let thread = require_thread(&state.db, &who.0, &thread_id, Role::Editor).await?;
            if thread.allowed().graph() != allowed.graph() {
                return Err(ApiError(AppError::InvalidInput(format!(
                    "`thread_id`: thread `{thread_id}` belongs to another graph"
                ))));
            }
            state.runs.resume(&thread, value).await?
        }
        None => {
            if let Some(thread_id) = &request.thread_id {
                require_thread_to_run(&state.db, &who.0, thread_id).await?;
            }
            let start = StartRequest {
                input: request.input,
                thread_id: request.thread_id,
                ..StartRequest::default()
            };
            state.runs.start_published(&allowed, start).await?
        }
    };
    if request.stream || wants_events(&headers) {
        let events = outcome::events(state.runs.clone(), run.id);
        return Ok(InvokeAnswer::Stream(outcome::sse(events).into_response()));
    }
    let wait = Duration::from_secs(u64::from(request.wait_seconds));
    let run = outcome::wait(&state.runs, &run.id, wait).await?;
    InvokeAnswer::of(&state.runs, run).await
}

/// Whether the caller asked for server-sent events.
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}
