//! Server-rendered pages: what a browser gets before any wasm runs.

use crate::support::TestServer;

#[tokio::test]
async fn the_home_page_teaches_when_there_are_no_graphs() {
    let server = TestServer::start().await;
    let response = server.get("/").await;
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    assert!(html.contains("<title>Graphs · Heddle</title>"), "{html}");
    assert!(html.contains("No graphs yet"));
    // The page loads the front end the build step writes.
    assert!(html.contains("/pkg/heddle.js"));
    assert!(html.contains("/pkg/heddle_bg.wasm"));
}

#[tokio::test]
async fn the_home_page_lists_graphs_newest_first() {
    let server = TestServer::start().await;
    for _ in 0..2 {
        assert_eq!(server.call("create_graph", &[]).await.status(), 200);
    }
    let html = server.get("/").await.text().await.unwrap();
    assert!(html.contains("2 graphs"));
    let first = html.find("Untitled graph 2").expect("second graph listed");
    let second = html.find("Untitled graph 1").expect("first graph listed");
    assert!(first < second, "the newest graph comes first");
    assert!(!html.contains("No graphs yet"));
}

#[tokio::test]
async fn a_graph_page_shows_the_graph() {
    let server = TestServer::start().await;
    let id: String = server.call("create_graph", &[]).await.json().await.unwrap();
    let response = server.get(&format!("/graphs/{id}")).await;
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    assert!(
        html.contains("<title>Untitled graph 1 · Heddle</title>"),
        "{html}"
    );
    assert!(html.contains("This graph is empty"));
    assert!(html.contains(&id));
}

#[tokio::test]
async fn unknown_graphs_are_404_pages() {
    let server = TestServer::start().await;
    for path in [
        "/graphs/00000000-0000-4000-8000-000000000000",
        "/graphs/not-a-uuid",
        "/graphs/'%20OR%201=1",
    ] {
        let response = server.get(path).await;
        assert_eq!(response.status(), 404, "{path}");
        let html = response.text().await.unwrap();
        assert!(html.contains("Graph not found"), "{path}: {html}");
    }
}

#[tokio::test]
async fn unknown_paths_are_404_pages() {
    let server = TestServer::start().await;
    let response = server.get("/no/such/page").await;
    assert_eq!(response.status(), 404);
    let html = response.text().await.unwrap();
    assert!(html.contains("Page not found"));
    assert!(html.contains("<title>Page not found · Heddle</title>"));
}

#[tokio::test]
async fn built_assets_are_served_from_the_site_root() {
    let server = TestServer::start().await;
    let pkg = server.dir.path().join("site/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("heddle.css"), "body{}").unwrap();
    let response = server.get("/pkg/heddle.css").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "body{}");
    assert_eq!(server.get("/pkg/missing.js").await.status(), 404);
}

#[tokio::test]
async fn the_health_check_answers() {
    let server = TestServer::start().await;
    let response = server.get("/api/health").await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
}

/// Pages rendered at once on a multi-threaded runtime, like production's:
/// the page title once read a signal after its owner was gone, which
/// panicked the render and left the request hanging. Eight at a time, ten
/// each: sixteen of twenty each, on a debug build beside the rest of the
/// suite on 2 cores, kept connections checked out past the pool's 10 s
/// (a 500 under load, not the race this is for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_render_concurrently_on_a_multi_threaded_runtime() {
    let server = std::sync::Arc::new(TestServer::start().await);
    let id: String = server.call("create_graph", &[]).await.json().await.unwrap();
    let mut tasks = Vec::new();
    for task in 0..8 {
        let server = server.clone();
        let graph_page = format!("/graphs/{id}");
        tasks.push(tokio::spawn(async move {
            for request in 0..10 {
                let path = if (task + request) % 2 == 0 {
                    "/"
                } else {
                    graph_page.as_str()
                };
                let response =
                    tokio::time::timeout(std::time::Duration::from_secs(20), server.get(path))
                        .await
                        .unwrap_or_else(|_| {
                            panic!("GET {path} (task {task}, request {request}) hung")
                        });
                assert_eq!(response.status(), 200, "GET {path}");
                let html =
                    tokio::time::timeout(std::time::Duration::from_secs(20), response.text())
                        .await
                        .unwrap_or_else(|_| {
                            panic!(
                                "GET {path} (task {task}, request {request}): the body never ended"
                            )
                        })
                        .unwrap();
                assert!(html.contains("· Heddle</title>"), "{html}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

/// A browser asks for compressed pages; every page must still end (a
/// resource that never resolves on the server once kept the graph page's
/// compressed stream open for ever, and the browser waiting on it).
#[tokio::test]
async fn compressed_pages_end() {
    let server = TestServer::start().await;
    let id: String = server.call("create_graph", &[]).await.json().await.unwrap();
    for path in [
        "/".to_string(),
        format!("/graphs/{id}"),
        "/settings".to_string(),
    ] {
        let request = server
            .client
            .get(server.url(&path))
            .header("accept-encoding", "gzip")
            .header("accept", "text/html");
        let body = tokio::time::timeout(std::time::Duration::from_secs(20), async {
            let response = request.send().await.expect("GET");
            assert_eq!(response.status(), 200, "{path}");
            response.bytes().await.expect("body")
        })
        .await
        .unwrap_or_else(|_| panic!("{path} never ended"));
        assert!(!body.is_empty(), "{path}");
    }
}

/// A large graph's page arrives at its start, readable, with only the
/// nodes near the view (the browser draws the same first view, so it has
/// hundreds fewer elements to lay out and hydrate, and nothing to draw
/// twice). A small graph's arrives whole.
#[tokio::test]
async fn a_large_graph_arrives_at_its_start_drawing_only_what_is_near_the_view() {
    let server = TestServer::start().await;
    let graph = |count: usize| {
        let nodes: Vec<serde_json::Value> = (0..count)
            .map(|i| {
                serde_json::json!({
                    "id": format!("n{i}"),
                    "kind": "set",
                    "label": format!("Step number {i}"),
                    "config": {"values": {}},
                    "position": {"x": (i % 25) as f64 * 220.0, "y": (i / 25) as f64 * 100.0},
                })
            })
            .collect();
        serde_json::json!({"format_version": 2, "name": format!("{count} nodes"), "nodes": nodes})
    };

    // Too big to read whole: it arrives at its start, readable, with only
    // the nodes near the view in the page (culling.rs), in full.
    let large = server.create_graph(graph(300)).await;
    let html = server
        .get(&format!("/graphs/{large}"))
        .await
        .text()
        .await
        .unwrap();
    let drawn = html.matches("class=\"canvas-node kind-set").count();
    assert!((10..100).contains(&drawn), "{drawn} of 300 nodes drawn");
    assert!(html.contains("data-detail=\"full\""), "drawn readable");
    assert!(html.contains("Step number 0<"), "its start is drawn");
    assert!(!html.contains("Step number 299<"), "its far end is not");
    assert_eq!(html.matches("class=\"canvas-node-label\"").count(), drawn);
    assert_eq!(html.matches("class=\"port port-out\"").count(), drawn);

    let small = server.create_graph(graph(3)).await;
    let html = server
        .get(&format!("/graphs/{small}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("data-detail=\"full\""), "drawn whole");
    assert_eq!(html.matches("class=\"canvas-node-label\"").count(), 3);
    assert!(html.contains("Step number 2<"));
    assert_eq!(html.matches("class=\"port port-out\"").count(), 3);
}
