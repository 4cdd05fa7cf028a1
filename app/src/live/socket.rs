//! The browser's end of the live websocket: watch a graph, follow its
//! newest run (or replay one), and keep the page's [`Watch`] current.
//!
//! Messages are not applied as they arrive: they wait in a buffer that is
//! drained once per animation frame, so a burst of a thousand events costs
//! one update of the page, not a thousand, and a busy run never freezes
//! it. Runs a teammate starts are joined as they start; losing access (a
//! revoked link) or the session is reported, and the socket stops.

use heddle_engine::ids::RunId;
use heddle_engine::ids::ThreadId;
use heddle_wire::graphs::GraphId;
use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{SinkExt, StreamExt};
use gloo_net::websocket::Message;
use gloo_net::websocket::futures::WebSocket;
use heddle_engine::run::{Event, RunStatus};
use heddle_wire::runs::RunOrigin;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::protocol::{ClientMessage, RunNotice, ServerMessage};
use super::{Link, TokenChunk, Watch};

/// What the page follows.
#[derive(Clone, Debug, PartialEq)]
pub enum Follow {
    /// The graph's runs as they happen: `first`, the run the page opened
    /// on (one already going, else the last one started from the editor),
    /// then every run started later.
    Live { first: Option<RunId> },
    /// One run, replayed from its log, shown at a step (a shared link).
    Replay { run: RunId, step: Option<u32> },
}

/// A message waiting for the next frame.
enum Incoming {
    Event(std::sync::Arc<Event>),
    Tokens(TokenChunk),
    /// The state the run's first event builds on.
    Base(serde_json::Map<String, serde_json::Value>),
    /// Another run to follow from now on.
    Switch {
        run: RunId,
        thread: Option<ThreadId>,
    },
}

/// The messages of one frame, and whether a frame is asked for.
#[derive(Default)]
struct Batch {
    waiting: Vec<Incoming>,
    scheduled: bool,
}

thread_local! {
    /// Where runs this page starts are told to the page's socket.
    static STARTED: RefCell<Option<UnboundedSender<(RunId, ThreadId)>>> =
        const { RefCell::new(None) };
    /// Runs started before the socket was set up (the page asks the server
    /// for the graph's active run first): handed to it when it is.
    /// Each with its graph: only that graph's page follows it.
    static PENDING: RefCell<Vec<(GraphId, RunId, ThreadId)>> = const { RefCell::new(Vec::new()) };
}

/// A run this page just started: a live page follows it at once, as it
/// would on the server's notice (which a socket still opening can miss,
/// and which a run already paused by then never sends).
pub fn follow_started(graph: GraphId, run: RunId, thread: ThreadId) {
    STARTED.with(|started| match started.borrow().as_ref() {
        Some(sender) => {
            let _ = sender.unbounded_send((run, thread));
        }
        None => PENDING.with(|pending| pending.borrow_mut().push((graph, run, thread))),
    });
}

