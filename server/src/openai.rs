//! The OpenAI-compatible endpoints, `POST /v1/chat/completions` and
//! `GET /v1/models`: any OpenAI client talks to a Heddle agent by pointing
//! its base URL at `<heddle>/v1` with an API key (docs/deploy-agents.md).
//!
//! `model` names a published chat graph (one with a `messages` channel),
//! by id or, when unique among those the caller may run, by name. Without
//! a thread each request is a new conversation: its messages are the
//! run's input. With one (the `X-Heddle-Thread` header, or the request's
//! `user`, which names a thread of that caller's own) the thread holds the
//! history, so only the messages after the last assistant reply are added;
//! a thread paused for a person takes the new user message as its answer.
//! The reply is the graph's answer, streamed as chunks when asked; the
//! run and thread ids come back in `X-Heddle-Run` and `X-Heddle-Thread`.
//! A reply that is not streamed carries `usage`: the tokens of all the
//! run's model calls. Tools a client offers (`tools`, `functions`) are
//! refused with a 400, never silently ignored.

use heddle_engine::ids::ThreadId;
use std::convert::Infallible;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use heddle_engine::run::{EventPayload, RunStatus};
use heddle_engine::usage::UsageTotals;
use heddle_store::access::{
    Allowed, Principal, require_thread, require_thread_to_run, require_to_run,
};
use heddle_store::caller::Caller;
use heddle_store::graphs;
use heddle_store::publishing;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunInfo, StartRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::api::error::{ApiError, ApiJson};
use crate::auth::Who;
use crate::runs::outcome::{self, Outcome, Streamed};
use crate::state::AppState;

/// How long a request waits for the agent's reply.
const REPLY_WITHIN: Duration = Duration::from_secs(300);

/// The header naming the thread a conversation goes on in.
const THREAD_HEADER: &str = "x-heddle-thread";
/// The header naming the run that answered.
const RUN_HEADER: &str = "x-heddle-run";

/// The endpoints, under `/v1`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat_completions))
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::api::MAX_BODY_BYTES,
        ))
}

/// A chat graph the caller may run, as a model.
#[derive(Serialize)]
struct Model {
    id: String,
    object: &'static str,
    created: u64,
    owned_by: String,
    /// The graph's name, and the version calls run.
    name: String,
    version: i64,
}

#[derive(Serialize)]
struct ModelList {
    object: &'static str,
    data: Vec<Model>,
}

/// `GET /v1/models`: the published graphs the caller may run.
async fn models(State(state): State<AppState>, who: Who) -> Result<Json<ModelList>, ApiError> {
    let data = runnable(&state, &who.0)
        .await?
        .into_iter()
        .map(|graph| Model {
            id: graph.allowed.graph().to_string(),
            object: "model",
            created: graph.published_at,
            owned_by: graph.allowed.user().username.clone(),
            name: graph.name,
            version: graph.version,
        })
        .collect();
    Ok(Json(ModelList {
        object: "list",
        data,
    }))
}

/// A published graph the caller may run.
struct Runnable {
    allowed: Allowed,
    name: String,
    version: i64,
    published_at: u64,
}

/// The published graphs the caller may run: a key's graphs, or a user's
/// graphs where they are an editor or the owner.
async fn runnable(state: &AppState, caller: &Caller) -> Result<Vec<Runnable>, AppError> {
    let candidates: Vec<String> = match caller {
        Caller::Nobody => return Err(AppError::login_required()),
        Caller::Key(key) => key.graphs().iter().map(ToString::to_string).collect(),
        Caller::User(user) => graphs::list(&state.db, user)
            .await?
            .into_iter()
            .filter(|graph| graph.role.can_edit())
            .map(|graph| graph.id.to_string())
            .collect(),
    };
    let mut found = Vec::new();
    for id in candidates {
        let Ok(allowed) = require_to_run(&state.db, caller, &id).await else {
            continue;
        };
        let Some(publication) = publishing::publication(&state.db, &allowed).await? else {
            continue;
        };
        let detail = graphs::get(&state.db, &allowed).await?;
        found.push(Runnable {
            name: detail.name,
            version: publication.version,
            published_at: unix_seconds(&publication.published_at),
            allowed,
        });
    }
    Ok(found)
}

