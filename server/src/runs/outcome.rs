//! What a caller from outside the editor gets back from a run: waiting
//! for it to stop (within a time limit), its result for people and
//! programs (the answer, the final state, what a pause asks and how to
//! answer it), and its events as they happen. The invoke endpoint and the
//! OpenAI-compatible chat endpoint both use these.

use heddle_engine::ids::RunId;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use heddle_engine::ThreadId;
use heddle_engine::model::ChatMessage;
use heddle_engine::run::{Event, InterruptWhen, RunStatus};
use heddle_wire::error::AppError;
use heddle_wire::runs::RunInfo;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Runs;
use super::follow::{self, Follower, Gone};
use super::manager::internal;

/// A run's result as the invoke endpoint answers it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Outcome {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    /// The version it ran (for calls from outside: the published one).
    pub graph_version: i64,
    pub status: RunStatus,
    /// The answer, for graphs that chat: the last assistant message's
    /// text (so far, when paused).
    pub answer: Option<String>,
    /// The final state, when it finished.
    pub output: Option<Value>,
    pub error: Option<String>,
    /// When paused: what it asks, and how to answer.
    pub paused: Option<Paused>,
    /// Where to read the run (poll it while it is queued or running).
    pub run_url: String,
    /// Its event log.
    pub events_url: String,
}

/// What a paused run waits for.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Paused {
    pub asks: Vec<Ask>,
    /// How to answer: this request, with the answer as `resume`.
    pub resume: ResumeHow,
}

/// One node's question (or a breakpoint).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ask {
    pub node: String,
    pub when: InterruptWhen,
    /// What the node asks (`null` for a breakpoint).
    pub payload: Value,
}

/// A request that answers a pause.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResumeHow {
    pub method: String,
    pub path: String,
    pub body: Value,
}

/// Follows a run, handing nothing over, to learn when it stops.
struct Quiet;

impl Follower for Quiet {
    fn next(&self) -> u64 {
        // Past any event: only the run's stop is of interest.
        i64::MAX as u64
    }

    async fn event(&mut self, _: &Arc<Event>, _: Option<&Utf8Bytes>) -> Result<(), Gone> {
        Ok(())
    }

    async fn failed(&mut self, _: &str) -> Result<(), Gone> {
        Err(Gone)
    }
}

/// Waits until run `run_id` stops executing (finished, paused, failed or
/// cancelled), at most `within`; its record then.
pub async fn wait(runs: &Runs, run_id: &RunId, within: Duration) -> Result<RunInfo, AppError> {
    // A timeout only ends the waiting: the run goes on.
    let _ = tokio::time::timeout(within, follow::stream(runs, run_id, &mut Quiet)).await;
    runs.record(run_id).await
}

/// The outcome of a run, from its record (and, when paused, its newest
/// checkpoint).
pub async fn outcome(runs: &Runs, run: RunInfo) -> Result<Outcome, AppError> {
    let mut answer = run.output.as_ref().and_then(ChatMessage::final_answer);
    let paused = if run.status == RunStatus::Interrupted {
        let latest = runs
            .store()
            .latest(&ThreadId::from(run.thread_id.as_str()))
            .await
            .map_err(internal("cannot read a paused run"))?;
        latest.map(|checkpoint| {
            answer = ChatMessage::final_answer(&checkpoint.state);
            Paused {
                asks: checkpoint
                    .interrupts
                    .into_iter()
                    .map(|interrupt| Ask {
                        node: interrupt.node.to_string(),
                        when: interrupt.when,
                        payload: interrupt.payload,
                    })
                    .collect(),
                resume: ResumeHow {
                    method: "POST".into(),
                    path: format!("/api/v1/graphs/{}/invoke", run.graph_id),
                    body: json!({"thread_id": run.thread_id, "resume": "<the answer>"}),
                },
            }
        })
    } else {
        None
    };
    Ok(Outcome {
        run_url: format!("/api/v1/runs/{}", run.id),
        events_url: format!("/api/v1/runs/{}/events", run.id),
        run_id: run.id,
        thread_id: run.thread_id,
        graph_version: run.graph_version,
        status: run.status,
        answer,
        output: run.output,
        error: run.error,
        paused,
    })
}

/// Hands a run's events on to a channel, in order.
struct Forward {
    next: u64,
    out: mpsc::Sender<Streamed>,
}

impl Follower for Forward {
    fn next(&self) -> u64 {
        self.next
    }

    async fn event(&mut self, event: &Arc<Event>, _: Option<&Utf8Bytes>) -> Result<(), Gone> {
        if event.seq < self.next {
            return Ok(());
        }
        self.next = event.seq + 1;
        self.out
            .send(Streamed::Event(Arc::clone(event)))
            .await
            .map_err(|_| Gone)
    }

    async fn failed(&mut self, message: &str) -> Result<(), Gone> {
        tracing::warn!(message, "a followed run's events could not be read");
        Err(Gone)
    }
}

/// What [`events`] hands over: the run's events, then its outcome.
pub enum Streamed {
    Event(Arc<Event>),
    Outcome(Box<Outcome>),
    Failed(AppError),
}

/// Run `run_id`'s events from the first as they happen, then its outcome
/// once it stops. The stream ends when the receiver is dropped.
pub fn events(runs: Runs, run_id: RunId) -> mpsc::Receiver<Streamed> {
    let (sender, receiver) = mpsc::channel::<Streamed>(256);
    tokio::spawn(async move {
        let mut forward = Forward {
            next: 0,
            out: sender.clone(),
        };
        if follow::stream(&runs, &run_id, &mut forward).await.is_err() && sender.is_closed() {
            return;
        }
        let last = match runs.record(&run_id).await {
            Ok(run) => outcome(&runs, run)
                .await
                .map_or_else(Streamed::Failed, |outcome| {
                    Streamed::Outcome(Box::new(outcome))
                }),
            Err(error) => Streamed::Failed(error),
        };
        let _ = sender.send(last).await;
    });
    receiver
}

/// Each engine event as an SSE event named by its type (`node_started`,
/// `custom`, ...) with its `seq` as the id; then `outcome`, or `error`.
pub fn sse(
    events: mpsc::Receiver<Streamed>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let stream = futures_util::stream::unfold(events, |mut events| async move {
        let next = events.recv().await?;
        let sse = match next {
            Streamed::Event(event) => {
                let value = serde_json::to_value(&*event).unwrap_or(Value::Null);
                let kind = value
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("event")
                    .to_string();
                SseEvent::default()
                    .event(kind)
                    .id(event.seq.to_string())
                    .data(value.to_string())
            }
            Streamed::Outcome(outcome) => SseEvent::default()
                .event("outcome")
                .data(serde_json::to_string(&outcome).unwrap_or_else(|_| "null".into())),
            Streamed::Failed(error) => SseEvent::default().event("error").data(
                json!({"error": {"code": error.code(), "message": error.to_string()}}).to_string(),
            ),
        };
        Some((Ok(sse), events))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
