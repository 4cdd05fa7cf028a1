//! Webhooks and schedules over real HTTP: a hook's body mapped onto the
//! input, signatures checked (and unsigned, forged, stale and replayed
//! calls refused), a delivery handled once, a hook that outlives its
//! maker's access refused; schedules validated, missed times skipped or
//! run once, and each time fired once by two servers on one PostgreSQL.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::api_runs::{approval, counting_loop};
use crate::replicas::{create_graph, replica_with};
use crate::support::{Killed, TestServer, error_message, on_postgres, test_database};

pub(crate) async fn hook(server: &TestServer, graph: &str, settings: Value) -> (String, Value) {
    let (status, made) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/webhooks"),
            Some(settings),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    (
        made["path"].as_str().unwrap().to_string(),
        made["webhook"].clone(),
    )
}

/// A hook answering with the run at once started it: 202 with the run
/// going, or, when so short a run ended before its record was read back,
/// 200 with it finished (the answer says what is true; it never waits).
fn assert_started(status: u16, answer: &Value) {
    match status {
        202 => assert!(
            answer["status"] == "running" || answer["status"] == "queued",
            "{answer}"
        ),
        200 => assert_eq!(answer["status"], "finished", "{answer}"),
        other => panic!("{other}: {answer}"),
    }
}

/// Calls a hook with a raw body and headers, as a sender would: no cookie.
pub(crate) async fn call(
    server: &TestServer,
    path: &str,
    body: &str,
    headers: &[(&str, String)],
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(server.url(path))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    crate::support::status_and_json(request.send().await.unwrap()).await
}

