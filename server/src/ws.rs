//! The live websocket (`GET /api/v1/ws`): clients subscribe to runs from a
//! sequence number and get the stored events after it, then the live ones,
//! with no gap and no duplicate at the seam; they can also watch a graph
//! to hear when its runs start, pause and end.
//!
//! Messages are JSON text frames, typed in `heddle_wire::protocol`
//! (`ClientMessage`, `ServerMessage`, shared with the browser). Client to server:
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
//! Access: only a logged-in user may open the socket (401), and only from
//! this site (403); each subscription needs the viewer role on its graph.
//! When access changes (a link revoked, a member removed, a log-out, a
//! password change), and every 30 s for expiring links, the socket checks
//! again: a subscription that lost access ends with `{"type":
//! "access_revoked", ...}`, and a socket whose session ended closes with
//! code 1008.
//!
//! A slow client never slows a run: its subscription falls behind the live
//! stream and catches up from the run's log. The server pings every 20 s
//! and closes a connection silent for 60 s, and closes every socket
//! cleanly on shutdown. A client that reconnects subscribes again from the
//! last `seq` it saw plus one.

mod batch;

use heddle_engine::ids::RunId;
use heddle_wire::graphs::GraphId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use heddle_store::access::belongs::graph_of_run;
use heddle_store::access::require;
use heddle_store::access_events::AccessChange;
use heddle_store::accounts::session_user;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::error::AppError;
use heddle_wire::protocol::{ClientMessage, RunNotice, ServerMessage};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tower_sessions::Session;
use tower_sessions::session::Id;

use self::batch::Batcher;
use crate::api::error::ApiError;
use crate::auth::{Who, check_origin};
use crate::runs::Runs;
use crate::runs::follow;
use crate::sessions::DbSessions;
use crate::state::AppState;

const PING_EVERY: Duration = Duration::from_secs(20);
const SILENCE_LIMIT: Duration = Duration::from_secs(60);
/// The largest message a client may send.
const MAX_CLIENT_MESSAGE: usize = 16 * 1024;

pub async fn upgrade(
    State(state): State<AppState>,
    who: Who,
    session: Session,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if let Err(reason) = check_origin(&headers, state.settings.public_origin()) {
        return ApiError(AppError::Forbidden(format!(
            "cross-site websocket refused: {reason}"
        )))
        .into_response();
    }
    let user = match who.user() {
        Ok(user) => user.clone(),
        Err(error) => return error.into_response(),
    };
    let viewer = Viewer {
        user,
        session: session.id(),
    };
    ws.max_message_size(MAX_CLIENT_MESSAGE)
        .max_frame_size(MAX_CLIENT_MESSAGE)
        .on_upgrade(move |socket| connection(socket, state, viewer))
}

/// Who holds the socket: the user, and the session they opened it with.
struct Viewer {
    user: User,
    session: Option<Id>,
}

impl Viewer {
    /// Whether the socket's session is still logged in as its user.
    async fn session_valid(&self, state: &AppState) -> bool {
        let Some(id) = self.session else {
            return false;
        };
        let store = Arc::new(DbSessions::new(state.db.clone()));
        let session = Session::new(Some(id), store, None);
        matches!(
            session_user(&state.db, &session).await,
            Ok(Some(user)) if user.id == self.user.id
        )
    }

    /// Whether the user may (still) see `graph_id`; `false` on a storage
    /// error too (access is not granted on doubt).
    async fn can_view(&self, state: &AppState, graph_id: &str) -> bool {
        require(&state.db, Some(&self.user), graph_id, Role::Viewer)
            .await
            .is_ok()
    }
}

/// How often open sockets check access again on their own (share links
/// expire without anyone announcing it).
const RECHECK_EVERY: Duration = Duration::from_secs(30);

