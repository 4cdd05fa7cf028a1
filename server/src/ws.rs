//! The live websocket (`GET /api/v1/ws`): clients subscribe to runs from a
//! sequence number and get the stored events after it, then the live ones,
//! with no gap and no duplicate at the seam; they can also watch a graph
//! to hear when its runs start, pause and end.
//!
//! Messages are JSON text frames. Client to server:
//! `{"type": "subscribe", "run_id": "...", "from_seq": 0}`,
//! `{"type": "unsubscribe", "run_id": "..."}`,
//! `{"type": "watch_graph", "graph_id": "..."}`, `{"type": "ping"}`.
//! Server to client: `{"type": "event", "event": {...}}` (an engine event,
//! with its `run_id` and `seq`), `{"type": "caught_up", "run_id", "next_seq"}`
//! (the replay is done; what follows is live), `{"type": "run_idle",
//! "run_id", "status", "next_seq"}` (the run is not executing now: finished,
//! paused, or stopped), `{"type": "notice", ...}` for watched graphs,
//! `{"type": "error", "message"}` and `{"type": "pong"}`. A node's streamed
//! tokens arrive batched: `{"type": "tokens", "run_id", "node", "text",
//! "first_seq", "last_seq"}` stands for the token events `first_seq` to
//! `last_seq` (see `batch`).
//!
//! A slow client never slows a run: its subscription falls behind the live
//! stream and catches up from the run's log. The server pings every 20 s
//! and closes a connection silent for 60 s, and closes every socket
//! cleanly on shutdown. A client that reconnects subscribes again from the
//! last `seq` it saw plus one.

mod batch;

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use heddle_engine::RunId;
use heddle_engine::run::CheckpointStore;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

use self::batch::{Batcher, Gone};
use crate::runs::Runs;
use crate::state::AppState;

const PING_EVERY: Duration = Duration::from_secs(20);
const SILENCE_LIMIT: Duration = Duration::from_secs(60);
/// The largest message a client may send.
const MAX_CLIENT_MESSAGE: usize = 16 * 1024;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ClientMessage {
    Subscribe {
        run_id: String,
        #[serde(default)]
        from_seq: u64,
    },
    Unsubscribe {
        run_id: String,
    },
    WatchGraph {
        graph_id: String,
    },
    Ping,
}

pub async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_CLIENT_MESSAGE)
        .on_upgrade(move |socket| connection(socket, state))
}

