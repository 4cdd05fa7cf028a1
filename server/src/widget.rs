//! The chat widget's public side: `GET /widget.js` (the script a page
//! embeds), `GET /api/v1/widget/{token}` (its title, colour and greeting)
//! and `POST /api/v1/widget/{token}/messages` (a message; the reply
//! streams back as server-sent events: the words as they come, `token`,
//! then the reply, `reply`, and nothing else of the run).
//!
//! A widget's token is public: what holds it back is the browser's
//! `Origin`, which must be one of the widget's allowed origins (answers
//! carry `Access-Control-Allow-Origin` for it alone), and rate limits per
//! visitor and per widget, counted across servers. The message is sent as
//! `text/plain` JSON (a "simple" request, with no preflight); no cookie is
//! read. Each browser's conversation (an id the script keeps in
//! localStorage) is a thread of the graph, run as the widget's maker.

use heddle_engine::ids::ThreadId;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use heddle_engine::run::{EventPayload, RunStatus};
use heddle_store::access::{Trigger, require_thread, require_trigger};
use heddle_store::accounts::ClientAddress;
use heddle_store::accounts::shared_limit::{self, Limit};
use heddle_store::widgets::{self as widgets, Embedded};
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunOrigin, StartRequest};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::error::ApiError;
use crate::runs::outcome;
use crate::state::AppState;

/// The script, served as it is written.
const SCRIPT: &str = include_str!("../assets/widget.js");

/// Messages one visitor may send: a few at once, then one every 3 s.
const PER_VISITOR: Limit = Limit {
    burst: 10,
    refill: Duration::from_secs(3),
};
/// Messages one widget takes from everyone together.
const PER_WIDGET: Limit = Limit {
    burst: 120,
    refill: Duration::from_millis(500),
};
/// The longest message taken.
const MAX_MESSAGE_CHARS: usize = 4000;

/// The widget's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/widget.js", get(script))
        .route("/api/v1/widget/{token}", get(config))
        .route("/api/v1/widget/{token}/messages", post(message))
}

async fn script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        SCRIPT,
    )
        .into_response()
}

