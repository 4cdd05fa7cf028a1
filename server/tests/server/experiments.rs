//! Experiments over real HTTP: a graph version run over a dataset
//! version, each example an ordinary run scored when it ends; a window of
//! runs at a time within the maker's share (never a 429, and a place kept
//! for the person's own runs); cancel, ceilings, bad requests refused at
//! their field, and who may do what.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::support::{Browser, TestServer, error_message, fake_model};

/// An example of the counting graph: count to `target`; the reference
/// says what the count should come to.
fn count_to(target: u64, reference: u64) -> Value {
    json!({"input": {"target": target}, "reference": {"count": reference},
           "label": format!("to {target}")})
}

fn exact_count() -> Value {
    json!({"kind": "exact", "name": "count", "of": "output.count", "expected": "reference.count"})
}

/// A graph (the counting loop) with a dataset of `examples`; the graph's
/// and the dataset's ids.
async fn graph_with_dataset(server: &TestServer, examples: Vec<Value>) -> (String, String) {
    let graph = server.create_graph(counting_loop(0)).await;
    let dataset = new_dataset(server, &graph, "counts", examples).await;
    (graph, dataset)
}

/// A dataset `name` of `graph` holding `examples`; its id.
pub(crate) async fn new_dataset(
    server: &TestServer,
    graph: &str,
    name: &str,
    examples: Vec<Value>,
) -> String {
    let (status, dataset) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/datasets"),
            Some(json!({ "name": name })),
        )
        .await;
    assert_eq!(status, 201, "{dataset}");
    let dataset = dataset["id"].as_str().unwrap().to_string();
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/datasets/{dataset}/examples"),
            Some(json!({ "examples": examples })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    dataset
}

/// Starts an experiment as `browser`; its id.
pub(crate) async fn start(browser: &Browser, graph: &str, body: Value) -> String {
    let (status, made) = browser
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/experiments"),
            Some(body),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["status"], "running");
    made["id"].as_str().unwrap().to_string()
}