pub(crate) fn sign(secret: &str, signed: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(signed.as_bytes());
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn a_webhook_maps_its_body_onto_the_input_and_answers_with_the_run_or_result() {
    let server = TestServer::start().await;
    let graph = server.create_graph(approval()).await;
    server.publish(&graph, 1).await;
    let (refunds, made) = hook(
        &server,
        &graph,
        json!({"name": "Refund form", "mapping": {"request": "/order/id"}, "respond": "result"}),
    )
    .await;
    assert!(
        refunds.starts_with("/api/v1/hooks/") && refunds.len() > 70,
        "{refunds}"
    );
    assert_eq!(made["respond"], "result");
    // The URL is never listed.
    let (_, listed) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/webhooks"),
            None,
        )
        .await;
    assert!(
        !listed
            .to_string()
            .contains(&refunds["/api/v1/hooks/".len()..]),
        "{listed}"
    );

    let (status, answer) = call(
        &server,
        &refunds,
        r#"{"order": {"id": "order 77"}, "other": 1}"#,
        &[],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["status"], "interrupted",
        "the approval asks: {answer}"
    );
    assert_eq!(
        answer["paused"]["asks"][0]["payload"]["prompt"],
        "Approve this refund: order 77? Answer true or false."
    );
    let (_, runs) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(runs[0]["origin"], "webhook");
    assert_eq!(runs[0]["origin_label"], "Refund form");

    // What the mapping cannot find, or a body that is not JSON, is refused
    // saying where.
    let (status, answer) = call(&server, &refunds, r#"{"order": {}}"#, &[]).await;
    assert_eq!(status, 400);
    assert_eq!(
        error_message(&answer),
        "`mapping.request`: the body has nothing at `/order/id`"
    );
    let (status, answer) = call(&server, &refunds, "order=77", &[]).await;
    assert_eq!(status, 400);
    assert!(
        error_message(&answer).starts_with("the body is not JSON"),
        "{answer}"
    );

    // A hook answering with the run at once; the body is the input.
    let counter = server.create_graph(counting_loop(1)).await;
    server.publish(&counter, 1).await;
    let (path, _) = hook(&server, &counter, json!({"name": "tick"})).await;
    let (status, answer) = call(&server, &path, r#"{"target": 3}"#, &[]).await;
    assert_started(status, &answer);
    let run = server
        .wait_for_run(answer["run_id"].as_str().unwrap())
        .await;
    assert_eq!(run["output"]["count"], 3);
    let (status, answer) = call(&server, &path, r#"{"nope": 3}"#, &[]).await;
    assert_eq!(status, 400);
    assert!(error_message(&answer).contains("`input.nope`"), "{answer}");

    // Regenerated, the old URL is dead; deleted, the new one too.
    let id = made["id"].as_str().unwrap();
    let (status, fresh) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/webhooks/{id}/regenerate"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{fresh}");
    let fresh_path = fresh["path"].as_str().unwrap();
    assert_ne!(fresh_path, refunds);
    assert_eq!(
        call(&server, &refunds, r#"{"order": {"id": "x"}}"#, &[])
            .await
            .0,
        404
    );
    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/webhooks/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        call(&server, fresh_path, r#"{"order": {"id": "x"}}"#, &[])
            .await
            .0,
        404
    );
}

#[tokio::test]
async fn a_signed_webhook_refuses_unsigned_forged_stale_and_replayed_calls() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    server.publish(&graph, 1).await;
    // The signing secret must be one of the maker's secrets.
    let (status, answer) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/webhooks"),
            Some(json!({"name": "signed", "signing_secret": "hook-secret"})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        error_message(&answer)
            .starts_with("`signing_secret`: the hook's maker has no secret named `hook-secret`")
    );
    let (status, _) = server
        .api(
            Method::PUT,
            "/api/v1/secrets/hook-secret",
            Some(json!({"value": "s3cret-shared-with-sender"})),
        )
        .await;
    assert_eq!(status, 204);
    let (path, _) = hook(
        &server,
        &graph,
        json!({"name": "signed", "signing_secret": "hook-secret"}),
    )
    .await;
    let body = r#"{"target": 2}"#;
    let at = now().to_string();
    let good = sign("s3cret-shared-with-sender", &format!("{at}.{body}"));

    let refused = [
        (vec![], "takes only signed calls"),
        (
            vec![("x-heddle-signature", good.clone())],
            "comes with `X-Heddle-Timestamp`",
        ),
        (
            vec![
                ("x-heddle-timestamp", at.clone()),
                (
                    "x-heddle-signature",
                    sign("a guess", &format!("{at}.{body}")),
                ),
            ],
            "it does not match the body",
        ),
        (
            vec![
                ("x-heddle-timestamp", (now() - 3600).to_string()),
                (
                    "x-heddle-signature",
                    sign(
                        "s3cret-shared-with-sender",
                        &format!("{}.{body}", now() - 3600),
                    ),
                ),
            ],
            "signed calls are taken for 300 s",
        ),
    ];
    for (headers, why) in refused {
        let (status, answer) = call(&server, &path, body, &headers).await;
        assert_eq!(status, 401, "{answer}");
        assert!(error_message(&answer).contains(why), "{why}: {answer}");
    }
    // The body changed after signing: refused.
    let (status, _) = call(
        &server,
        &path,
        r#"{"target": 9}"#,
        &[
            ("x-heddle-timestamp", at.clone()),
            ("x-heddle-signature", good.clone()),
        ],
    )
    .await;
    assert_eq!(status, 401);

    let signed = [
        ("x-heddle-timestamp", at.clone()),
        ("x-heddle-signature", good.clone()),
    ];
    let (status, first) = call(&server, &path, body, &signed).await;
    assert_started(status, &first);
    // The same call again (a replay, or the sender retrying) starts
    // nothing new: it answers with the first call's run.
    let (status, again) = call(&server, &path, body, &signed).await;
    assert!(status == 200 || status == 202, "{again}");
    assert_eq!(again["run_id"], first["run_id"]);
    // A delivery id is not signed: a replay with a new one starts nothing.
    let mut replayed = signed.to_vec();
    replayed.push(("x-heddle-delivery", "fresh-1".to_string()));
    let (_, again) = call(&server, &path, body, &replayed).await;
    assert_eq!(again["run_id"], first["run_id"]);
    // GitHub's way: a signature of the body, and its delivery id.
    let delivery = [
        (
            "x-hub-signature-256",
            sign("s3cret-shared-with-sender", body),
        ),
        (
            "x-github-delivery",
            "72d3162e-cc78-11e3-81ab-4c9367dc0958".to_string(),
        ),
    ];
    let (status, github) = call(&server, &path, body, &delivery).await;
    assert_eq!(status, 202, "{github}");
    assert_ne!(github["run_id"], first["run_id"]);
    let (_, redelivered) = call(&server, &path, body, &delivery).await;
    assert_eq!(redelivered["run_id"], github["run_id"]);
    let (_, runs) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(
        runs.as_array().unwrap().len(),
        2,
        "two deliveries, two runs: {runs}"
    );
}

#[tokio::test]
async fn only_editors_manage_hooks_and_a_hook_stops_with_its_makers_access() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    server.publish(&graph, 1).await;
    let eddie = server.user("eddie").await;
    let set_role = |role: &'static str| {
        let path = format!("/api/v1/graphs/{graph}/members/eddie");
        let server = &server;
        async move {
            let (status, body) = server
                .api(Method::PUT, &path, Some(json!({"role": role})))
                .await;
            assert_eq!(status, 204, "{body}");
        }
    };
    let hooks = format!("/api/v1/graphs/{graph}/webhooks");
    // A stranger cannot tell the graph exists; a viewer lists but cannot make.
    let (status, _) = eddie.api(Method::GET, &hooks, None).await;
    assert_eq!(status, 404);
    set_role("viewer").await;
    let (status, _) = eddie.api(Method::GET, &hooks, None).await;
    assert_eq!(status, 200);
    let (status, answer) = eddie
        .api(Method::POST, &hooks, Some(json!({"name": "mine"})))
        .await;
    assert_eq!(status, 403, "{answer}");
    set_role("editor").await;
    let (status, made) = eddie
        .api(Method::POST, &hooks, Some(json!({"name": "eddie's hook"})))
        .await;
    assert_eq!(status, 201, "{made}");
    let path = made["path"].as_str().unwrap();
    let (status, answer) = call(&server, path, r#"{"target": 1}"#, &[]).await;
    assert_started(status, &answer);
    // Eddie is a viewer now: his hook no longer runs the graph.
    set_role("viewer").await;
    let (status, answer) = call(&server, path, r#"{"target": 1}"#, &[]).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(
        error_message(&answer),
        "webhook `eddie's hook` cannot run its graph: the person who made it is no longer an editor of it"
    );
    // It runs as Eddie, with his secrets: nobody else changes it or gives
    // it a new URL, not even the owner (who may delete it).
    let id = made["webhook"]["id"].as_str().unwrap();
    let off = json!({"name": "eddie's hook", "enabled": false});
    for (method, path, body) in [
        (Method::PUT, format!("{hooks}/{id}"), Some(off.clone())),
        (Method::POST, format!("{hooks}/{id}/regenerate"), None),
    ] {
        let (status, answer) = server.api(method, &path, body).await;
        assert_eq!(status, 403, "{answer}");
        assert_eq!(
            error_message(&answer),
            "this webhook runs as the person who made it: only they may change it (you may delete it)"
        );
    }
    // Turned off by Eddie: refused, saying so; unknown tokens are not found.
    set_role("editor").await;
    let (status, _) = eddie
        .api(Method::PUT, &format!("{hooks}/{id}"), Some(off))
        .await;
    assert_eq!(status, 200);
    assert_eq!(call(&server, path, "{}", &[]).await.0, 410);
    assert_eq!(
        call(&server, "/api/v1/hooks/nothing-here", "{}", &[])
            .await
            .0,
        404
    );
    // Bad settings say what and where.
    let (status, answer) = server
        .api(
            Method::POST,
            &hooks,
            Some(json!({"name": "x", "mapping": {"request": "order.id"}})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        error_message(&answer).starts_with("`mapping.request`: `order.id` is not a JSON pointer")
    );
}

#[tokio::test]
async fn schedules_are_checked_and_missed_times_are_skipped_or_run_once() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    let path = format!("/api/v1/graphs/{graph}/schedules");
    for (settings, why) in [
        (
            json!({"name": "x", "cron": "every morning"}),
            "`cron`: `every morning` is not a cron expression",
        ),
        (
            json!({"name": "x", "cron": "0 9 * * *", "timezone": "Mars/Base"}),
            "`timezone`: `Mars/Base` is not a time zone",
        ),
        (
            json!({"name": "x", "cron": "0 9 * * *", "input": [1]}),
            "`input` must be a JSON object of channel values",
        ),
    ] {
        let (status, answer) = server.api(Method::POST, &path, Some(settings)).await;
        assert_eq!(status, 400, "{answer}");
        assert!(error_message(&answer).starts_with(why), "{answer}");
    }
    let (status, made) = server
        .api(
            Method::POST,
            &path,
            Some(
                json!({"name": "Morning", "cron": "0 9 * * MON-FRI", "timezone": "Europe/Paris",
                        "input": {"target": 2}}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let upcoming = made["upcoming"].as_array().unwrap();
    assert_eq!(upcoming.len(), 5);
    assert!(
        upcoming.iter().all(|time| {
            let time = time.as_str().unwrap();
            time.contains(" 09:00:00 ") && !time.starts_with("Sat") && !time.starts_with("Sun")
        }),
        "{upcoming:?}"
    );

    // Its time was an hour ago and no server ran: skipped by default.
    let id = made["id"].as_str().unwrap();
    let db = server.db().await;
    let age = |missed: &'static str| {
        let db = db.clone();
        let id = id.to_string();
        async move {
            heddle_store::on_db!(&db, pool => sqlx::query(
                "UPDATE schedules SET next_at = $1, missed = $2 WHERE id = $3",
            )
            .bind(heddle_store::db::ago(Duration::from_secs(3600)))
            .bind(missed)
            .bind(&id)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
        }
    };
    age("skip").await;
    assert_eq!(
        heddle_server::schedules::fire_due(&server.runs)
            .await
            .unwrap(),
        1
    );
    let (_, listed) = server.api(Method::GET, &path, None).await;
    assert!(listed[0]["last_run_id"].is_null(), "{listed}");
    assert_eq!(
        listed[0]["last_error"],
        "skipped: no server was running at that time"
    );
    assert!(listed[0]["next_at"].as_str().unwrap() > heddle_store::db::now().as_str());
    // Nothing more is due.
    assert_eq!(
        heddle_server::schedules::fire_due(&server.runs)
            .await
            .unwrap(),
        0
    );

    // Unpublished, a run-once time records why it started nothing.
    age("run_once").await;
    assert_eq!(
        heddle_server::schedules::fire_due(&server.runs)
            .await
            .unwrap(),
        1
    );
    let (_, listed) = server.api(Method::GET, &path, None).await;
    assert!(
        listed[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("has no published version"),
        "{listed}"
    );
    // Published, it runs once for the missed time.
    server.publish(&graph, 1).await;
    age("run_once").await;
    assert_eq!(
        heddle_server::schedules::fire_due(&server.runs)
            .await
            .unwrap(),
        1
    );
    let (_, listed) = server.api(Method::GET, &path, None).await;
    let run = server
        .wait_for_run(listed[0]["last_run_id"].as_str().unwrap())
        .await;
    assert_eq!(run["output"]["count"], 2);
    assert_eq!(run["origin"], "schedule");
    assert_eq!(run["origin_label"], "Morning");
}

#[tokio::test]
async fn two_servers_fire_each_time_of_a_schedule_exactly_once() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    // Schedules fire at most once a minute unless the operator allows more.
    let every_second = ["--schedule-min-seconds", "1"];
    let (a, owner) = replica_with(&url, &key, &every_second).await;
    let _a = Killed(a);
    let (b, _) = replica_with(&url, &key, &every_second).await;
    let _b = Killed(b);
    owner.sign_up("owner").await;
    let graph = create_graph(&owner, counting_loop(1)).await;
    let (status, _) = owner
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/published"),
            Some(json!({"version": 1})),
        )
        .await;
    assert_eq!(status, 200);
    let path = format!("/api/v1/graphs/{graph}/schedules");
    let (status, made) = owner
        .api(
            Method::POST,
            &path,
            Some(json!({"name": "every second", "cron": "* * * * * *", "input": {"target": 1}})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    tokio::time::sleep(Duration::from_secs(6)).await;
    let id = made["id"].as_str().unwrap();
    let (status, _) = owner
        .api(
            Method::PUT,
            &format!("{path}/{id}"),
            Some(json!({"name": "every second", "cron": "* * * * * *", "enabled": false})),
        )
        .await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_secs(2)).await;

    let db = heddle_store::db::open::connect(&url).await.unwrap();
    let fires: Vec<(String, Option<String>)> = heddle_store::on_db!(&db, pool => sqlx::query_as(
        "SELECT fire_at, run_id FROM schedule_fires WHERE schedule_id = $1 ORDER BY fire_at",
    )
    .bind(id)
    .fetch_all(pool)
    .await)
    .unwrap();
    // About one a second for six seconds, each a different second, each
    // with its own run, and no second left out between the first and last.
    assert!((4..=8).contains(&fires.len()), "{fires:?}");
    let seconds: Vec<i64> = fires
        .iter()
        .map(|(at, _)| heddle_store::db::unix_seconds(at).unwrap())
        .collect();
    assert!(
        seconds.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "{seconds:?}"
    );
    let (_, runs) = owner
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), fires.len(), "one run per time: {runs:?}");
    assert!(fires.iter().all(|(_, run)| run.is_some()), "{fires:?}");
    assert!(runs.iter().all(|run| run["origin"] == "schedule"));
}
