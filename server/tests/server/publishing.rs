//! Published versions over the JSON API: who may read and change which
//! version is live, and what a bad request is told.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::support::{Browser, TestServer, error_message};

async fn member(server: &TestServer, graph: &str, name: &str, role: &str) -> Browser {
    let browser = server.user(name).await;
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/{name}"),
            Some(json!({"role": role})),
        )
        .await;
    assert_eq!(status, 204, "{body}");
    browser
}

fn live_version(body: &Value) -> Option<i64> {
    body["published"]["version"].as_i64()
}

#[tokio::test]
async fn editors_publish_and_roll_back_viewers_read_strangers_see_nothing() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let path = format!("/api/v1/graphs/{graph}/published");
    let (status, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": counting_loop(3)})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");

    // Nothing is live until someone publishes.
    let (status, body) = server.api(Method::GET, &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"published": null}));

    let (status, body) = server
        .api(Method::PUT, &path, Some(json!({"version": 2})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 2);
    assert_eq!(body["published_by"], "owner");
    assert!(
        body["published_at"]
            .as_str()
            .is_some_and(|at| !at.is_empty())
    );

    // An editor rolls back to version 1; a viewer reads it.
    let editor = member(&server, &graph, "eddie", "editor").await;
    let (status, body) = editor
        .api(Method::PUT, &path, Some(json!({"version": 1})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["published_by"], "eddie");
    let viewer = member(&server, &graph, "vera", "viewer").await;
    let (status, body) = viewer.api(Method::GET, &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(live_version(&body), Some(1));

    // A viewer may not change it; a stranger cannot tell the graph exists;
    // nobody logged out gets anything.
    for (method, body) in [
        (Method::PUT, Some(json!({"version": 2}))),
        (Method::DELETE, None),
    ] {
        let (status, answer) = viewer.api(method, &path, body).await;
        assert_eq!(status, 403, "{answer}");
        assert_eq!(
            error_message(&answer),
            "you are a viewer of this graph; this needs the editor role"
        );
    }
    let stranger = server.user("sam").await;
    let (status, answer) = stranger.api(Method::GET, &path, None).await;
    assert_eq!(status, 404, "{answer}");
    let (status, _) = stranger
        .api(Method::PUT, &path, Some(json!({"version": 1})))
        .await;
    assert_eq!(status, 404);
    let (status, _) = Browser::new(server.addr)
        .api(Method::GET, &path, None)
        .await;
    assert_eq!(status, 401);
    let (_, body) = server.api(Method::GET, &path, None).await;
    assert_eq!(live_version(&body), Some(1), "refusals changed nothing");

    // A version that does not exist, or is not a number, is refused
    // saying what and where.
    let (status, answer) = server
        .api(Method::PUT, &path, Some(json!({"version": 9})))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error_message(&answer).contains(&format!("graph {graph} has no version 9")),
        "{answer}"
    );
    let (status, answer) = server
        .api(Method::PUT, &path, Some(json!({"version": "latest"})))
        .await;
    assert!(status == 400 || status == 422, "{status} {answer}");
    assert!(error_message(&answer).contains("version"), "{answer}");

    // Taken offline, then nothing is live.
    let (status, _) = editor.api(Method::DELETE, &path, None).await;
    assert_eq!(status, 204);
    let (_, body) = viewer.api(Method::GET, &path, None).await;
    assert_eq!(body, json!({"published": null}));
}

#[tokio::test]
async fn a_deleted_graph_takes_its_publication_with_it() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let path = format!("/api/v1/graphs/{graph}/published");
    let (status, _) = server
        .api(Method::PUT, &path, Some(json!({"version": 1})))
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .api(Method::DELETE, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 204);
    let (status, _) = server.api(Method::GET, &path, None).await;
    assert_eq!(status, 404);
    let rows: i64 = heddle_store::on_db!(server.runs.db(), pool => sqlx::query_scalar(
        "SELECT COUNT(*) FROM graph_publications"
    )
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(rows, 0);
}