async fn connection(socket: WebSocket, state: AppState, viewer: Viewer) {
    // Counted in the metrics while the socket is open.
    let telemetry = std::sync::Arc::clone(state.runs.telemetry());
    let _counted = crate::telemetry::metrics::Viewer::new(&telemetry.metrics().viewers);
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

    // run id -> (its graph, the task streaming it)
    let mut subscriptions: HashMap<RunId, (String, JoinHandle<()>)> = HashMap::new();
    let mut watcher: Option<(String, JoinHandle<()>)> = None;
    let mut access = state.auth.events().subscribe();
    let mut recheck = tokio::time::interval(RECHECK_EVERY);
    recheck.tick().await;
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
            change = access.recv() => {
                let graph = match change {
                    Ok(AccessChange::Graph(graph)) => Some(graph),
                    // Sessions changed, or we missed some news: check all.
                    Ok(AccessChange::Sessions) | Err(broadcast::error::RecvError::Lagged(_)) => None,
                    Err(broadcast::error::RecvError::Closed) => continue,
                };
                if !recheck_access(&state, &viewer, graph.as_deref(), &mut subscriptions, &mut watcher, &out).await {
                    break;
                }
                continue;
            }
            _ = recheck.tick() => {
                if !recheck_access(&state, &viewer, None, &mut subscriptions, &mut watcher, &out).await {
                    break;
                }
                continue;
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
                if let Some((_, previous)) = subscriptions.remove(&run_id) {
                    previous.abort();
                }
                // A run that does not exist and one the viewer may not see
                // get the same answer.
                let graph = match graph_of_run(&state.db, &run_id).await {
                    Ok(graph) if viewer.can_view(&state, &graph).await => graph,
                    _ => {
                        let message = format!("run {run_id} was not found");
                        let _ = out
                            .send(text_message(&ServerMessage::Error { message }))
                            .await;
                        continue;
                    }
                };
                let task = tokio::spawn(follow(
                    state.runs.clone(),
                    run_id.clone(),
                    from_seq,
                    out.clone(),
                ));
                subscriptions.insert(run_id, (graph, task));
            }
            Ok(ClientMessage::Unsubscribe { run_id }) => {
                if let Some((_, task)) = subscriptions.remove(&run_id) {
                    task.abort();
                }
            }
            Ok(ClientMessage::WatchGraph { graph_id }) => {
                if let Some((_, task)) = watcher.take() {
                    task.abort();
                }
                if !viewer.can_view(&state, graph_id.as_str()).await {
                    let message = format!("graph {graph_id} was not found");
                    let _ = out
                        .send(text_message(&ServerMessage::Error { message }))
                        .await;
                    continue;
                }
                // Notices are heard from here on; a run that started before
                // (while the page was loading) is announced once now, so
                // the page follows it all the same.
                let notices = state.runs.notices();
                if let Ok(Some(notice)) =
                    heddle_store::runs::active_notice(&state.db, &graph_id).await
                {
                    let _ = out.send(text_message(&ServerMessage::Notice(notice))).await;
                }
                let task = tokio::spawn(watch_graph(notices, graph_id.clone(), out.clone()));
                watcher = Some((graph_id.to_string(), task));
            }
            Ok(ClientMessage::Ping) => {
                let _ = out.send(text_message(&ServerMessage::Pong)).await;
            }
            Err(error) => {
                let message = format!("not a message this socket understands: {error}");
                let _ = out
                    .send(text_message(&ServerMessage::Error { message }))
                    .await;
            }
        }
    }
    for (_, task) in subscriptions.into_values().chain(watcher) {
        task.abort();
    }
    drop(out);
    let _ = writer.await;
}

/// Checks the socket's access again (for `graph` only, or everything):
/// subscriptions that lost it end with an `access_revoked` message.
/// Returns `false` when the session itself ended: the socket must close.
async fn recheck_access(
    state: &AppState,
    viewer: &Viewer,
    graph: Option<&str>,
    subscriptions: &mut HashMap<RunId, (String, JoinHandle<()>)>,
    watcher: &mut Option<(String, JoinHandle<()>)>,
    out: &mpsc::Sender<Message>,
) -> bool {
    if graph.is_none() && !viewer.session_valid(state).await {
        for (_, task) in subscriptions
            .drain()
            .map(|(_, entry)| entry)
            .chain(watcher.take())
        {
            task.abort();
        }
        let _ = out
            .send(Message::Close(Some(CloseFrame {
                code: close_code::POLICY,
                reason: Utf8Bytes::from_static("the session ended; log in again"),
            })))
            .await;
        return false;
    }
    let concerned = |of: &str| graph.is_none_or(|graph| graph == of);
    let mut lost = Vec::new();
    for (run_id, (of, _)) in subscriptions.iter() {
        if concerned(of) && !viewer.can_view(state, of).await {
            lost.push(run_id.clone());
        }
    }
    for run_id in lost {
        if let Some((graph_id, task)) = subscriptions.remove(&run_id) {
            task.abort();
            let _ = out
                .send(text_message(&ServerMessage::AccessRevoked {
                    run_id: Some(run_id),
                    graph_id: GraphId::from_stored(graph_id),
                    message: "your access to this graph ended".into(),
                }))
                .await;
        }
    }
    let watched_lost = match watcher.as_ref() {
        Some((of, _)) => concerned(of) && !viewer.can_view(state, of).await,
        None => false,
    };
    if watched_lost && let Some((graph_id, task)) = watcher.take() {
        task.abort();
        let _ = out
            .send(text_message(&ServerMessage::AccessRevoked {
                run_id: None,
                graph_id: GraphId::from_stored(graph_id),
                message: "your access to this graph ended".into(),
            }))
            .await;
    }
    true
}

fn text_message(message: &ServerMessage) -> Message {
    Message::Text(Utf8Bytes::from(message.to_text()))
}

/// Streams one run's events to the client from `from_seq`: the stored
/// ones, the running execution's backlog, then live (tokens batched).
async fn follow(runs: Runs, run_id: RunId, from_seq: u64, out: mpsc::Sender<Message>) {
    // Check the run exists (a running one needs no query).
    if runs.hub(&run_id).is_none() && runs.status(&run_id).await.is_err() {
        let message = format!("run {run_id} was not found");
        let _ = out
            .send(text_message(&ServerMessage::Error { message }))
            .await;
        return;
    }
    let mut batcher = Batcher::new(out, run_id.clone(), from_seq, runs.clone());
    if follow::stream(&runs, &run_id, &mut batcher).await.is_err() {
        return;
    }
    let status = runs.status(&run_id).await.ok();
    let next = batcher.next;
    let _ = batcher
        .control(ServerMessage::RunIdle {
            run_id,
            status,
            next_seq: next,
        })
        .await;
}

async fn watch_graph(
    mut notices: broadcast::Receiver<RunNotice>,
    graph_id: GraphId,
    out: mpsc::Sender<Message>,
) {
    loop {
        match notices.recv().await {
            Ok(notice) if notice.graph_id == graph_id => {
                let message = ServerMessage::Notice(notice);
                if out.send(text_message(&message)).await.is_err() {
                    return;
                }
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