async fn connection(socket: WebSocket, state: AppState) {
    let (mut sink, mut stream) = socket.split();
    let (out, mut outbox) = mpsc::channel::<Message>(1024);
    let mut shutdown = state.shutdown.clone();

    // One writer: everything the client gets goes through `out`.
    let writer = tokio::spawn(async move {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                message = outbox.recv() => match message {
                    Some(message) => {
                        // Write whatever is queued, then flush once: one
                        // syscall for a burst of events, not one each.
                        let mut closing = matches!(message, Message::Close(_));
                        let mut failed = sink.feed(message).await.is_err();
                        while !closing && !failed {
                            let Ok(more) = outbox.try_recv() else { break };
                            closing = matches!(more, Message::Close(_));
                            failed = sink.feed(more).await.is_err();
                        }
                        if failed || sink.flush().await.is_err() || closing {
                            break;
                        }
                    }
                    None => break,
                },
                _ = ping.tick() => {
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = sink.close().await;
    });

    let mut subscriptions: HashMap<String, JoinHandle<()>> = HashMap::new();
    let mut watcher: Option<JoinHandle<()>> = None;
    loop {
        let message = tokio::select! {
            _ = shutdown.changed() => {
                let _ = out
                    .send(Message::Close(Some(CloseFrame {
                        code: close_code::AWAY,
                        reason: Utf8Bytes::from_static("the server is shutting down"),
                    })))
                    .await;
                break;
            }
            message = tokio::time::timeout(SILENCE_LIMIT, stream.next()) => message,
        };
        let message = match message {
            Err(_) => break, // silent too long
            Ok(None) | Ok(Some(Err(_))) => break,
            Ok(Some(Ok(message))) => message,
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => break,
            _ => continue, // pings, pongs, binary: liveness only
        };
        match serde_json::from_str::<ClientMessage>(&text) {
            Ok(ClientMessage::Subscribe { run_id, from_seq }) => {
                if let Some(previous) = subscriptions.remove(&run_id) {
                    previous.abort();
                }
                let task = tokio::spawn(follow(
                    state.runs.clone(),
                    run_id.clone(),
                    from_seq,
                    out.clone(),
                ));
                subscriptions.insert(run_id, task);
            }
            Ok(ClientMessage::Unsubscribe { run_id }) => {
                if let Some(task) = subscriptions.remove(&run_id) {
                    task.abort();
                }
            }
            Ok(ClientMessage::WatchGraph { graph_id }) => {
                if let Some(task) = watcher.take() {
                    task.abort();
                }
                watcher = Some(tokio::spawn(watch_graph(
                    state.runs.notices(),
                    graph_id,
                    out.clone(),
                )));
            }
            Ok(ClientMessage::Ping) => {
                let _ = out.send(text_message(&json!({"type": "pong"}))).await;
            }
            Err(error) => {
                let message = format!("not a message this socket understands: {error}");
                let _ = out
                    .send(text_message(&json!({"type": "error", "message": message})))
                    .await;
            }
        }
    }
    for task in subscriptions.into_values().chain(watcher) {
        task.abort();
    }
    drop(out);
    let _ = writer.await;
}

fn text_message(value: &serde_json::Value) -> Message {
    Message::Text(Utf8Bytes::from(value.to_string()))
}

/// Streams one run's events to the client from `from_seq`: the stored
/// ones, the running execution's backlog, then live (tokens batched).
async fn follow(runs: Runs, run_id: String, from_seq: u64, out: mpsc::Sender<Message>) {
    // Check the run exists (a running one needs no query).
    if runs.hub(&run_id).is_none() && runs.get(&run_id).await.is_err() {
        let message = format!("run {run_id} was not found");
        let _ = out
            .send(text_message(&json!({"type": "error", "message": message})))
            .await;
        return;
    }
    let mut batcher = Batcher::new(out, run_id.clone(), from_seq);
    if stream(&runs, &run_id, &mut batcher).await.is_err() {
        return;
    }
    let status = runs
        .get(&run_id)
        .await
        .map(|run| run.status)
        .unwrap_or_default();
    let next = batcher.next;
    let _ = batcher
        .control(json!({"type": "run_idle", "run_id": run_id, "status": status, "next_seq": next}))
        .await;
}

async fn stream(runs: &Runs, run_id: &str, batcher: &mut Batcher) -> Result<(), Gone> {
    // Subscribe to the live stream before reading the store, so nothing
    // emitted in between is missed.
    let hub = runs.hub(run_id);
    let replay = hub.as_ref().map(|hub| hub.watch(batcher.next));
    let first_live = replay
        .as_ref()
        .and_then(|r| r.first_seq)
        .unwrap_or(u64::MAX);
    if batcher.next < first_live {
        match runs
            .store()
            .events(&RunId::from(run_id), batcher.next)
            .await
        {
            Ok(stored) => {
                for event in stored.iter().take_while(|event| event.seq < first_live) {
                    batcher.event(event, None).await?;
                }
            }
            Err(error) => {
                tracing::error!(run = %run_id, %error, "cannot read stored events");
                return batcher
                    .control(json!({"type": "error", "message": "cannot read the run's events"}))
                    .await;
            }
        }
    }
    let (Some(hub), Some(mut replay)) = (hub, replay) else {
        let next = batcher.next;
        return batcher
            .control(json!({"type": "caught_up", "run_id": run_id, "next_seq": next}))
            .await;
    };
    for frame in &replay.backlog {
        batcher.event(&frame.event, Some(&frame.text)).await?;
    }
    let next = batcher.next;
    batcher
        .control(json!({"type": "caught_up", "run_id": run_id, "next_seq": next}))
        .await?;
    loop {
        let received = match batcher.deadline() {
            Some(deadline) => tokio::select! {
                received = replay.live.recv() => received,
                () = tokio::time::sleep_until(deadline) => {
                    batcher.flush().await?;
                    continue;
                }
            },
            None => replay.live.recv().await,
        };
        match received {
            Ok(frame) => batcher.event(&frame.event, Some(&frame.text)).await?,
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // Fell behind: read what was missed from the log.
                for frame in hub.since(batcher.next) {
                    batcher.event(&frame.event, Some(&frame.text)).await?;
                }
            }
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
    batcher.flush().await
}

async fn watch_graph(
    mut notices: broadcast::Receiver<crate::runs::Notice>,
    graph_id: String,
    out: mpsc::Sender<Message>,
) {
    loop {
        match notices.recv().await {
            Ok(notice) if notice.graph_id == graph_id => {
                let mut value = json!(notice);
                value["type"] = json!("notice");
                if out.send(text_message(&value)).await.is_err() {
                    return;
                }
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
