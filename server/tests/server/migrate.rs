//! `heddle migrate` on real databases, both ways: a server's database (the
//! pass's own: SQLite, or PostgreSQL under `HEDDLE_TEST_POSTGRES`) is
//! copied by the real binary into a SQLite file, and that back into a fresh
//! database of the first kind; a server on the result serves the same
//! accounts, sessions, graphs with versions, shares, sealed secrets, runs
//! and event logs.

use std::process::Output;

use heddle_store::on_db;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::experiments::{ended, new_dataset, start};
use crate::support::{Browser, KeyClient, TestServer, heddle, test_database};

fn migrate(from: &str, to: &str) -> Output {
    heddle()
        .args(["migrate", "--from", from, "--to", to])
        .output()
        .expect("heddle migrate")
}

/// Everything a user would notice, read through the API.
async fn snapshot(browser: &Browser, graph: &str, run: &str, dataset: &str) -> Value {
    let get = |path: String| async move {
        let (status, body) = browser.api(Method::GET, &path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    };
    let mut graphs = get("/api/v1/graphs".into()).await;
    for graph in graphs.as_array_mut().unwrap() {
        graph.as_object_mut().unwrap().remove("role");
    }
    json!({
        "me": get("/api/v1/auth/me".into()).await,
        "graphs": graphs,
        "versions": get(format!("/api/v1/graphs/{graph}/versions")).await,
        "sharing": get(format!("/api/v1/graphs/{graph}/sharing")).await,
        "secrets": get("/api/v1/secrets".into()).await,
        "run": get(format!("/api/v1/runs/{run}")).await,
        "events": get(format!("/api/v1/runs/{run}/events?from_seq=0")).await,
        "threads": get(format!("/api/v1/graphs/{graph}/threads")).await,
        "published": get(format!("/api/v1/graphs/{graph}/published")).await,
        "keys": get("/api/v1/keys".into()).await,
        "webhooks": get(format!("/api/v1/graphs/{graph}/webhooks")).await,
        "schedules": get(format!("/api/v1/graphs/{graph}/schedules")).await,
        "widgets": get(format!("/api/v1/graphs/{graph}/widgets")).await,
        "runs": get(format!("/api/v1/graphs/{graph}/runs")).await,
        "datasets": get(format!("/api/v1/graphs/{graph}/datasets")).await,
        "dataset": get(format!("/api/v1/graphs/{graph}/datasets/{dataset}")).await,
        "experiments": get(format!("/api/v1/graphs/{graph}/experiments")).await,
        "gate": get(format!("/api/v1/graphs/{graph}/publish-gate")).await,
    })
}

async fn sealed_secret(url: &str) -> String {
    let database = heddle_store::db::open::connect(url).await.unwrap();
    on_db!(&database, pool => sqlx::query_scalar("SELECT value FROM secrets WHERE name = 'openai'")
        .fetch_one(pool)
        .await)
    .unwrap()
}

#[tokio::test]
async fn everything_moves_to_another_database_and_back() {
    let server = TestServer::start().await;
    server.user("ada").await;
    let graph = server.create_graph(counting_loop(3)).await;
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": counting_loop(4)})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    server.share_link(&graph, "viewer").await;
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/ada"),
            Some(json!({"role": "editor"})),
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/published"),
            Some(json!({"version": 1})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .api(
            Method::PUT,
            "/api/v1/secrets/openai",
            Some(json!({"value": "sk-moving-house-123"})),
        )
        .await;
    assert_eq!(status, 204);
    let run = server
        .start_run(&graph, json!({"input": {"target": 4}}))
        .await;
    assert_eq!(server.wait_for_run(&run).await["status"], "finished");
    let key = server.owner.key_client("run", &[&graph]).await;
    // Triggers, with their booleans (an integer on SQLite, a boolean on
    // PostgreSQL), one of them off.
    for (path, body) in [
        (
            "webhooks",
            json!({"name": "hook", "mapping": {"target": "/n"}, "enabled": false}),
        ),
        (
            "schedules",
            json!({"name": "daily", "cron": "0 9 * * *", "input": {"target": 1}}),
        ),
        (
            "widgets",
            json!({"name": "bubble", "allowed_origins": ["https://shop.example"]}),
        ),
    ] {
        let (status, made) = server
            .api(
                Method::POST,
                &format!("/api/v1/graphs/{graph}/{path}"),
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{path}: {made}");
    }
    let (status, invoked) = key
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/invoke"),
            Some(json!({"input": {"target": 2}})),
        )
        .await;
    assert_eq!(status, 200, "{invoked}");
    // A dataset, an experiment over it (run to its end) and a gate on it.
    let dataset = new_dataset(
        &server,
        &graph,
        "counts",
        vec![json!({"input": {"target": 2}, "reference": {"count": 2}})],
    )
    .await;
    let experiment = start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset, "scorers": [
            {"kind": "exact", "of": "output.count", "expected": "reference.count"}]}),
    )
    .await;
    assert_eq!(
        ended(&server.owner, &graph, &experiment).await["status"],
        "finished"
    );
    let (status, gate) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/publish-gate"),
            Some(json!({"dataset_id": dataset, "tolerance": 0.25})),
        )
        .await;
    assert_eq!(status, 200, "{gate}");
    let before = snapshot(&server.owner, &graph, &run, &dataset).await;
    assert!(before["events"].as_array().unwrap().len() > 10);
    assert_eq!(before["published"]["published"]["version"], 1);
    assert_eq!(before["experiments"][0]["scores"][0]["mean"], 1.0);
    assert_eq!(before["gate"]["tolerance"], 0.25);

    // Out to a SQLite file, and back into a fresh database of the pass's kind.
    let dir = tempfile::tempdir().unwrap();
    let middle = format!("sqlite://{}", dir.path().join("middle/heddle.db").display());
    let out = migrate(&server.database_url, &middle);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("heddle_events"), "{stdout}");
    assert!(stdout.contains("every table has as many rows"), "{stdout}");
    let back = test_database(&dir.path().join("back")).await;
    let out = migrate(&middle, &back);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A copy only fills an empty database, and says so.
    let again = migrate(&middle, &back);
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("not empty"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    // Secrets arrive sealed, byte for byte.
    let sealed = sealed_secret(&back).await;
    assert!(sealed.starts_with("v1:"), "{sealed}");
    assert_eq!(sealed, sealed_secret(&server.database_url).await);

    // A server on the copy knows the owner's session: same cookies, new server.
    let moved = TestServer::open(&back).await;
    let owner = Browser {
        addr: moved.addr,
        client: server.owner.client.clone(),
        jar: server.owner.jar.clone(),
    };
    let after = snapshot(&owner, &graph, &run, &dataset).await;
    assert_eq!(after, before);
    let origins: Vec<&str> = after["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["origin"].as_str().unwrap())
        .collect();
    assert!(
        origins.contains(&"api_key") && origins.contains(&"experiment"),
        "{origins:?}"
    );
    // The experiment's results, the dataset and the gate came along.
    assert_eq!(after["experiments"][0]["progress"]["scored"], 1);
    assert_eq!(
        after["dataset"]["examples"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(after["webhooks"][0]["enabled"], false);
    assert_eq!(after["widgets"][0]["enabled"], true);
    // The key works on the copy, and still reads the run it started.
    let key = KeyClient::new(moved.addr, &key.secret);
    let (status, _) = key
        .api(
            Method::GET,
            &format!("/api/v1/runs/{}", invoked["run_id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, 200);
    // And it goes on from there: the next save is version 3, the next run
    // has its own events.
    let (status, saved) = owner
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 2, "document": counting_loop(5)})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["version"], 3);
}
