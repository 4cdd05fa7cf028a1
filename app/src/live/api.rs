//! The run endpoints the page calls from the browser: start (with an
//! input, on a thread, up to a node), stop, resume a pause, fork from a
//! step, and read a graph's runs and threads and a run's events. Errors are
//! the server's messages.

use serde_json::{Value, json};

use super::StartOptions;

/// Sends `body` to `url` with `method`; the answer, or the error's message.
async fn send(method: &str, url: &str, body: Option<&Value>) -> Result<Value, String> {
    let request = match method {
        "GET" => gloo_net::http::Request::get(url).build(),
        _ => gloo_net::http::Request::post(url).json(body.unwrap_or(&json!({}))),
    }
    .map_err(|error| error.to_string())?;
    let response = request
        .send()
        .await
        .map_err(|error| format!("could not reach the server: {error}"))?;
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if response.ok() {
        return Ok(answer);
    }
    Err(answer["error"]["message"].as_str().map_or_else(
        || format!("the server answered {}", response.status()),
        str::to_string,
    ))
}

/// Starts a run of the graph; the new run's id and thread.
pub async fn start_run(graph_id: &str, options: StartOptions) -> Result<(String, String), String> {
    let mut body = json!({"input": options.input, "interrupt_before": options.stop_before});
    if let Some(thread) = options.thread {
        body["thread_id"] = json!(thread);
    }
    let run = send(
        "POST",
        &format!("/api/v1/graphs/{graph_id}/runs"),
        Some(&body),
    )
    .await?;
    Ok(ids(&run))
}

fn ids(run: &Value) -> (String, String) {
    let field = |name: &str| run[name].as_str().unwrap_or_default().to_string();
    (field("id"), field("thread_id"))
}

/// Stops a run.
pub async fn cancel_run(run_id: &str) -> Result<(), String> {
    send("POST", &format!("/api/v1/runs/{run_id}/cancel"), None)
        .await
        .map(drop)
}

/// Answers a paused thread.
pub async fn resume(thread_id: &str, value: Value) -> Result<(), String> {
    send(
        "POST",
        &format!("/api/v1/threads/{thread_id}/resume"),
        Some(&json!({"value": value})),
    )
    .await
    .map(drop)
}

/// Forks a run before `step` with `edits`, at `start_at` when given; the
/// new run's id and thread.
pub async fn fork(
    run_id: &str,
    step: u32,
    edits: serde_json::Map<String, Value>,
    start_at: Option<String>,
) -> Result<(String, String), String> {
    let run = send(
        "POST",
        &format!("/api/v1/runs/{run_id}/fork"),
        Some(&json!({"step": step, "edits": edits, "start_at": start_at})),
    )
    .await?;
    Ok(ids(&run))
}

/// A run's record (its thread, status, output).
pub async fn run(run_id: &str) -> Result<Value, String> {
    send("GET", &format!("/api/v1/runs/{run_id}"), None).await
}

/// The graph's threads, newest first.
pub async fn threads(graph_id: &str) -> Result<Vec<Value>, String> {
    let list = send("GET", &format!("/api/v1/graphs/{graph_id}/threads"), None).await?;
    Ok(list.as_array().cloned().unwrap_or_default())
}

/// A thread's messages, by channel.
pub async fn thread(thread_id: &str) -> Result<Value, String> {
    send("GET", &format!("/api/v1/threads/{thread_id}"), None).await
}

/// The graph's runs, newest first.
pub async fn runs(graph_id: &str) -> Result<Vec<Value>, String> {
    let list = send("GET", &format!("/api/v1/graphs/{graph_id}/runs"), None).await?;
    Ok(list.as_array().cloned().unwrap_or_default())
}

/// A run's stored events, in order.
pub async fn events(run_id: &str) -> Result<Vec<heddle_engine::run::Event>, String> {
    let list = send("GET", &format!("/api/v1/runs/{run_id}/events"), None).await?;
    serde_json::from_value(list).map_err(|error| format!("unreadable events: {error}"))
}