/// Watches `graph_id` as `follow` says, into `watch`.
pub fn watch(graph_id: String, follow: Follow, watch: Watch) {
    let Some(url) = socket_url() else {
        return;
    };
    // The page's address names the graph; one that is not a graph id has
    // no runs to watch.
    let Some(graph_id) = GraphId::parse(&graph_id) else {
        return;
    };
    let batch = Rc::new(RefCell::new(Batch::default()));
    // Runs started here, as the notices they will cause.
    let (sender, started) = unbounded::<(RunId, ThreadId)>();
    // A run started while the page was still opening goes first (one of
    // another graph's page, left before it opened, is dropped).
    for (graph, run, thread) in PENDING.with(|pending| std::mem::take(&mut *pending.borrow_mut())) {
        if graph == graph_id {
            let _ = sender.unbounded_send((run, thread));
        }
    }
    STARTED.with(|slot| *slot.borrow_mut() = Some(sender));
    let started_here = {
        let graph_id = graph_id.clone();
        started.map(move |(run_id, thread_id)| {
            Ok::<_, gloo_net::websocket::WebSocketError>(Message::Text(
                serde_json::to_string(&ServerMessage::Notice(RunNotice {
                    graph_id: graph_id.clone(),
                    run_id,
                    thread_id,
                    status: RunStatus::Running,
                    origin: RunOrigin::App,
                }))
                .unwrap_or_default(),
            ))
        })
    };
    spawn_local(async move {
        let Ok(socket) = WebSocket::open(&url) else {
            let _ = watch.link.try_set(Link::Closed);
            return;
        };
        let (mut sink, stream) = socket.split();
        // The server's messages, and this page's own starts among them;
        // `None` once the server's end closes.
        let server = stream
            .map(Some)
            .chain(futures::stream::once(async { None }));
        let stream = futures::stream::select(server, started_here.map(Some));
        let mut stream = std::pin::pin!(stream);
        let send = |message: ClientMessage| Message::Text(message.to_text());
        if sink
            .send(send(ClientMessage::WatchGraph { graph_id }))
            .await
            .is_err()
        {
            let _ = watch.link.try_set(Link::Closed);
            return;
        }
        let (first, live, at) = match &follow {
            Follow::Live { first } => (first.clone(), true, None),
            Follow::Replay { run, step } => (Some(run.clone()), false, *step),
        };
        let mut current = first.clone();
        // Where the current run's subscription ended (the server said the
        // run went idle: finished or paused); `None` while it is live.
        let mut idle_at: Option<u64> = None;
        if let Some(run) = first {
            watch.reset(&run, None);
            if at.is_some() {
                watch.cursor.set(at);
            }
            let _ = sink
                .send(send(ClientMessage::Subscribe {
                    run_id: run,
                    from_seq: 0,
                }))
                .await;
        }
        let _ = watch.link.try_set(Link::Live);
        while let Some(Some(message)) = stream.next().await {
            let Ok(Message::Text(text)) = message else {
                break;
            };
            // A message this page does not know (a newer server's) is skipped.
            let Ok(message) = serde_json::from_str::<ServerMessage>(&text) else {
                continue;
            };
            let incoming = match message {
                ServerMessage::Event { event } => Incoming::Event(event),
                ServerMessage::Base { run_id, state, .. } if current.as_ref() == Some(&run_id) => {
                    Incoming::Base(state)
                }
                ServerMessage::Tokens {
                    node,
                    instance,
                    text,
                    last_seq,
                    ..
                } => Incoming::Tokens(TokenChunk {
                    node,
                    instance,
                    text,
                    last_seq,
                    within: Vec::new(),
                }),
                // An experiment's run: the Evaluations section hears of
                // it; the page goes on following what it followed.
                ServerMessage::Notice(RunNotice {
                    origin: RunOrigin::Experiment,
                    ..
                }) => {
                    if watch.experiment_runs.try_update(|n| *n += 1).is_none() {
                        return; // the page is gone
                    }
                    continue;
                }
                ServerMessage::Notice(RunNotice {
                    run_id: run,
                    thread_id,
                    status,
                    ..
                }) if live => {
                    if status != RunStatus::Running {
                        continue;
                    }
                    if current.as_ref() == Some(&run) {
                        // The run went on after a pause: its subscription
                        // ended when it paused, so pick it up where it
                        // ended. A subscription still going (the page's
                        // own start and the server's notice both name a
                        // new run) is left alone.
                        let Some(from) = idle_at.take() else {
                            continue;
                        };
                        let _ = sink
                            .send(send(ClientMessage::Subscribe {
                                run_id: run,
                                from_seq: from,
                            }))
                            .await;
                        continue;
                    }
                    idle_at = None;
                    if let Some(old) = current.replace(run.clone()) {
                        let _ = sink
                            .send(send(ClientMessage::Unsubscribe { run_id: old }))
                            .await;
                    }
                    let _ = sink
                        .send(send(ClientMessage::Subscribe {
                            run_id: run.clone(),
                            from_seq: 0,
                        }))
                        .await;
                    Incoming::Switch {
                        run,
                        thread: Some(thread_id),
                    }
                }
                ServerMessage::RunIdle {
                    run_id,
                    status,
                    next_seq,
                } if current.as_ref() == Some(&run_id) => {
                    if status == Some(RunStatus::Running) {
                        // Resumed before its pause's subscription ended:
                        // its notice came and went, so go on now.
                        let _ = sink
                            .send(send(ClientMessage::Subscribe {
                                run_id,
                                from_seq: next_seq,
                            }))
                            .await;
                    } else {
                        idle_at = Some(next_seq);
                    }
                    continue;
                }
                ServerMessage::AccessRevoked { .. } => {
                    let _ = watch.link.try_set(Link::Revoked);
                    return;
                }
                _ => continue,
            };
            if !enqueue(&batch, incoming, watch) {
                return; // the page is gone
            }
        }
        let _ = watch.link.try_set(Link::Closed);
    });
}

