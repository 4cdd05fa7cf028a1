//! What a crash leaves in the database, recovered in-process: runs whose
//! end the engine stored but whose server died before recording it.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::support::TestServer;

/// The run's stored events.
async fn events(server: &TestServer, run_id: &str) -> Vec<Value> {
    let (status, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run_id}/events"), None)
        .await;
    assert_eq!(status, 200, "{events}");
    events.as_array().unwrap().clone()
}

/// Sets run `run`'s record back to what a crash leaves: `status`, no
/// outcome, no lease (its server is gone), and `request` when given.
async fn as_a_crash_left_it(server: &TestServer, run: &str, status: &str, request: Option<Value>) {
    let db = server.db().await;
    heddle_store::on_db!(&db, pool => sqlx::query(
        "UPDATE runs SET status = $2, output = NULL, error = NULL, finished_at = NULL,
                lease_owner = NULL, lease_expires_at = NULL,
                request = COALESCE($3, request)
         WHERE id = $1",
    )
    .bind(run)
    .bind(status)
    .bind(request.map(|request| request.to_string()))
    .execute(pool)
    .await
    .map(|_| ()))
    .unwrap();
}

/// The id of run `run`'s newest checkpoint, from the engine's store.
async fn newest_checkpoint(server: &TestServer, run: &str) -> String {
    let db = server.db().await;
    heddle_store::on_db!(&db, pool => sqlx::query_scalar(
        "SELECT checkpoint_id FROM heddle_checkpoints WHERE run_id = $1
         ORDER BY position DESC LIMIT 1",
    )
    .bind(run)
    .fetch_one(pool)
    .await)
    .unwrap()
}

/// A server killed after the engine stored a run's end (its last
/// checkpoint, atomically with the engine's record of it) and before the
/// server recorded it leaves the run `running` in the server's table. The
/// next server records the end the engine stored (finished, failed with
/// its error, paused with its interrupts), and does not start the run
/// again: a second start found the engine's record of it and failed a run
/// that had finished (seen in CI as an experiment's example that failed
/// with "duplicate key value violates unique constraint"). A paused run
/// whose answer waits is resumed with it; one whose answer was to an
/// earlier pause stays paused.
#[tokio::test]
async fn a_run_that_ended_just_before_its_server_died_is_recorded_as_it_ended() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let mut looping = counting_loop(0);
    looping["limits"]["max_steps"] = json!(3);
    let looping = server.create_graph(looping).await;
    let pausing = json!({"input": {"target": 2}, "interrupt_before": ["tick"]});
    let finished = server
        .start_run(&graph, json!({"input": {"target": 5}}))
        .await;
    let failed = server
        .start_run(&looping, json!({"input": {"target": 10}}))
        .await;
    let paused = server.start_run(&graph, pausing.clone()).await;
    let answered_before = server.start_run(&graph, pausing.clone()).await;
    let answer_waits = server.start_run(&graph, pausing).await;
    let mut before = Vec::new();
    for run in [&finished, &failed, &paused, &answered_before, &answer_waits] {
        let ended = server.wait_for_run(run).await;
        before.push((ended.clone(), events(&server, run).await));
    }
    assert_eq!(before[0].0["status"], "finished", "{}", before[0].0);
    assert_eq!(before[0].0["output"]["count"], 5);
    assert_eq!(before[1].0["status"], "failed", "{}", before[1].0);
    assert!(
        before[1].0["error"]
            .as_str()
            .unwrap()
            .contains("limit of 3 steps"),
        "{}",
        before[1].0
    );
    assert_eq!(before[2].0["status"], "interrupted", "{}", before[2].0);

    for run in [&finished, &failed, &paused] {
        as_a_crash_left_it(&server, run, "running", None).await;
    }
    let earlier = json!({"kind": "resume", "value": null, "pause": "an earlier pause"});
    as_a_crash_left_it(&server, &answered_before, "running", Some(earlier)).await;
    let this_one = newest_checkpoint(&server, &answer_waits).await;
    let waiting = json!({"kind": "resume", "value": null, "pause": this_one});
    as_a_crash_left_it(&server, &answer_waits, "queued", Some(waiting)).await;
    server.runs.recover().await.expect("recovery goes on");

    for (run, (was, log)) in [&finished, &failed, &paused, &answered_before]
        .into_iter()
        .zip(&before)
    {
        let now = server.wait_for_run(run).await;
        for field in ["status", "output", "error"] {
            assert_eq!(now[field], was[field], "{field} of {run}: {now}");
        }
        assert_eq!(
            &events(&server, run).await,
            log,
            "{run}'s log is as it ended: not begun again"
        );
    }
    let resumed = server.wait_for_run(&answer_waits).await;
    assert_eq!(resumed["status"], "finished", "{resumed}");
    assert_eq!(resumed["output"]["count"], 2);

    // A paused run's thread goes on when answered.
    let thread = before[2].0["thread_id"].as_str().unwrap();
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/threads/{thread}/resume"),
            Some(json!({"value": null})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let resumed = server.wait_for_run(&paused).await;
    assert_eq!(resumed["status"], "finished", "{resumed}");
    assert_eq!(resumed["output"]["count"], 2);
}