/// Waits (up to 60 s) until the experiment is no longer running.
pub(crate) async fn ended(browser: &Browser, graph: &str, experiment: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = browser
            .api(
                Method::GET,
                &format!("/api/v1/graphs/{graph}/experiments/{experiment}"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        if body["status"] != "running" {
            return body;
        }
        assert!(Instant::now() < deadline, "still running: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn items(browser: &Browser, graph: &str, experiment: &str) -> Vec<Value> {
    let (status, body) = browser
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/experiments/{experiment}/items?limit=500"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn every_example_runs_once_per_repetition_as_an_ordinary_run_and_is_scored() {
    let server = TestServer::start().await;
    // The third reference is wrong: the count scorer's mean is 2/3.
    let (graph, dataset) = graph_with_dataset(
        &server,
        vec![count_to(3, 3), count_to(5, 5), count_to(7, 8)],
    )
    .await;
    let experiment = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "name": "counting v1", "repetitions": 2,
               "scorers": [exact_count(),
                           {"kind": "trajectory", "name": "ticked", "nodes": ["tick"]},
                           // On the offline model: its heuristic, over "5".
                           {"kind": "judge", "name": "judged", "of": "output.count",
                            "rubric": "says \"5\""}]}),
    )
    .await;
    let done = ended(&server.owner, &graph, &experiment).await;
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["graph_version"], 1);
    assert_eq!(done["dataset_version"], 1);
    assert_eq!(done["dataset_name"], "counts");
    assert_eq!(done["progress"]["total"], 6);
    assert_eq!(done["progress"]["scored"], 6);
    let count = &done["scores"][0];
    assert_eq!(count["scorer"], "count");
    assert_eq!(count["count"], 6);
    assert!(
        (count["mean"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{count}"
    );
    assert!(count["stddev"].as_f64().unwrap() > 0.4, "{count}");
    assert_eq!(done["scores"][1]["scorer"], "ticked");
    assert_eq!(done["scores"][1]["mean"], 1.0);
    let judged = &done["scores"][2];
    assert_eq!(judged["scorer"], "judged");
    assert!(
        (judged["mean"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9,
        "{judged}"
    );
    assert!(done["latency_p50_ms"].is_u64() && done["latency_p95_ms"].is_u64());

    let items = items(&server.owner, &graph, &experiment).await;
    assert_eq!(items.len(), 6);
    let mut runs: Vec<&str> = items
        .iter()
        .map(|item| item["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        items
            .iter()
            .map(|item| (
                item["label"].as_str().unwrap(),
                item["repetition"].as_u64().unwrap()
            ))
            .collect::<Vec<_>>(),
        [
            ("to 3", 1),
            ("to 3", 2),
            ("to 5", 1),
            ("to 5", 2),
            ("to 7", 1),
            ("to 7", 2)
        ],
        "in the dataset's order"
    );
    let judge_said = items[0]["scores"][2]["reason"].as_str().unwrap();
    assert!(judge_said.starts_with("offline judge"), "{judge_said}");
    let wrong = &items[4];
    assert_eq!(wrong["scores"][0]["value"], 0.0);
    assert!(
        wrong["scores"][0]["reason"].as_str().unwrap().contains('8'),
        "{wrong}"
    );
    assert_eq!(wrong["output"]["count"], 7);
    // Each is an ordinary run of the graph, labelled with the experiment,
    // and none ran twice.
    runs.sort_unstable();
    runs.dedup();
    assert_eq!(runs.len(), 6);
    let (_, listed) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 6, "no example ran twice");
    for run in listed {
        assert_eq!(run["origin"], "experiment");
        assert_eq!(run["origin_label"], "counting v1");
        assert_eq!(run["status"], "finished");
    }
    let (status, run) = server
        .api(Method::GET, &format!("/api/v1/runs/{}", runs[0]), None)
        .await;
    assert_eq!(status, 200, "{run}");
    // Its threads are its runs' own, not conversations people hold.
    let (status, threads) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/threads"),
            None,
        )
        .await;
    assert_eq!((status, threads), (200, json!([])));

    // Its dataset is not deleted from under it.
    let dataset_path = format!("/api/v1/graphs/{graph}/datasets/{dataset}");
    let (status, refused) = server.api(Method::DELETE, &dataset_path, None).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        error_message(&refused).contains("has experiments"),
        "{refused}"
    );

    // Listed, newest first, and deletable once it ended (its runs stay).
    let (_, list) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/experiments"),
            None,
        )
        .await;
    assert_eq!(list[0]["id"], experiment.as_str());
    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/experiments/{experiment}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (_, runs_after) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(runs_after.as_array().unwrap().len(), 6);
    let (status, _) = server.api(Method::DELETE, &dataset_path, None).await;
    assert_eq!(status, 204, "with its experiment gone, the dataset may go");
}

#[tokio::test]
async fn a_graph_with_an_experiment_is_deleted_with_it() {
    let server = TestServer::start().await;
    let (graph, dataset) = graph_with_dataset(&server, vec![count_to(2, 2)]).await;
    let experiment = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()]}),
    )
    .await;
    ended(&server.owner, &graph, &experiment).await;
    start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()]}),
    )
    .await;
    let (status, body) = server
        .api(Method::DELETE, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 204, "{body}");
    let (status, _) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/experiments"),
            None,
        )
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_experiment_keeps_within_its_makers_share_and_never_meets_a_429() {
    let mut settings = heddle_server::state::Settings::default();
    settings.max_runs_per_user = 2;
    settings.max_runs_per_owner = 3;
    let server = TestServer::start_with_settings(settings).await;
    let examples = (1..=12).map(|n| count_to(25 * n, 25 * n)).collect();
    let (graph, dataset) = graph_with_dataset(&server, examples).await;
    let experiment = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()]}),
    )
    .await;
    // While it runs, its runs never pass its share: at most two at once
    // (the per-starter limit), and the owner's own run still starts (one
    // place of the account's three is kept for them).
    let mut most = 0;
    let mut own_run = None;
    loop {
        let (_, runs) = server
            .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
            .await;
        let active = runs
            .as_array()
            .unwrap()
            .iter()
            .filter(|run| run["origin"] == "experiment")
            .filter(|run| run["status"] == "queued" || run["status"] == "running")
            .count();
        most = most.max(active);
        if own_run.is_none() {
            let (status, run) = server
                .api(
                    Method::POST,
                    &format!("/api/v1/graphs/{graph}/runs"),
                    Some(json!({"input": {"target": 1}})),
                )
                .await;
            assert_eq!(
                status, 202,
                "the owner's own run beside the experiment: {run}"
            );
            own_run = Some(run["id"].as_str().unwrap().to_string());
        }
        let (_, now) = server
            .api(
                Method::GET,
                &format!("/api/v1/graphs/{graph}/experiments/{experiment}"),
                None,
            )
            .await;
        if now["status"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(most <= 2, "{most} of the experiment's runs at once");
    let done = ended(&server.owner, &graph, &experiment).await;
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["progress"]["scored"], 12, "none refused: {done}");
    assert_eq!(done["scores"][0]["mean"], 1.0);
}

