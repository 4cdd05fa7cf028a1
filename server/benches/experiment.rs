//! An experiment on the server's queue (docs/performance.md,
//! "Evaluations"), on the real `heddle` binary with the offline model:
//!
//! ```sh
//! HEDDLE_OFFLINE_PACE_MS=0 cargo bench -p heddle-server --bench experiment [-- EXAMPLES]
//! ```
//!
//! With `HEDDLE_OFFLINE_PACE_MS=5` (a word every 5 ms, about 50 ms a model
//! reply) the runs wait on their model as real ones do, and the window's
//! runs overlap.
//!
//! The ReAct example over EXAMPLES questions (default 1,000): first the
//! same runs started one by one through the API (each invoked and waited
//! for, as a script would), then one experiment with three scorers over a
//! dataset of them; then the experiment again recording every model and
//! tool reply, and once more replayed from that recording (no call goes
//! to the model or a tool). Wall time of each, and the time per example.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Server, json, published};

fn question(index: usize) -> Value {
    json!({"messages": [{"role": "user", "content": format!("What is {index} * 7?")}]})
}

fn react_agent() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/examples/graphs/react_agent.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("the example graph: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the example graph: {e}"))
}

#[tokio::main]
async fn main() {
    let examples: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(1_000);
    // The offline model's pace, as given (0 by default: Heddle's own time).
    let pace = std::env::var("HEDDLE_OFFLINE_PACE_MS").unwrap_or_else(|_| "0".into());
    let server = Server::start_with_env(&[], &[("HEDDLE_OFFLINE_PACE_MS", pace.as_str())]);
    let base = server.base.clone();
    let (graph, secret) = published(&server, react_agent()).await;
    let owner = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"));
    json(
        owner
            .post(format!("{base}/api/v1/auth/login"))
            .json(&json!({"username": "bench", "password": "bench password"})),
        "log in",
    )
    .await;

    // One by one: each run invoked with its key and waited for.
    let key = reqwest::Client::new();
    let started = Instant::now();
    for index in 0..examples {
        let answer = json(
            key.post(format!("{base}/api/v1/graphs/{graph}/invoke"))
                .bearer_auth(&secret)
                .json(&json!({"input": question(index), "wait_seconds": 60})),
            "invoke",
        )
        .await;
        assert_eq!(answer["status"], "finished", "{answer}");
    }
    let one_by_one = started.elapsed();

    // The same questions as a dataset, and one experiment over it.
    let dataset = json(
        owner
            .post(format!("{base}/api/v1/graphs/{graph}/datasets"))
            .json(&json!({"name": "questions"})),
        "a dataset",
    )
    .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for chunk in (0..examples).collect::<Vec<_>>().chunks(1_000) {
        let batch: Vec<Value> = chunk
            .iter()
            .map(|&index| {
                json!({"input": question(index),
                       "reference": {"answer": format!("calculator says {}.", index * 7)}})
            })
            .collect();
        json(
            owner
                .post(format!(
                    "{base}/api/v1/graphs/{graph}/datasets/{dataset}/examples"
                ))
                .json(&json!({ "examples": batch })),
            "examples",
        )
        .await;
    }
    let scorers = json!([
        {"kind": "contains", "name": "answer", "of": "last(output.messages).content",
         "expected": "reference.answer"},
        {"kind": "trajectory", "name": "used the calculator", "tools": [{"name": "calculator"}]},
        {"kind": "threshold", "metric": "tokens", "max": 100000}
    ]);
    let run = |body: Value| {
        let (owner, base, graph) = (owner.clone(), base.clone(), graph.clone());
        async move {
            let started = Instant::now();
            let made = json(
                owner
                    .post(format!("{base}/api/v1/graphs/{graph}/experiments"))
                    .json(&body),
                "an experiment",
            )
            .await;
            let id = made["id"].as_str().unwrap_or_default().to_string();
            let done = loop {
                let now = json(
                    owner.get(format!("{base}/api/v1/graphs/{graph}/experiments/{id}")),
                    "the experiment",
                )
                .await;
                if now["status"] != "running" {
                    break now;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            assert_eq!(done["status"], "finished", "{done}");
            assert_eq!(done["progress"]["scored"], examples as u64, "{done}");
            (started.elapsed(), done)
        }
    };
    let (experiment, done) = run(json!({"dataset_id": dataset, "scorers": scorers})).await;
    // The same, its replies recorded; then replayed from that recording.
    let (recorded_in, recorded) = run(json!({"dataset_id": dataset, "scorers": scorers,
                                            "record_replies": true}))
    .await;
    let (replayed_in, replayed) = run(json!({"dataset_id": dataset, "scorers": scorers,
                                            "replay_from": recorded["id"]}))
    .await;
    assert_eq!(replayed["replies"]["live"], 0, "{replayed}");

    let per = |total: Duration| total.as_secs_f64() * 1_000.0 / examples as f64;
    println!("{examples} ReAct examples on the offline model (a word every {pace} ms), 3 scorers:");
    println!(
        "  runs one by one through the API (invoke, waited for): {:>7.2} s ({:.2} ms an example)",
        one_by_one.as_secs_f64(),
        per(one_by_one)
    );
    println!(
        "  one experiment (queued a window at a time, scored):    {:>7.2} s ({:.2} ms an example)",
        experiment.as_secs_f64(),
        per(experiment)
    );
    println!(
        "  recording every reply:                                 {:>7.2} s ({:.2} ms an example)",
        recorded_in.as_secs_f64(),
        per(recorded_in)
    );
    println!(
        "  replayed from that recording ({} calls, {} live):     {:>7.2} s ({:.2} ms an example)",
        replayed["replies"]["replayed"],
        replayed["replies"]["live"],
        replayed_in.as_secs_f64(),
        per(replayed_in)
    );
    println!(
        "  scores: {}",
        done["scores"]
            .as_array()
            .map(|scores| scores
                .iter()
                .map(|s| format!(
                    "{} {:.2}",
                    s["scorer"].as_str().unwrap_or("?"),
                    s["mean"].as_f64().unwrap_or(0.0)
                ))
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    );
    println!(
        "  latency p50 / p95: {} / {} ms",
        done["latency_p50_ms"], done["latency_p95_ms"]
    );
}
