//! The browser's end of the live websocket: watch a graph, follow its
//! newest run, and keep a [`RunView`] signal current. Runs a teammate
//! starts are joined as they start; losing access (a revoked link) or the
//! session is reported, and the socket stops.

use futures::{SinkExt, StreamExt};
use gloo_net::websocket::Message;
use gloo_net::websocket::futures::WebSocket;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Value, json};

use super::{Link, RunView};

/// What the page follows.
#[derive(Clone, Debug, PartialEq)]
pub enum Follow {
    /// The graph's runs as they happen: `first`, a run already going when
    /// the page opened, then every run started later.
    Live { first: Option<String> },
    /// One run, replayed from its log up to a step (a shared link).
    Replay { run: String, step: u32 },
}

/// Watches `graph_id` as `follow` says, into `view`.
pub fn watch(graph_id: String, follow: Follow, view: RwSignal<RunView>, link: RwSignal<Link>) {
    let url = match socket_url() {
        Some(url) => url,
        None => return,
    };
    spawn_local(async move {
        let Ok(socket) = WebSocket::open(&url) else {
            let _ = link.try_set(Link::Closed);
            return;
        };
        let (mut sink, mut stream) = socket.split();
        let send = |value: Value| Message::Text(value.to_string());
        if sink
            .send(send(json!({"type": "watch_graph", "graph_id": graph_id})))
            .await
            .is_err()
        {
            let _ = link.try_set(Link::Closed);
            return;
        }
        let (first, live) = match &follow {
            Follow::Live { first } => (first.clone().map(|run| (RunView::of(&run), run)), true),
            Follow::Replay { run, step } => {
                (Some((RunView::at_step(run, *step), run.clone())), false)
            }
        };
        if let Some((start, run)) = first {
            let _ = view.try_set(start);
            let _ = sink
                .send(send(
                    json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
                ))
                .await;
        }
        let _ = link.try_set(Link::Live);
        while let Some(message) = stream.next().await {
            let Ok(Message::Text(text)) = message else {
                break;
            };
            let Ok(message) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            match message["type"].as_str().unwrap_or_default() {
                "event" => {
                    let applied = view.try_update(|view| view.apply(&message["event"]));
                    if applied.is_none() {
                        return; // the page is gone
                    }
                }
                "notice" if live => {
                    let run = message["run_id"].as_str().unwrap_or_default().to_string();
                    let current = view
                        .try_with_untracked(|view| view.run_id.clone())
                        .flatten();
                    let new_run =
                        message["status"] == "running" && current.as_deref() != Some(run.as_str());
                    if new_run {
                        if let Some(old) = current {
                            let _ = sink
                                .send(send(json!({"type": "unsubscribe", "run_id": old})))
                                .await;
                        }
                        // `try_set` hands the value back when the page is gone.
                        if view.try_set(RunView::of(&run)).is_some() {
                            return;
                        }
                        let _ = sink
                            .send(send(
                                json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
                            ))
                            .await;
                    }
                }
                "access_revoked" => {
                    let _ = link.try_set(Link::Revoked);
                    return;
                }
                _ => {}
            }
        }
        let _ = link.try_set(Link::Closed);
    });
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

/// POSTs `body` to `url`; the error's message when the server refuses.
async fn post(url: &str, body: &Value) -> Result<(), String> {
    let response = gloo_net::http::Request::post(url)
        .json(body)
        .map_err(|error| error.to_string())?
        .send()
        .await
        .map_err(|error| format!("could not reach the server: {error}"))?;
    if response.ok() {
        return Ok(());
    }
    let body: Value = response.json().await.unwrap_or(Value::Null);
    Err(body["error"]["message"].as_str().map_or_else(
        || format!("the server answered {}", response.status()),
        str::to_string,
    ))
}

/// Starts a run of the graph with an empty input.
pub async fn start_run(graph_id: &str) -> Result<(), String> {
    post(
        &format!("/api/v1/graphs/{graph_id}/runs"),
        &json!({"input": {}}),
    )
    .await
}

/// Stops a run.
pub async fn cancel_run(run_id: &str) -> Result<(), String> {
    post(&format!("/api/v1/runs/{run_id}/cancel"), &json!({})).await
}