#[tokio::test]
async fn cancel_stops_an_experiment_and_its_runs_and_a_ceiling_stops_one_by_itself() {
    let server = TestServer::start().await;
    let examples = (0..20).map(|_| count_to(10_000_000, 1)).collect();
    let (graph, dataset) = graph_with_dataset(&server, examples).await;
    let experiment = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()]}),
    )
    .await;
    let base = format!("/api/v1/graphs/{graph}/experiments/{experiment}");
    // Its first window of runs gets going.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, runs) = server
            .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
            .await;
        if runs
            .as_array()
            .unwrap()
            .iter()
            .any(|run| run["status"] == "running")
        {
            break;
        }
        assert!(Instant::now() < deadline, "nothing started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, cancelled) = server
        .api(Method::POST, &format!("{base}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["progress"]["skipped"], 20, "{cancelled}");
    let (status, again) = server
        .api(Method::POST, &format!("{base}/cancel"), None)
        .await;
    assert_eq!(status, 400, "{again}");
    assert!(
        error_message(&again).contains("cancelled already"),
        "{again}"
    );
    // Every run it started ends cancelled; no new one starts.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, runs) = server
            .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
            .await;
        let runs = runs.as_array().unwrap().clone();
        assert!(!runs.is_empty() && runs.len() <= 8, "{} runs", runs.len());
        if runs.iter().all(|run| run["status"] == "cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "runs still going: {runs:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A ceiling of 1 token on a chat graph (the offline model counts its
    // words as tokens): the experiment stops by itself after its first
    // window, skipping the rest.
    let chat = server.create_graph(crate::invoke::chat_graph()).await;
    let (_, made) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{chat}/datasets"),
            Some(json!({"name": "questions"})),
        )
        .await;
    let questions = made["id"].as_str().unwrap().to_string();
    let asked: Vec<Value> = (0..30)
        .map(|n| json!({"input": {"messages": [{"role": "user", "content": format!("question {n}")}]}}))
        .collect();
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{chat}/datasets/{questions}/examples"),
            Some(json!({ "examples": asked })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let capped = start(
        &server.owner,
        &chat,
        json!({"dataset_id": questions, "max_tokens": 1,
               "scorers": [{"kind": "threshold", "metric": "tokens", "max": 1000000}]}),
    )
    .await;
    let done = ended(&server.owner, &chat, &capped).await;
    assert_eq!(done["status"], "stopped", "{done}");
    assert!(
        done["stop_reason"]
            .as_str()
            .unwrap()
            .contains("past its ceiling of 1"),
        "{done}"
    );
    assert!(done["tokens"].as_u64().unwrap() >= 1);
    assert!(done["progress"]["skipped"].as_u64().unwrap() > 0, "{done}");
    let ran = done["progress"]["scored"].as_u64().unwrap();
    assert!(ran <= 8, "{ran} runs scored past a ceiling of one token");
}

#[tokio::test]
async fn bad_experiments_are_refused_at_their_field() {
    let server = TestServer::start().await;
    let (graph, dataset) = graph_with_dataset(&server, vec![count_to(1, 1)]).await;
    let path = format!("/api/v1/graphs/{graph}/experiments");
    let cases = [
        (
            json!({"dataset_id": "nope", "scorers": [exact_count()]}),
            "`dataset_id`",
        ),
        (json!({"dataset_id": dataset, "scorers": []}), "`scorers`"),
        (
            json!({"dataset_id": dataset, "scorers": [{"kind": "regex", "pattern": "("}]}),
            "`scorers[0].pattern`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [exact_count(), exact_count()]}),
            "`scorers[1]`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [{"kind": "nope"}]}),
            "`scorers[0]`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [exact_count()], "repetitions": 11}),
            "`repetitions`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [exact_count()], "max_cost_usd": -1.0}),
            "`max_cost_usd`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [exact_count()], "dataset_version": 9}),
            "`dataset_version`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [exact_count()], "name": ""}),
            "`name`",
        ),
        // A judge on a model this server does not have, and a script that
        // does not compile: refused before anything runs.
        (
            json!({"dataset_id": dataset, "scorers": [{"kind": "judge", "rubric": "Polite.",
                                                        "model": "gpt-nowhere"}]}),
            "`scorers[0].model`: no model `gpt-nowhere`",
        ),
        (
            json!({"dataset_id": dataset, "scorers": [{"kind": "script", "source": "let = ;"}]}),
            "`scorers[0].source`",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = server.api(Method::POST, &path, Some(body.clone())).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(error_message(&answer).contains(field), "{body}: {answer}");
    }
    let (status, answer) = server
        .api(
            Method::POST,
            &path,
            Some(json!({"dataset_id": dataset, "scorers": [exact_count()], "graph_version": 7})),
        )
        .await;
    assert_eq!(status, 404, "a version that does not exist: {answer}");
    let (_, list) = server.api(Method::GET, &path, None).await;
    assert_eq!(list, json!([]), "nothing was made");
}

#[tokio::test]
async fn an_account_runs_at_most_three_experiments_at_once() {
    let server = TestServer::start().await;
    let (graph, dataset) = graph_with_dataset(&server, vec![count_to(10_000_000, 1)]).await;
    let path = format!("/api/v1/graphs/{graph}/experiments");
    let body = json!({"dataset_id": dataset, "scorers": [exact_count()]});
    let mut running = Vec::new();
    for _ in 0..3 {
        running.push(start(&server.owner, &graph, body.clone()).await);
    }
    let (status, refused) = server.api(Method::POST, &path, Some(body.clone())).await;
    assert_eq!(status, 429, "{refused}");
    assert!(
        error_message(&refused).contains("the limit is 3"),
        "{refused}"
    );
    // One cancelled frees its place.
    let (status, _) = server
        .api(Method::POST, &format!("{path}/{}/cancel", running[0]), None)
        .await;
    assert_eq!(status, 200);
    start(&server.owner, &graph, body).await;
    for id in &running[1..] {
        server
            .api(Method::POST, &format!("{path}/{id}/cancel"), None)
            .await;
    }
}

#[tokio::test]
async fn a_viewer_reads_a_stranger_sees_nothing_and_a_key_runs_and_cancels_its_own() {
    let server = TestServer::start().await;
    let examples = (0..10).map(|_| count_to(10_000_000, 1)).collect();
    let (graph, dataset) = graph_with_dataset(&server, examples).await;
    let body = json!({"dataset_id": dataset, "scorers": [exact_count()]});
    let base = format!("/api/v1/graphs/{graph}/experiments");

    // A key that may run and read the graph starts one, reads it, and
    // cancels it; not one someone else started.
    // A key that may only run the graph may not start one: an experiment
    // names any version, drafts included.
    let runner = server.owner.key_client("run", &[&graph]).await;
    let (status, refused) = runner.api(Method::POST, &base, Some(body.clone())).await;
    assert_eq!(status, 403, "{refused}");
    let key = server.owner.key_client("read", &[&graph]).await;
    let (status, made) = key.api(Method::POST, &base, Some(body.clone())).await;
    assert_eq!(status, 201, "{made}");
    let by_key = format!("{base}/{}", made["id"].as_str().unwrap());
    let owners = start(&server.owner, &graph, body.clone()).await;
    let owners = format!("{base}/{owners}");
    let (status, refused) = key
        .api(Method::POST, &format!("{owners}/cancel"), None)
        .await;
    assert_eq!(status, 403, "{refused}");
    let (status, read) = key.api(Method::GET, &owners, None).await;
    assert_eq!(status, 200, "{read}");
    let (status, cancelled) = key
        .api(Method::POST, &format!("{by_key}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");

    let writes = [
        (Method::POST, base.clone(), Some(body.clone())),
        (Method::POST, format!("{owners}/cancel"), None),
        (Method::DELETE, by_key.clone(), None),
    ];
    let reads = [
        (Method::GET, base.clone(), None),
        (Method::GET, owners.clone(), None),
        (Method::GET, format!("{owners}/items"), None),
    ];
    server
        .viewer_reads_and_strangers_see_nothing(&graph, &reads, &writes)
        .await;
    let (_, still) = server.api(Method::GET, &owners, None).await;
    assert_eq!(
        still["status"], "running",
        "nothing a viewer tried stopped it"
    );
    let (status, _) = server
        .api(Method::POST, &format!("{owners}/cancel"), None)
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_server_killed_mid_experiment_loses_no_example_and_runs_none_twice() {
    use crate::support::{Killed, serve_process, test_database};
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let env = [("HEDDLE_LEASE_SECONDS", "1")];
    let (first, addr) = serve_process(dir.path(), &url, &[], &env).await;
    let mut first = Killed(first);
    let owner = Browser::new(addr);
    owner.sign_up("owner").await;
    let (status, graph) = owner
        .api(
            Method::POST,
            "/api/v1/graphs/import",
            Some(counting_loop(0)),
        )
        .await;
    assert_eq!(status, 201, "{graph}");
    let graph = graph["id"].as_str().unwrap().to_string();
    let (_, dataset) = owner
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/datasets"),
            Some(json!({"name": "counts"})),
        )
        .await;
    let dataset = dataset["id"].as_str().unwrap().to_string();
    let examples: Vec<Value> = (1..=16).map(|n| count_to(300 + n, 300 + n)).collect();
    let (status, body) = owner
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/datasets/{dataset}/examples"),
            Some(json!({ "examples": examples })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let experiment = start(
        &owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()]}),
    )
    .await;

    // Killed once some examples are scored and others are going.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let items = items(&owner, &graph, &experiment).await;
        let scored = items
            .iter()
            .filter(|item| item["status"] == "scored")
            .count();
        if scored >= 3 {
            assert!(scored < 16, "the experiment ended before the kill");
            break;
        }
        assert!(Instant::now() < deadline, "nothing scored");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    first.0.kill().unwrap();
    first.0.wait().unwrap();

    // A new process on the same database goes on with it.
    let (second, addr) = serve_process(dir.path(), &url, &[], &env).await;
    let _second = Killed(second);
    let owner = Browser::new(addr);
    owner.log_in("owner").await;
    let done = ended(&owner, &graph, &experiment).await;
    assert_eq!(done["status"], "finished", "{done}");
    let failed: Vec<Value> = items(&owner, &graph, &experiment)
        .await
        .into_iter()
        .filter(|item| item["status"] != "scored")
        .collect();
    assert_eq!(
        done["progress"]["scored"], 16,
        "{done}\nnot scored: {failed:?}"
    );
    assert_eq!(done["scores"][0]["mean"], 1.0, "{done}");
    let items = items(&owner, &graph, &experiment).await;
    let mut runs: Vec<&str> = items
        .iter()
        .map(|item| item["run_id"].as_str().unwrap())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    assert_eq!(runs.len(), 16);
    let (_, listed) = owner
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    let mut listed: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["id"].as_str().unwrap().to_string())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, runs, "one run per example, none twice, none lost");
}

#[tokio::test]
async fn the_gate_publishes_only_a_version_that_scores_no_worse_than_the_live_one() {
    let server = TestServer::start().await;
    let (graph, dataset) = graph_with_dataset(
        &server,
        vec![count_to(3, 3), count_to(5, 5), count_to(7, 7)],
    )
    .await;
    let gate = format!("/api/v1/graphs/{graph}/publish-gate");
    let publish = |version: i64| {
        let path = format!("/api/v1/graphs/{graph}/published");
        let server = &server;
        async move {
            server
                .api(Method::PUT, &path, Some(json!({ "version": version })))
                .await
        }
    };
    let (status, none) = server.api(Method::GET, &gate, None).await;
    assert_eq!((status, none), (200, Value::Null));
    let (status, set) = server
        .api(
            Method::PUT,
            &gate,
            Some(json!({"dataset_id": dataset, "tolerances": {"count": 0.1}})),
        )
        .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["dataset_version"], 1);
    assert_eq!(set["dataset_name"], "counts");
    for bad in [
        json!({"dataset_id": dataset, "tolerances": {"count": 2.0}}),
        json!({"dataset_id": "nope"}),
    ] {
        let (status, refused) = server.api(Method::PUT, &gate, Some(bad.clone())).await;
        assert_eq!(status, 400, "{bad}: {refused}");
    }

    // Nothing scored: nothing goes live.
    let (status, refused) = publish(1).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "publish_refused");
    assert!(
        error_message(&refused).contains("run an experiment of version 1"),
        "{refused}"
    );
    let body = json!({"dataset_id": dataset, "scorers": [exact_count()]});
    let first = start(&server.owner, &graph, body.clone()).await;
    ended(&server.owner, &graph, &first).await;
    let (status, live) = publish(1).await;
    assert_eq!(status, 200, "{live}");

    // Version 2 counts by two: it overshoots every odd target.
    let mut document = counting_loop(0);
    document["nodes"][1]["config"]["values"]["count"]["value"] = json!(2);
    let (status, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": document})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["version"], 2);
    let (status, refused) = publish(2).await;
    assert_eq!(status, 409, "not scored yet: {refused}");
    let second = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [exact_count()], "graph_version": 2}),
    )
    .await;
    let scored = ended(&server.owner, &graph, &second).await;
    assert_eq!(scored["scores"][0]["mean"], 0.0, "{scored}");
    let (status, refused) = publish(2).await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        error_message(&refused).contains("`count` 0.00 against 1.00 (tolerance 0.10)"),
        "{refused}"
    );
    let (_, still) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/published"),
            None,
        )
        .await;
    assert_eq!(still["published"]["version"], 1, "the live version stays");

    // Its dataset is not deleted while it gates.
    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/datasets/{dataset}"),
            None,
        )
        .await;
    assert_eq!(status, 400);

    // A viewer reads the gate and does not change it; a key neither.
    server
        .viewer_reads_and_strangers_see_nothing(
            &graph,
            &[(Method::GET, gate.clone(), None)],
            &[
                (
                    Method::PUT,
                    gate.clone(),
                    Some(json!({"dataset_id": dataset})),
                ),
                (Method::DELETE, gate.clone(), None),
            ],
        )
        .await;
    let key = server.owner.key_client("read", &[&graph]).await;
    let (status, refused) = key
        .api(Method::PUT, &gate, Some(json!({"dataset_id": dataset})))
        .await;
    assert_eq!(status, 403, "{refused}");

    // Without the gate, the worse version may go live.
    let (status, _) = server.api(Method::DELETE, &gate, None).await;
    assert_eq!(status, 204);
    let (status, live) = publish(2).await;
    assert_eq!(status, 200, "{live}");
}

