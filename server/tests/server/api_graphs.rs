//! The graph API: CRUD, versions and conflicts, import and export, limits,
//! and errors as JSON with the right status.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestServer, error_message};

fn document(name: &str) -> Value {
    json!({
        "format_version": 2, "name": name,
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "tick"}]
    })
}

#[tokio::test]
async fn create_get_list_and_delete() {
    let server = TestServer::start().await;
    let id = server.create_graph(document("Counter")).await;
    let (status, graph) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(graph["name"], "Counter");
    assert_eq!(graph["version"], 1);
    assert_eq!(graph["document"]["nodes"][1]["id"], "tick");

    let (status, empty) = server
        .api(Method::POST, "/api/v1/graphs", Some(json!({})))
        .await;
    assert_eq!(status, 201);
    let (_, list) = server.api(Method::GET, "/api/v1/graphs", None).await;
    assert_eq!(list.as_array().unwrap().len(), 2);

    let (status, _) = server
        .api(Method::DELETE, &format!("/api/v1/graphs/{id}"), None)
        .await;
    assert_eq!(status, 204);
    let (status, body) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}"), None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "not_found");
    let (status, _) = server
        .api(Method::DELETE, &format!("/api/v1/graphs/{id}"), None)
        .await;
    assert_eq!(status, 404);
    let (_, list) = server.api(Method::GET, "/api/v1/graphs", None).await;
    assert_eq!(list[0]["id"], empty["id"]);
}