/// An answer for the page at `origin`: readable by it alone.
fn for_origin(origin: Option<&str>, response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    if let Some(value) = origin.and_then(|origin| HeaderValue::from_str(origin).ok()) {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// The widget `token` names, if the page at the request's origin may use
/// it now.
async fn allowed(state: &AppState, token: &str, headers: &HeaderMap) -> Result<Embedded, AppError> {
    let embedded = widgets::by_token(&state.db, token)
        .await?
        .ok_or_else(|| AppError::not_found("this chat"))?;
    if !embedded.widget.enabled {
        return Err(AppError::Gone("this chat is turned off".into()));
    }
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !embedded.widget.allowed_origins.contains(&origin) {
        return Err(AppError::Forbidden(
            "this chat is not available on this site".into(),
        ));
    }
    Ok(embedded)
}

fn origin(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
}

/// What the script needs to draw the chat.
#[derive(Serialize)]
struct Config {
    title: String,
    color: String,
    greeting: Option<String>,
}

/// `GET /api/v1/widget/{token}`.
async fn config(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    let answer = allowed(&state, &token, &headers)
        .await
        .map(|embedded| {
            axum::Json(Config {
                title: embedded.widget.title,
                color: embedded.widget.color,
                greeting: embedded.widget.greeting,
            })
        })
        .map_err(ApiError);
    for_origin(origin(&headers), answer)
}

/// A message from the page.
#[derive(Deserialize)]
struct Message {
    /// The browser's conversation id (16 to 64 letters, digits, `-`, `_`).
    conversation: String,
    message: String,
}

/// `POST /api/v1/widget/{token}/messages`.
async fn message(
    State(state): State<AppState>,
    Path(token): Path<String>,
    client: Option<axum::Extension<ClientAddress>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let visitor = client.and_then(|axum::Extension(ClientAddress(address))| address);
    let answer = reply(&state, &token, &headers, visitor, &body).await;
    for_origin(origin(&headers), answer.map_err(ApiError))
}

async fn reply(
    state: &AppState,
    token: &str,
    headers: &HeaderMap,
    visitor: Option<std::net::IpAddr>,
    body: &[u8],
) -> Result<Response, AppError> {
    let embedded = allowed(state, token, headers).await?;
    let widget = &embedded.widget;
    let visitor = visitor.map_or_else(|| "unknown".to_string(), |ip| ip.to_string());
    for (key, limit) in [
        (format!("widget:{}:{visitor}", widget.id), PER_VISITOR),
        (format!("widget:{}", widget.id), PER_WIDGET),
    ] {
        if let Err(wait) = shared_limit::take(&state.db, &key, limit).await? {
            return Err(AppError::TooManyRequests(format!(
                "too many messages; try again in {} s",
                wait.as_secs().max(1)
            )));
        }
    }
    let message: Message = serde_json::from_slice(body).map_err(|error| {
        AppError::InvalidInput(format!(
            "the body must be {{\"conversation\", \"message\"}}: {error}"
        ))
    })?;
    let conversation_ok = (16..=64).contains(&message.conversation.len())
        && message
            .conversation
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if !conversation_ok {
        return Err(AppError::InvalidInput(
            "`conversation`: 16 to 64 letters, digits, `-` or `_`".into(),
        ));
    }
    let text = message.message.trim();
    if text.is_empty() || text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(AppError::InvalidInput(format!(
            "`message`: 1 to {MAX_MESSAGE_CHARS} characters"
        )));
    }
    let maker = heddle_store::accounts::user_by_id(&state.db, &embedded.created_by)
        .await?
        .ok_or_else(|| AppError::Gone("this chat is no longer available".into()))?;
    let trigger = Trigger {
        origin: RunOrigin::Widget,
        id: widget.id.clone(),
        name: widget.name.clone(),
    };
    let unavailable = |error: AppError| match error {
        AppError::NotFound { .. } | AppError::Forbidden(_) => {
            AppError::Gone("this chat is no longer available".into())
        }
        other => other,
    };
    let allowed = require_trigger(&state.db, &maker, widget.graph_id.as_str(), trigger)
        .await
        .map_err(unavailable)?;
    let thread_id = ThreadId::from(format!("widget-{}-{}", widget.id, message.conversation));
    let newest = heddle_store::runs::newest_of_thread(&state.db, &thread_id).await?;
    let paused = match newest {
        Some((run_id, ..)) => state.runs.status(&run_id).await? == RunStatus::Interrupted,
        None => false,
    };
    let run = if paused {
        let thread = require_thread(&state.db, &maker, &thread_id, Role::Editor)
            .await
            .map_err(unavailable)?;
        // The conversation's thread is this widget's graph's (a thread of
        // the same name elsewhere is not answered from here).
        if *thread.allowed().graph() != widget.graph_id {
            return Err(AppError::InvalidInput(
                "`conversation`: start a new conversation".into(),
            ));
        }
        state
            .runs
            .resume(&thread, serde_json::Value::String(text.to_string()))
            .await?
    } else {
        let request = StartRequest {
            input: json!({ "messages": text }),
            thread_id: Some(thread_id),
            ..StartRequest::default()
        };
        state
            .runs
            .start_published(&allowed, request)
            .await
            .map_err(|error| match error {
                AppError::ThreadBusy { .. } => {
                    AppError::InvalidInput("wait for the answer to your last message".into())
                }
                // What the graph's editors must fix is theirs to read (in
                // the log), not the visitor's.
                AppError::NotPublished { .. }
                | AppError::InvalidInput(_)
                | AppError::InvalidGraph { .. } => {
                    tracing::warn!(widget = %widget.id, %error, "a chat widget cannot answer");
                    AppError::Gone("this chat is not available right now".into())
                }
                other => other,
            })?
    };
    Ok(visitor_stream(outcome::events(state.runs.clone(), run.id)).into_response())
}

/// What a visitor sees of the run: the words the graph streams (`token`),
/// then its reply (`reply`: the answer, or what a paused graph asks), or
/// `error`. Nothing else of the run (its state, its nodes, tool traffic)
/// leaves the server.
fn visitor_stream(
    events: tokio::sync::mpsc::Receiver<outcome::Streamed>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    let stream = futures_util::stream::unfold(events, |mut events| async move {
        loop {
            let sse = match events.recv().await? {
                outcome::Streamed::Event(event) => match &event.payload {
                    // The answer streams, not a child graph's words nor
                    // those of a fan-out's instances (side by side).
                    EventPayload::Custom {
                        name,
                        data,
                        instance: None,
                        ..
                    } if name == "token" && !event.is_nested() => {
                        let Some(text) = data.get("text").and_then(|text| text.as_str()) else {
                            continue;
                        };
                        SseEvent::default()
                            .event("token")
                            .data(json!({ "text": text }).to_string())
                    }
                    _ => continue,
                },
                outcome::Streamed::Outcome(outcome) => {
                    let asks: Vec<&str> = outcome
                        .paused
                        .iter()
                        .flat_map(|paused| &paused.asks)
                        .filter_map(|ask| ask.payload.get("prompt").and_then(|p| p.as_str()))
                        .collect();
                    let (text, asking) = match asks.is_empty() {
                        true => (outcome.answer.clone().unwrap_or_default(), false),
                        false => (asks.join("\n"), true),
                    };
                    let failed = matches!(outcome.status, RunStatus::Failed | RunStatus::Cancelled);
                    SseEvent::default()
                        .event("reply")
                        .data(json!({"text": text, "asking": asking, "failed": failed}).to_string())
                }
                outcome::Streamed::Failed(_) => SseEvent::default().event("error").data(
                    json!({"error": {"message": "the chat could not answer; try again"}})
                        .to_string(),
                ),
            };
            return Some((Ok(sse), events));
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