#[tokio::test]
async fn a_replayed_experiment_asks_the_model_nothing_and_scores_the_same() {
    use std::sync::atomic::Ordering;
    // The graph's model answers; asked for a verdict, the judge's does.
    let (endpoint, calls) = fake_model(|body| {
        if body["response_format"]["json_schema"]["name"] == "verdict" {
            json!({"score": 0.9, "reason": "names the window"}).to_string()
        } else {
            "Refunds take 14 days.".into()
        }
    })
    .await;
    let config = heddle_engine::model::openai::OpenAiConfig::new(endpoint, "fake-model");
    let registry = heddle_engine::Registry::new()
        .with_default_model(heddle_engine::model::openai::OpenAiModel::new(config));
    let server = TestServer::start_with_registry(registry).await;
    let graph = server.create_graph(crate::invoke::chat_graph()).await;
    let asked = |question: &str| {
        json!({"input": {"messages": [{"role": "user", "content": question}]},
               "reference": {"answer": "14 days"}})
    };
    let questions = || {
        vec![
            asked("How long do refunds take?"),
            asked("When is my money back?"),
        ]
    };
    let dataset = new_dataset(&server, &graph, "questions", questions()).await;
    let scorers = json!([{"kind": "contains", "name": "answer",
                          "of": "last(output.messages).content", "expected": "reference.answer"},
                         {"kind": "judge", "name": "judged", "of": "last(output.messages).content",
                          "rubric": "Gives the refund window."},
                         // A script, on the server's script pool: a share of the
                         // reference's words the answer holds.
                         {"kind": "script", "name": "words",
                          "source": "let answer = output.messages[-1].content; \
                                     let words = reference.answer.split(' '); \
                                     let found = words.filter(|w| answer.contains(w)).len(); \
                                     #{score: found.to_float() / words.len().to_float(), reason: `${found} of ${words.len()} words`}"}]);

    // Recorded: each example asks the model once, and its judge once.
    let recorded = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": scorers, "record_replies": true}),
    )
    .await;
    let first = ended(&server.owner, &graph, &recorded).await;
    assert_eq!(first["status"], "finished", "{first}");
    assert_eq!(first["scores"][0]["mean"], 1.0, "{first}");
    assert_eq!(first["record_replies"], true);
    assert_eq!(first["scores"][1]["mean"], 0.9, "{first}");
    assert_eq!(first["scores"][2]["scorer"], "words", "{first}");
    assert_eq!(first["scores"][2]["mean"], 1.0, "{first}");
    assert_eq!(first["replies"], json!({"replayed": 0, "live": 4}));
    assert_eq!(calls.load(Ordering::SeqCst), 4);

    // Replayed: the same scores, and the model is asked nothing.
    let replayed = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": scorers, "replay_from": recorded}),
    )
    .await;
    let again = ended(&server.owner, &graph, &replayed).await;
    assert_eq!(again["status"], "finished", "{again}");
    assert_eq!(again["scores"], first["scores"]);
    assert_eq!(again["replay_from"], recorded.as_str());
    assert_eq!(again["replies"], json!({"replayed": 4, "live": 0}));
    assert_eq!(calls.load(Ordering::SeqCst), 4, "a replay asked a model");
    let items = items(&server.owner, &graph, &replayed).await;
    assert!(
        items
            .iter()
            .all(|item| item["output"]["messages"][1]["content"] == "Refunds take 14 days."),
        "{items:?}"
    );

    // A new version whose prompt changed: its calls' requests changed, so
    // they go to the model (and are recorded); the judge is shown the same
    // answers, so its verdicts are replayed.
    let mut changed = crate::invoke::chat_graph();
    changed["nodes"][1]["config"]["system"] = json!("You help customers, briefly.");
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": changed})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let version_2 = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": scorers, "replay_from": recorded}),
    )
    .await;
    let live = ended(&server.owner, &graph, &version_2).await;
    assert_eq!(live["graph_version"], 2);
    assert_eq!(live["replies"], json!({"replayed": 2, "live": 2}));
    assert_eq!(calls.load(Ordering::SeqCst), 6);

    // Replaying what was not recorded, or another graph's, is refused.
    let plain = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": scorers}),
    )
    .await;
    ended(&server.owner, &graph, &plain).await;
    // Another graph's recording, even the same person's, is not this one's.
    let other = server.create_graph(crate::invoke::chat_graph()).await;
    let other_dataset = new_dataset(&server, &other, "questions", questions()).await;
    let elsewhere = start(
        &server.owner,
        &other,
        json!({"dataset_id": other_dataset, "scorers": scorers, "record_replies": true}),
    )
    .await;
    ended(&server.owner, &other, &elsewhere).await;
    for (source, says) in [
        (plain.as_str(), "did not record its replies"),
        ("exp-nope", "this graph has no experiment"),
        (elsewhere.as_str(), "this graph has no experiment"),
    ] {
        let (status, body) = server
            .api(
                Method::POST,
                &format!("/api/v1/graphs/{graph}/experiments"),
                Some(json!({"dataset_id": dataset, "scorers": scorers, "replay_from": source})),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(error_message(&body).contains(says), "{body}");
    }
}