#[tokio::test]
async fn a_save_on_an_old_version_is_a_conflict_and_overwrites_nothing() {
    let server = TestServer::start().await;
    let id = server.create_graph(document("Shared")).await;
    let path = format!("/api/v1/graphs/{id}");

    let (status, saved) = server
        .api(
            Method::PUT,
            &path,
            Some(json!({"base_version": 1, "document": document("Alice's edit")})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["version"], 2);
    assert_eq!(saved["problems"], json!([]));

    // Bob edited version 1 too, and saves after Alice.
    let (status, conflict) = server
        .api(
            Method::PUT,
            &path,
            Some(json!({"base_version": 1, "document": document("Bob's edit")})),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(conflict["error"]["code"], "conflict");
    assert_eq!(conflict["error"]["base_version"], 1);
    assert_eq!(conflict["error"]["current_version"], 2);
    let (_, graph) = server.api(Method::GET, &path, None).await;
    assert_eq!(graph["name"], "Alice's edit", "nothing was overwritten");

    // Both versions stay available, and an old one can be restored.
    let (_, versions) = server
        .api(Method::GET, &format!("{path}/versions"), None)
        .await;
    let numbers: Vec<i64> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [2, 1]);
    let (_, first) = server
        .api(Method::GET, &format!("{path}/versions/1"), None)
        .await;
    assert_eq!(first["name"], "Shared");
    let (status, restored) = server
        .api(Method::POST, &format!("{path}/versions/1/restore"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(restored["version"], 3);
    let (_, graph) = server.api(Method::GET, &path, None).await;
    assert_eq!(graph["name"], "Shared");
    assert_eq!(graph["version"], 3);
}

#[tokio::test]
async fn saving_a_graph_with_problems_keeps_it_and_lists_them() {
    let server = TestServer::start().await;
    let id = server.create_graph(document("WIP")).await;
    let mut broken = document("WIP");
    broken["edges"] = json!([{"id": "e1", "from": "start", "to": "nowhere"}]);
    let (status, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{id}"),
            Some(json!({"base_version": 1, "document": broken})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(saved["problems"][0]["path"], "edges[0].to");
    assert_eq!(saved["problems"][0]["kind"]["code"], "missing_node");
}

#[tokio::test]
async fn bad_requests_say_what_and_where() {
    let server = TestServer::start().await;
    let id = server.create_graph(document("x")).await;
    let path = format!("/api/v1/graphs/{id}");

    let (status, body) = server
        .api(Method::PUT, &path, Some(json!({"base_version": 1, "document": {"format_version": 2, "name": "x", "nodes": [{"kind": "set"}]}})))
        .await;
    assert_eq!(status, 422);
    assert!(error_message(&body).contains("nodes[0]"), "{body}");

    let (status, body) = server
        .api(Method::PUT, &path, Some(json!({"document": document("x")})))
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("base_version"), "{body}");

    let response = server
        .client
        .put(server.url(&path))
        .header("content-type", "application/json")
        .body("{ not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_input");

    let response = server
        .client
        .put(server.url(&path))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);

    let (status, _) = server
        .api(Method::GET, "/api/v1/graphs/not-a-uuid", None)
        .await;
    assert_eq!(status, 404);
    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": {"format_version": 99, "name": "future"}})),
        )
        .await;
    assert_eq!(status, 422);
    assert!(error_message(&body).contains("newer"), "{body}");
}

#[tokio::test]
async fn limits_are_enforced_with_clear_errors() {
    let server = TestServer::start().await;
    let mut big = document("big");
    big["nodes"] = json!(
        (0..2001)
            .map(|i| json!({"id": format!("n{i}"), "kind": "end"}))
            .collect::<Vec<_>>()
    );
    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": big})),
        )
        .await;
    assert_eq!(status, 413);
    assert!(
        error_message(&body).contains("2001 nodes; the limit is 2000"),
        "{body}"
    );

    let huge = "x".repeat(9 * 1024 * 1024);
    let response = server
        .client
        .post(server.url("/api/v1/graphs/import"))
        .header("content-type", "application/json")
        .body(format!("{{\"name\": \"{huge}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_large");
}

#[tokio::test]
async fn import_with_a_dry_run_then_for_real_and_export_round_trips() {
    let server = TestServer::start().await;
    let mut with_problem = document("Imported");
    with_problem["edges"] =
        json!([{"id": "e1", "from": "start", "to": "tick", "condition": "count >"}]);

    let (status, dry) = server
        .api(
            Method::POST,
            "/api/v1/graphs/import?dry_run=true",
            Some(with_problem.clone()),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        dry["would_create"],
        json!({"name": "Imported", "nodes": 2, "edges": 1, "channels": 1})
    );
    assert_eq!(dry["problems"][0]["path"], "edges[0].condition");
    let (_, list) = server.api(Method::GET, "/api/v1/graphs", None).await;
    assert!(
        list.as_array().unwrap().is_empty(),
        "a dry run creates nothing"
    );

    let (status, created) = server
        .api(
            Method::POST,
            "/api/v1/graphs/import",
            Some(document("Imported")),
        )
        .await;
    assert_eq!(status, 201);
    let id = created["id"].as_str().unwrap();
    let response = server
        .client
        .get(server.url(&format!("/api/v1/graphs/{id}/export")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("imported.heddle.json")
    );
    let exported = response.text().await.unwrap();
    let again = heddle_engine::GraphDocument::from_json(&exported)
        .unwrap()
        .to_json();
    assert_eq!(
        exported, again,
        "an export is canonical: exporting it again changes nothing"
    );

    let (status, body) = server
        .api(Method::POST, "/api/v1/graphs/import", Some(json!([1, 2])))
        .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "invalid_input");
    assert!(
        error_message(&body).contains("must be a JSON object"),
        "{body}"
    );
}

/// A tool this test's server offers (as an MCP server's would be).
struct Lookup;

impl heddle_engine::tools::Tool for Lookup {
    fn spec(&self) -> heddle_engine::model::ToolSpec {
        heddle_engine::model::ToolSpec {
            name: "crm__lookup".into(),
            description: "Looks a customer up".into(),
            parameters: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        }
    }

    fn call(&self, arguments: Value) -> heddle_engine::tools::ToolFuture<'_> {
        Box::pin(async move { Ok(json!({"customer": arguments["id"]})) })
    }
}

#[tokio::test]
async fn graphs_are_validated_against_the_tools_the_server_runs_with() {
    let registry = heddle_engine::Registry::new().with_tool(Lookup);
    let server = TestServer::start_with_registry(registry).await;
    let agent = |tool: &str| {
        json!({
            "format_version": 2, "name": "agent",
            "state": {"channels": {"messages": {"type": "messages"}}},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
                {"id": "agent", "kind": "agent", "config": {"tools": [tool]}}
            ],
            "edges": [{"id": "e", "from": "start", "to": "agent"}]
        })
    };
    let id = server.create_graph(agent("crm__lookup")).await;
    let (status, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{id}"),
            Some(json!({"base_version": 1, "document": agent("crm__lookup")})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(
        saved["problems"],
        json!([]),
        "the server's own tool is known"
    );
    let (_, saved) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{id}"),
            Some(json!({"base_version": saved["version"], "document": agent("crm__missing")})),
        )
        .await;
    assert!(
        saved["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("crm__missing"),
        "{saved}"
    );

    // The editor gets the same catalog, with each tool's spec.
    let catalog: Value = server.call("catalog", &[]).await.json().await.unwrap();
    let tools = catalog["tools"].as_array().unwrap();
    let lookup = tools.iter().find(|tool| tool["name"] == "crm__lookup");
    assert_eq!(
        lookup.unwrap()["description"],
        "Looks a customer up",
        "{catalog}"
    );
    assert!(
        catalog["models"]
            .as_array()
            .unwrap()
            .contains(&json!("offline"))
    );
}