/// The graph `model` names: an id, or a name unique among those the
/// caller may run.
async fn resolve(state: &AppState, caller: &Caller, model: &str) -> Result<Allowed, AppError> {
    if heddle_wire::graphs::GraphId::parse(model).is_some() {
        return require_to_run(&state.db, caller, model)
            .await
            .map_err(|error| match error {
                AppError::NotFound { .. } | AppError::Gone(_) => unknown_model(model),
                other => other,
            });
    }
    let mut named: Vec<Runnable> = runnable(state, caller)
        .await?
        .into_iter()
        .filter(|graph| graph.name == model)
        .collect();
    match named.len() {
        0 => Err(unknown_model(model)),
        1 => Ok(named.remove(0).allowed),
        _ => Err(AppError::InvalidInput(format!(
            "`model`: {} graphs are named `{model}`; use one's id: {}",
            named.len(),
            named
                .iter()
                .map(|graph| graph.allowed.graph().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn unknown_model(model: &str) -> AppError {
    AppError::InvalidInput(format!(
        "`model`: `{model}` is not a published graph you may run; GET /v1/models lists them"
    ))
}

/// A chat completion request. Sampling settings (`temperature`, ...) are
/// the graph's own and are ignored here; tools a client offers are
/// refused (the agent calls its own).
#[derive(Deserialize)]
struct ChatRequest {
    model: String,
    messages: Vec<InMessage>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    functions: Option<Value>,
    #[serde(default)]
    function_call: Option<Value>,
}

impl ChatRequest {
    /// Refuses tools the client offers: a Heddle agent calls the tools its
    /// graph gives it, and a client's would be silently ignored otherwise.
    fn refuse_client_tools(&self) -> Result<(), ApiError> {
        let offered = [
            ("tools", &self.tools),
            ("tool_choice", &self.tool_choice),
            ("functions", &self.functions),
            ("function_call", &self.function_call),
        ];
        for (field, value) in offered {
            let empty = match value {
                None | Some(Value::Null) => true,
                Some(Value::Array(items)) => items.is_empty(),
                Some(_) => false,
            };
            if !empty {
                return Err(ApiError(AppError::InvalidInput(format!(
                    "`{field}`: a Heddle agent calls the tools its graph gives it; tools sent by \
                     a client are not taken here. Remove `{field}`, or add the tool to the graph \
                     (an `http_request` or MCP tool) and publish it"
                ))));
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct InMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

impl InMessage {
    /// The text: a string, or the text parts of a list of parts.
    fn text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    }
}

/// `POST /v1/chat/completions`.
async fn chat_completions(
    State(state): State<AppState>,
    who: Who,
    headers: HeaderMap,
    ApiJson(request): ApiJson<Value>,
) -> Result<Response, ApiError> {
    let request: ChatRequest = serde_json::from_value(request).map_err(|error| {
        ApiError(AppError::InvalidInput(format!(
            "not a chat completion request: {error}"
        )))
    })?;
    request.refuse_client_tools()?;
    let caller = &who.0;
    let allowed = resolve(&state, caller, &request.model).await?;
    let messages = messages(&request.messages)?;
    let thread = thread_of(caller, &headers, request.user.as_deref())?;
    let run = match &thread {
        Some(thread_id) => {
            require_thread_to_run(&state.db, caller, thread_id).await?;
            go_on(
                &state,
                caller,
                &allowed,
                thread_id,
                &request.messages,
                messages,
            )
            .await?
        }
        None => start(&state, &allowed, None, messages).await?,
    };
    let model = request.model.clone();
    let ids = [
        (RUN_HEADER, run.id.to_string()),
        (THREAD_HEADER, run.thread_id.to_string()),
    ];
    let mut response = if request.stream {
        let chunks = chunks(
            outcome::events(state.runs.clone(), run.id.clone()),
            run.id.to_string(),
            model,
        );
        Sse::new(chunks)
            .keep_alive(KeepAlive::default())
            .into_response()
    } else {
        let run = outcome::wait(&state.runs, &run.id, REPLY_WITHIN).await?;
        if run.status.is_active() {
            return Err(ApiError(AppError::Busy {
                message: format!(
                    "the agent did not answer within {} s; run {} goes on (GET /api/v1/runs/{})",
                    REPLY_WITHIN.as_secs(),
                    run.id,
                    run.id
                ),
                retry_after: 5,
            }));
        }
        let usage = run.usage;
        let outcome = outcome::outcome(&state.runs, run).await?;
        Json(completion(&outcome, &model, &usage)?).into_response()
    };
    for (name, value) in ids {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), value);
        }
    }
    Ok(response)
}

/// The request's messages as the graph's `messages` channel holds them.
fn messages(messages: &[InMessage]) -> Result<Vec<Value>, ApiError> {
    if messages.is_empty() {
        return Err(ApiError(AppError::InvalidInput(
            "`messages`: at least one message".into(),
        )));
    }
    messages
        .iter()
        .enumerate()
        .map(|(index, message)| match message.role.as_str() {
            "system" | "developer" | "user" | "assistant" => Ok(json!({
                "role": if message.role == "developer" { "system" } else { message.role.as_str() },
                "content": message.text(),
            })),
            other => Err(ApiError(AppError::InvalidInput(format!(
                "`messages[{index}].role`: `{other}` is not taken here (system, user or assistant); \
                 the agent calls its own tools"
            )))),
        })
        .collect()
}

/// The thread a conversation goes on in: the header's, or one of the
/// caller's own named by `user`; none for a one-off request.
fn thread_of(
    caller: &Caller,
    headers: &HeaderMap,
    user: Option<&str>,
) -> Result<Option<ThreadId>, ApiError> {
    if let Some(value) = headers.get(THREAD_HEADER) {
        let thread = value.to_str().map_err(|_| {
            ApiError(AppError::InvalidInput(format!(
                "`{THREAD_HEADER}` is not readable text"
            )))
        })?;
        return Ok(Some(ThreadId::from(thread)));
    }
    let Some(user) = user.filter(|user| !user.is_empty()) else {
        return Ok(None);
    };
    // Each caller's `user` values name threads of its own: two keys
    // sending the same `user` never share a conversation.
    let owner = match caller {
        Caller::Key(key) => format!("key:{}", key.id),
        Caller::User(user) => format!("user:{}", user.id.as_str()),
        Caller::Nobody => return Err(ApiError(AppError::login_required())),
    };
    let digest: String = Sha256::digest(format!("{owner}\n{user}").as_bytes())
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(Some(ThreadId::from(format!("chat-{digest}"))))
}

/// Starts a run of the published version with `messages` as its input.
async fn start(
    state: &AppState,
    allowed: &Allowed,
    thread_id: Option<ThreadId>,
    messages: Vec<Value>,
) -> Result<RunInfo, ApiError> {
    let request = StartRequest {
        input: json!({ "messages": messages }),
        thread_id,
        ..StartRequest::default()
    };
    state
        .runs
        .start_published(allowed, request)
        .await
        .map_err(|error| match error {
            AppError::InvalidInput(why) if why.contains("input.messages") => {
                ApiError(AppError::InvalidInput(format!(
                    "`model`: graph {} is not a chat graph: {why}",
                    allowed.graph()
                )))
            }
            other => ApiError(other),
        })
}

/// Goes on in a thread: a paused one takes the last user message as its
/// answer; otherwise the messages after the last assistant reply start a
/// run (the thread holds what came before).
async fn go_on(
    state: &AppState,
    caller: &Caller,
    allowed: &Allowed,
    thread_id: &ThreadId,
    sent: &[InMessage],
    messages: Vec<Value>,
) -> Result<RunInfo, ApiError> {
    let newest = heddle_store::runs::newest_of_thread(&state.db, thread_id).await?;
    let paused = match newest {
        Some((run_id, ..)) => state.runs.status(&run_id).await? == RunStatus::Interrupted,
        None => false,
    };
    if paused {
        let answer = sent
            .iter()
            .rev()
            .find(|message| message.role == "user")
            .map(InMessage::text)
            .ok_or_else(|| {
                ApiError(AppError::InvalidInput(
                    "`messages`: the conversation is waiting for an answer; send it as a user message"
                        .into(),
                ))
            })?;
        let thread =
            require_thread(&state.db, Principal::from(caller), thread_id, Role::Editor).await?;
        if thread.allowed().graph() != allowed.graph() {
            return Err(ApiError(AppError::InvalidInput(format!(
                "thread `{thread_id}` belongs to another graph"
            ))));
        }
        return Ok(state.runs.resume(&thread, Value::String(answer)).await?);
    }
    let after_reply = sent
        .iter()
        .rposition(|message| message.role == "assistant")
        .map_or(0, |last| last + 1);
    let new: Vec<Value> = messages.into_iter().skip(after_reply).collect();
    if new.is_empty() {
        return Err(ApiError(AppError::InvalidInput(
            "`messages`: nothing after the last assistant message to answer".into(),
        )));
    }
    start(state, allowed, Some(thread_id.clone()), new).await
}

/// A whole reply.
fn completion(outcome: &Outcome, model: &str, usage: &UsageTotals) -> Result<Value, ApiError> {
    if let Some(error) = failure(outcome) {
        return Err(ApiError(error));
    }
    Ok(json!({
        // What the run's model calls used, all of them (an agent may call
        // its model several times for one reply).
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        },
        "id": format!("chatcmpl-{}", outcome.run_id),
        "object": "chat.completion",
        "created": now_seconds(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": reply_text(outcome)},
            "finish_reason": "stop",
            "logprobs": null,
        }],
    }))
}

/// Why a stopped run gives no reply: it failed or was cancelled.
fn failure(outcome: &Outcome) -> Option<AppError> {
    match outcome.status {
        RunStatus::Failed => Some(AppError::Gone(format!(
            "the agent's run {} failed: {}",
            outcome.run_id,
            outcome.error.as_deref().unwrap_or("no reason given")
        ))),
        RunStatus::Cancelled => Some(AppError::Gone(format!(
            "the agent's run {} was cancelled",
            outcome.run_id
        ))),
        _ => None,
    }
}

/// What the reply says: the answer, or what a paused run asks.
fn reply_text(outcome: &Outcome) -> String {
    if let Some(paused) = &outcome.paused {
        let asks: Vec<&str> = paused
            .asks
            .iter()
            .filter_map(|ask| ask.payload.get("prompt").and_then(Value::as_str))
            .collect();
        if !asks.is_empty() {
            return asks.join("\n");
        }
    }
    outcome.answer.clone().unwrap_or_default()
}

/// The run's tokens as chat-completion chunks, then the rest of the
/// answer (when no node streamed it), a last chunk and `[DONE]`.
fn chunks(
    events: tokio::sync::mpsc::Receiver<Streamed>,
    run_id: String,
    model: String,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    struct Chunks {
        events: tokio::sync::mpsc::Receiver<Streamed>,
        id: String,
        model: String,
        created: u64,
        streamed: bool,
        done: bool,
        pending: std::collections::VecDeque<SseEvent>,
    }
    let chunk = |chunks: &Chunks, delta: Value, finish: Value| {
        SseEvent::default().data(
            json!({
                "id": chunks.id,
                "object": "chat.completion.chunk",
                "created": chunks.created,
                "model": chunks.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
            })
            .to_string(),
        )
    };
    let mut start = Chunks {
        events,
        id: format!("chatcmpl-{run_id}"),
        model,
        created: now_seconds(),
        streamed: false,
        done: false,
        pending: Default::default(),
    };
    let first = chunk(
        &start,
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    );
    start.pending.push_back(first);
    futures_util::stream::unfold(start, move |mut chunks| async move {
        loop {
            if let Some(event) = chunks.pending.pop_front() {
                return Some((Ok(event), chunks));
            }
            if chunks.done {
                return None;
            }
            match chunks.events.recv().await {
                Some(Streamed::Event(event)) => {
                    // The answer streams: a sub-agent's or a subgraph's
                    // own words are not it, nor those of a fan-out's
                    // instances (they stream side by side).
                    if let EventPayload::Custom {
                        name,
                        data,
                        instance: None,
                        ..
                    } = &event.payload
                        && name == "token"
                        && !event.is_nested()
                        && let Some(text) = data.get("text").and_then(Value::as_str)
                    {
                        chunks.streamed = true;
                        let next = chunk(&chunks, json!({"content": text}), Value::Null);
                        chunks.pending.push_back(next);
                    }
                }
                Some(Streamed::Outcome(outcome)) => {
                    chunks.done = true;
                    if let Some(error) = failure(&outcome) {
                        chunks.pending.push_back(error_event(&error));
                        continue;
                    }
                    if !chunks.streamed || outcome.paused.is_some() {
                        let text = reply_text(&outcome);
                        let rest = chunk(&chunks, json!({"content": text}), Value::Null);
                        chunks.pending.push_back(rest);
                    }
                    let last = chunk(&chunks, json!({}), json!("stop"));
                    chunks.pending.push_back(last);
                    chunks.pending.push_back(SseEvent::default().data("[DONE]"));
                }
                Some(Streamed::Failed(error)) => {
                    chunks.done = true;
                    chunks.pending.push_back(error_event(&error));
                }
                None => return None,
            }
        }
    })
}

/// An error in a stream, as OpenAI clients read one.
fn error_event(error: &AppError) -> SseEvent {
    SseEvent::default().data(
        json!({"error": {"message": error.to_string(), "type": error.code(), "code": error.code()}})
            .to_string(),
    )
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Seconds since 1970 of a stored timestamp.
fn unix_seconds(stored: &str) -> u64 {
    heddle_store::db::unix_seconds(stored)
        .and_then(|seconds| u64::try_from(seconds).ok())
        .unwrap_or(0)
}
