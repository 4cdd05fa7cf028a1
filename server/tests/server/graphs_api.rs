//! The graph server functions over HTTP, as the app and scripts call them.

use crate::support::TestServer;

#[tokio::test]
async fn create_graph_stores_a_valid_document_and_redirects_the_app() {
    let server = TestServer::start().await;
    let response = server.call("create_graph", &[]).await;
    assert_eq!(response.status(), 200);
    // The hydrated app is told to navigate, without a real redirect.
    assert!(response.headers().contains_key("serverfnredirect"));
    let id: String = response.json().await.unwrap();
    assert_eq!(id.len(), 36);

    let response = server.call("get_graph", &[("id", &id)]).await;
    assert_eq!(response.status(), 200);
    let opened: serde_json::Value = response.json().await.unwrap();
    assert_eq!(opened["role"], "owner");
    let graph = &opened["graph"];
    assert_eq!(graph["name"], "Untitled graph 1");
    assert_eq!(graph["version"], 1);
    let document = heddle_engine::GraphDocument::from_json(graph["document"].as_str().unwrap())
        .expect("the stored document is one the engine reads");
    assert_eq!(document.name, "Untitled graph 1");
}

#[tokio::test]
async fn a_form_post_without_javascript_redirects_to_the_new_graph() {
    let server = TestServer::start().await;
    let response = server
        .client
        .post(server.url("/api/create_graph"))
        .header("accept", "text/html")
        .form(&[] as &[(&str, &str)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with("/graphs/"), "{location}");
    assert_eq!(server.get(&location).await.status(), 200);
}

#[tokio::test]
async fn list_graphs_returns_what_was_created() {
    let server = TestServer::start().await;
    let empty: Vec<serde_json::Value> = server.call("list_graphs", &[]).await.json().await.unwrap();
    assert!(empty.is_empty());
    let id: String = server.call("create_graph", &[]).await.json().await.unwrap();
    let list: Vec<serde_json::Value> = server.call("list_graphs", &[]).await.json().await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["node_count"], 0);
    assert!(list[0]["updated_at"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn a_missing_graph_is_a_typed_not_found_error() {
    let server = TestServer::start().await;
    let response = server
        .call(
            "get_graph",
            &[("id", "00000000-0000-4000-8000-000000000000")],
        )
        .await;
    assert_eq!(response.status(), 404);
    let error: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        error["NotFound"]["what"],
        "graph 00000000-0000-4000-8000-000000000000"
    );
}

#[tokio::test]
async fn a_call_without_its_argument_is_invalid_input() {
    let server = TestServer::start().await;
    let response = server.call("get_graph", &[]).await;
    assert_eq!(response.status(), 400);
    let error: serde_json::Value = response.json().await.unwrap();
    assert!(error.get("InvalidInput").is_some(), "{error}");
}

#[tokio::test]
async fn examples_are_listed_and_copied_into_new_graphs() {
    let server = TestServer::start().await;
    let examples: Vec<serde_json::Value> = server
        .call("list_examples", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(examples.len() >= 8);
    assert!(
        examples
            .iter()
            .all(|e| !e["name"].as_str().unwrap().is_empty()
                && e["node_count"].as_u64().unwrap() > 0)
    );
    let response = server.call("use_example", &[("slug", "router")]).await;
    assert_eq!(response.status(), 200);
    let id: String = response.json().await.unwrap();
    let html = server
        .get(&format!("/graphs/{id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("Support router"));
    // The editor is rendered on the server with the graph's six nodes.
    assert_eq!(
        html.matches("class=\"canvas-node kind-").count(),
        6,
        "the page draws the graph"
    );
    assert_eq!(
        server
            .call("use_example", &[("slug", "nope")])
            .await
            .status(),
        404
    );
}
