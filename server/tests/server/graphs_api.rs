//! The graph server functions over HTTP, as the app and scripts call them.

use reqwest::Method;

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

/// The editor's save, the home page's delete and import: server functions
/// with JSON bodies, each behind the role it needs.
#[tokio::test]
async fn saving_importing_and_deleting_go_through_typed_server_functions() {
    use serde_json::{Value, json};

    let server = TestServer::start().await;
    let document = crate::api_runs::counting_loop(3);
    let graph = server.create_graph(document.clone()).await;
    let mut changed = document.clone();
    changed["name"] = json!("counting, renamed");
    let save = |base: i64| json!({"id": graph, "base_version": base, "document": changed});

    let saved = server.owner.call_json("save_graph", &save(1)).await;
    assert_eq!(saved.status(), 200);
    let saved: Value = saved.json().await.unwrap();
    assert_eq!(saved["version"], 2);
    // A save based on an older version is a conflict that says which
    // version is current; nothing is overwritten.
    let stale = server.owner.call_json("save_graph", &save(1)).await;
    assert_eq!(stale.status(), 409);
    let stale: Value = stale.json().await.unwrap();
    assert_eq!(stale["Conflict"]["current_version"], 2, "{stale}");
    // The same document again (an edit undone before the save went out)
    // makes no new version: the current one is answered.
    let again = server.owner.call_json("save_graph", &save(2)).await;
    assert_eq!(again.status(), 200);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["version"], 2, "{again}");
    let (_, versions) = server
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/graphs/{graph}/versions"),
            None,
        )
        .await;
    assert_eq!(versions.as_array().map(Vec::len), Some(2), "{versions}");
    // Not a graph document: says what is wrong, changes nothing.
    let broken = server
        .owner
        .call_json(
            "save_graph",
            &json!({"id": graph, "base_version": 2, "document": [1]}),
        )
        .await;
    assert_eq!(broken.status(), 422);

    // Others: a stranger does not learn the graph exists; a viewer may not save.
    let stranger = server.user("stan").await;
    let answer = stranger.call_json("save_graph", &save(2)).await;
    assert_eq!(answer.status(), 404);
    let (_, token) = server.share_link(&graph, "viewer").await;
    let viewer = server.user("vera").await;
    let (status, _) = viewer
        .api(
            reqwest::Method::POST,
            &format!("/api/v1/share/{token}"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(viewer.call_json("save_graph", &save(2)).await.status(), 403);
    assert_eq!(
        viewer
            .call_json("delete_graph", &json!({"id": graph}))
            .await
            .status(),
        403
    );

    // Import: checked first; a graph naming a credential the importer lacks
    // is refused until they have it.
    let mut needs_key = crate::api_runs::counting_loop(1);
    needs_key["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "ask", "kind": "llm", "config": {"credential": "openai"}}));
    let preview: Value = stranger
        .call_json("check_import", &json!({"document": needs_key}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        preview["missing_credentials"],
        json!(["openai"]),
        "{preview}"
    );
    assert_eq!(preview["nodes"], 3);
    let refused = stranger
        .call_json("import_graph", &json!({"document": needs_key}))
        .await;
    assert_eq!(refused.status(), 422);
    let imported = stranger
        .call_json(
            "import_graph",
            &json!({"document": crate::api_runs::counting_loop(2)}),
        )
        .await;
    assert_eq!(imported.status(), 200);
    let imported: Value = imported.json().await.unwrap();
    let (status, mine) = stranger
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/graphs/{}", imported["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["role"], "owner");

    // The owner deletes: the graph is gone for everyone.
    let deleted = server
        .owner
        .call_json("delete_graph", &json!({"id": graph}))
        .await;
    assert_eq!(deleted.status(), 200);
    let (status, _) = server
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/graphs/{graph}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
}

/// "New graph" → "Chat agent" makes a graph that can run at once; an
/// unknown template is a 404 naming it, and nothing is made.
#[tokio::test]
async fn the_chat_agent_template_makes_a_graph_that_runs_as_it_is() {
    let server = TestServer::start().await;
    let response = server
        .call("create_graph", &[("template", "chat-agent")])
        .await;
    assert_eq!(response.status(), 200);
    let id: String = response.json().await.unwrap();
    let (status, graph) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}"), None)
        .await;
    assert_eq!(status, 200, "{graph}");
    assert_eq!(graph["name"], "Chat agent");
    let run = server
        .start_run(&id, serde_json::json!({"input": {"messages": "hello"}}))
        .await;
    let finished = server.wait_for_run(&run).await;
    assert_eq!(finished["status"], "finished", "{finished}");

    let response = server
        .call("create_graph", &[("template", "../../etc/passwd")])
        .await;
    assert_eq!(response.status(), 404);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("template ../../etc/passwd")
    );
    let (_, list) = server.api(Method::GET, "/api/v1/graphs", None).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1));
}

/// Each version says what its save changed; restoring says so; a version
/// can be named, within limits, by editors.
#[tokio::test]
async fn versions_say_what_changed_and_can_be_named() {
    let server = TestServer::start().await;
    let (_, created) = server
        .api(Method::POST, "/api/v1/graphs", Some(serde_json::json!({})))
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    let (_, graph) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}"), None)
        .await;
    let mut document: serde_json::Value = graph["document"].clone();
    document["nodes"] = serde_json::json!([{"id": "start", "kind": "start"}]);
    let (status, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{id}"),
            Some(serde_json::json!({"base_version": 1, "document": document})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    let response = server
        .call("restore_version", &[("graph_id", &id), ("version", "1")])
        .await;
    assert_eq!(response.status(), 200);
    let response = server
        .call(
            "label_version",
            &[
                ("graph_id", &id),
                ("version", "2"),
                ("label", "  with a start  "),
            ],
        )
        .await;
    assert_eq!(response.status(), 200);
    let (_, versions) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}/versions"), None)
        .await;
    let described: Vec<(i64, &str, Option<&str>)> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_i64().unwrap(),
                v["summary"].as_str().unwrap(),
                v["label"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            (3, "restored version 1", None),
            (2, "added node `start`", Some("with a start")),
            (1, "created the graph", None),
        ]
    );
    for (label, error) in [
        ("x".repeat(81), "at most 80 characters"),
        ("two\nlines".to_string(), "one line of text"),
    ] {
        let response = server
            .call(
                "label_version",
                &[("graph_id", &id), ("version", "2"), ("label", &label)],
            )
            .await;
        assert_eq!(response.status(), 400);
        assert!(response.text().await.unwrap().contains(error));
    }
    let response = server
        .call(
            "label_version",
            &[("graph_id", &id), ("version", "9"), ("label", "nope")],
        )
        .await;
    assert_eq!(response.status(), 404);
}