/// Queues a message for the next animation frame; `false` when the page
/// is gone.
fn enqueue(batch: &Rc<RefCell<Batch>>, incoming: Incoming, watch: Watch) -> bool {
    if watch.log.try_with_untracked(|_| ()).is_none() {
        return false;
    }
    let mut waiting = batch.borrow_mut();
    waiting.waiting.push(incoming);
    if !waiting.scheduled {
        waiting.scheduled = true;
        let batch = Rc::clone(batch);
        request_animation_frame(move || flush(&batch, watch));
    }
    true
}

/// Applies everything that arrived since the last frame, in one update.
fn flush(batch: &Rc<RefCell<Batch>>, watch: Watch) {
    let waiting = {
        let mut batch = batch.borrow_mut();
        batch.scheduled = false;
        std::mem::take(&mut batch.waiting)
    };
    // Messages before a switch belong to the old run: only the newest
    // switch and what follows it matter.
    let start = waiting
        .iter()
        .rposition(|incoming| matches!(incoming, Incoming::Switch { .. }));
    let mut waiting = waiting.into_iter();
    if let Some(start) = start
        && let Some(Incoming::Switch { run, thread }) = waiting.nth(start)
    {
        if watch.log.try_with_untracked(|_| ()).is_none() {
            return;
        }
        watch.reset(&run, thread);
    }
    let following = watch.cursor.try_get_untracked().flatten().is_none();
    let Some(mut next) = watch.log.try_with_untracked(|log| log.next_seq) else {
        return;
    };
    // What is new, in order; a reconnect's overlap is dropped.
    let fresh: Vec<Incoming> = waiting
        .filter(|incoming| {
            let last = match incoming {
                Incoming::Event(event) => event.seq,
                Incoming::Tokens(chunk) => chunk.last_seq,
                // Before the first event, always kept.
                Incoming::Base(_) => return true,
                Incoming::Switch { .. } => return false,
            };
            let new = last >= next;
            if new {
                next = last + 1;
            }
            new
        })
        .collect();
    if fresh.is_empty() {
        return;
    }
    let events = || {
        fresh.iter().filter_map(|incoming| match incoming {
            Incoming::Event(event) => Some(event.as_ref()),
            _ => None,
        })
    };
    if let Some(status) = events().filter_map(super::status_after).next_back() {
        let _ = watch.status.try_set(Some(status));
    }
    if following {
        watch.view.try_update(|view| {
            for incoming in &fresh {
                match incoming {
                    Incoming::Event(event) => view.apply(event),
                    Incoming::Tokens(chunk) => {
                        view.streamed(&chunk.within, &chunk.node, chunk.instance, &chunk.text)
                    }
                    Incoming::Base(_) | Incoming::Switch { .. } => {}
                }
            }
        });
    }
    // A replay shows a moment: it changes only when events of that moment
    // arrive (while a replay's log loads).
    let at = watch.cursor.try_get_untracked().flatten();
    let moment_changed = !following
        && events().any(|event| super::step_of(event).is_none_or(|step| Some(step) <= at));
    watch.log.try_update(|log| {
        for incoming in fresh {
            match incoming {
                Incoming::Event(event) => {
                    log.push(std::sync::Arc::unwrap_or_clone(event));
                }
                Incoming::Tokens(chunk) => {
                    log.push_tokens(chunk);
                }
                Incoming::Base(state) => log.base = Some(state),
                Incoming::Switch { .. } => {}
            }
        }
    });
    if moment_changed {
        watch.seek(at);
    }
}

/// `ws(s)://<this host>/api/v1/ws`.
fn socket_url() -> Option<String> {
    let location = window().location();
    let scheme = if location.protocol().ok()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    Some(format!("{scheme}://{}/api/v1/ws", location.host().ok()?))
}
