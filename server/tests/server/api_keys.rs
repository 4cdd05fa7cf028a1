//! API keys over real HTTP: what a key may do (run the published version
//! of the graphs it names; read what its scope allows), and everything a
//! key, a stranger or a former editor must not get from one.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::support::{KeyClient, TestServer, error_message, status_and_json};

/// Invokes `graph` with a key and waits for the result.
async fn invoke(key: &KeyClient, graph: &str, input: Value) -> (u16, Value) {
    key.api(
        Method::POST,
        &format!("/api/v1/graphs/{graph}/invoke"),
        Some(json!({"input": input})),
    )
    .await
}

#[tokio::test]
async fn a_key_runs_the_published_version_of_its_graphs_and_nothing_else() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    // The draft moves on to version 2, which counts by twos; version 1,
    // counting by ones, is live.
    let mut by_twos = counting_loop(2);
    by_twos["nodes"][1]["config"]["values"]["count"]["value"] = json!(2);
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": by_twos})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    server.publish(&graph, 1).await;
    let other = server.create_graph(counting_loop(1)).await;

    let made = server
        .owner
        .make_key(json!({"name": "support site", "graphs": [graph]}))
        .await;
    let secret = made["secret"].as_str().unwrap();
    assert!(secret.starts_with("heddle_") && secret.len() > 60, "{made}");
    assert_eq!(made["key"]["scope"], "run", "run only by default");
    assert!(secret.starts_with(made["key"]["prefix"].as_str().unwrap()));
    assert_eq!(made["key"]["graphs"][0]["id"], graph.as_str());
    // The secret is shown once: never in the list, and not stored as such.
    let (_, listed) = server.api(Method::GET, "/api/v1/keys", None).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(!listed.to_string().contains(secret), "{listed}");
    let stored: Vec<String> = {
        let db = server.db().await;
        heddle_store::on_db!(&db, pool => sqlx::query_scalar::<_, String>("SELECT secret_sha256 FROM api_keys")
            .fetch_all(pool)
            .await)
        .unwrap()
    };
    assert!(
        stored
            .iter()
            .all(|hash| !secret.contains(hash.as_str()) && hash.len() == 64)
    );

    let key = KeyClient::new(server.addr, secret);
    let (status, result) = invoke(&key, &graph, json!({"target": 3})).await;
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["status"], "finished");
    assert_eq!(
        result["graph_version"], 1,
        "the published version, not the draft"
    );
    assert_eq!(result["output"]["count"], 3, "by ones: {result}");
    let run_id = result["run_id"].as_str().unwrap();

    // The key reads the run it started; the owner sees where it came from.
    let (status, run) = key
        .api(Method::GET, &format!("/api/v1/runs/{run_id}"), None)
        .await;
    assert_eq!(status, 200, "{run}");
    let (status, events) = key
        .api(Method::GET, &format!("/api/v1/runs/{run_id}/events"), None)
        .await;
    assert_eq!(status, 200, "{events}");
    assert!(!events.as_array().unwrap().is_empty());
    let (_, runs) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(runs[0]["origin"], "api_key");
    assert_eq!(runs[0]["origin_label"], "support site");
    assert_eq!(runs[0]["started_by"], "owner");
    let (_, listed) = server.api(Method::GET, "/api/v1/keys", None).await;
    assert!(listed[0]["last_used_at"].is_string(), "{listed}");

    // A run-only key reads nothing else, changes nothing, runs no draft.
    let app_run = server.start_run(&graph, json!({"input": {}})).await;
    let refused: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, format!("/api/v1/graphs/{graph}"), None),
        (Method::GET, format!("/api/v1/graphs/{graph}/runs"), None),
        (Method::GET, format!("/api/v1/runs/{app_run}"), None),
        (
            Method::PUT,
            format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 2, "document": counting_loop(9)})),
        ),
        (
            Method::POST,
            format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {}})),
        ),
        (
            Method::PUT,
            format!("/api/v1/graphs/{graph}/published"),
            Some(json!({"version": 2})),
        ),
        (Method::DELETE, format!("/api/v1/graphs/{graph}"), None),
        (Method::GET, "/api/v1/graphs".into(), None),
        (Method::GET, "/api/v1/keys".into(), None),
        (
            Method::POST,
            "/api/v1/keys".into(),
            Some(json!({"name": "mine", "graphs": [graph]})),
        ),
        (Method::GET, "/api/v1/secrets".into(), None),
        (Method::GET, "/api/v1/auth/me".into(), None),
        (Method::POST, format!("/api/v1/graphs/{graph}/copy"), None),
        (Method::POST, "/api/v1/auth/logout".into(), None),
    ];
    for (method, path, body) in refused {
        let (status, answer) = key.api(method.clone(), &path, body).await;
        assert_eq!(status, 403, "{method} {path}: {answer}");
        assert!(
            error_message(&answer).contains("API key `support site`"),
            "{method} {path}: {answer}"
        );
    }
    // A key's request from a page elsewhere is still the key's (no cookie
    // rides on it, so the cross-site guard has nothing to guard).
    let from_elsewhere = key
        .request(Method::POST, &format!("/api/v1/graphs/{graph}/invoke"))
        .header("origin", "https://integrations.example")
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"input": {"target": 1}}))
        .send()
        .await
        .unwrap();
    assert_eq!(from_elsewhere.status(), 200);
    // A graph it does not name does not exist for it.
    let (status, answer) = invoke(&key, &other, json!({})).await;
    assert_eq!(status, 404, "{answer}");
    // Pages never take a key: it is the log-in page for them.
    let page = key.request(Method::GET, "/").send().await.unwrap();
    assert_eq!(page.status(), 303);
    // Nor does the websocket.
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{}/api/v1/ws", server.addr)
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {secret}").parse().unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 403);
        }
        other => panic!("the websocket took a key: {:?}", other.map(|_| ())),
    }

    // The owner's work is unchanged.
    let (_, graph_now) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(graph_now["version"], 2);
}

#[tokio::test]
async fn a_new_keys_example_fills_the_inputs_of_the_version_it_runs() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let mut two_inputs = counting_loop(2);
    two_inputs["nodes"][0]["config"]["inputs"] = json!(["target", "count"]);
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": two_inputs})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // Nothing published: the newest version's inputs, and the key says so.
    let made = server
        .owner
        .make_key(json!({"name": "early", "graphs": [graph]}))
        .await;
    assert_eq!(made["published"], false, "{made}");
    assert_eq!(made["example_input"], json!({"target": 1, "count": 1}));

    // Version 1 live: its inputs, and the example runs as it is.
    server.publish(&graph, 1).await;
    let made = server
        .owner
        .make_key(json!({"name": "live", "graphs": [graph]}))
        .await;
    assert_eq!(made["published"], true, "{made}");
    assert_eq!(made["example_input"], json!({"target": 1}));
    let key = KeyClient::new(server.addr, made["secret"].as_str().unwrap());
    let (status, result) = invoke(&key, &graph, made["example_input"].clone()).await;
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["status"], "finished", "{result}");
}

#[tokio::test]
async fn a_read_key_reads_its_graphs_and_still_changes_nothing() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    server.publish(&graph, 1).await;
    let app_run = server.start_run(&graph, json!({"input": {}})).await;
    server.wait_for_run(&app_run).await;
    let key = server.owner.key_client("read", &[&graph]).await;

    for path in [
        format!("/api/v1/graphs/{graph}"),
        format!("/api/v1/graphs/{graph}/runs"),
        format!("/api/v1/graphs/{graph}/versions"),
        format!("/api/v1/graphs/{graph}/published"),
        format!("/api/v1/runs/{app_run}"),
        format!("/api/v1/runs/{app_run}/events"),
    ] {
        let (status, answer) = key.api(Method::GET, &path, None).await;
        assert_eq!(status, 200, "{path}: {answer}");
    }
    for (method, path) in [
        (Method::DELETE, format!("/api/v1/graphs/{graph}/published")),
        (Method::POST, format!("/api/v1/runs/{app_run}/cancel")),
        (Method::GET, format!("/api/v1/graphs/{graph}/sharing")),
        (Method::DELETE, format!("/api/v1/graphs/{graph}")),
    ] {
        let (status, answer) = key.api(method.clone(), &path, None).await;
        assert_eq!(status, 403, "{method} {path}: {answer}");
    }
    let (status, _) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 200, "the graph is still there");
}

#[tokio::test]
async fn revoked_expired_and_forged_keys_are_refused_saying_why() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    server.publish(&graph, 1).await;

    let made = server
        .owner
        .make_key(json!({"name": "ci", "graphs": [graph], "expires_in_days": 30}))
        .await;
    assert!(made["key"]["expires_at"].is_string());
    let key = KeyClient::new(server.addr, made["secret"].as_str().unwrap());
    assert_eq!(invoke(&key, &graph, json!({})).await.0, 200);

    // Expired: its time is up (aged in the database).
    {
        let db = server.db().await;
        heddle_store::on_db!(&db, pool => sqlx::query("UPDATE api_keys SET expires_at = '2020-01-01T00:00:00.000Z'")
            .execute(pool)
            .await
            .map(|_| ()))
        .unwrap();
    }
    let (status, answer) = invoke(&key, &graph, json!({})).await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(
        error_message(&answer),
        "API key refused: key `ci` expired at 2020-01-01T00:00:00.000Z"
    );

    // Revoked: refused at once, and says so.
    let second = server
        .owner
        .make_key(json!({"name": "bot", "graphs": [graph]}))
        .await;
    let key = KeyClient::new(server.addr, second["secret"].as_str().unwrap());
    assert_eq!(invoke(&key, &graph, json!({})).await.0, 200);
    let id = second["key"]["id"].as_str().unwrap();
    // Nobody else can revoke it, or tell it exists.
    let stranger = server.user("mallory").await;
    let (status, _) = stranger
        .api(Method::DELETE, &format!("/api/v1/keys/{id}"), None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(invoke(&key, &graph, json!({})).await.0, 200);
    let (status, _) = server
        .api(Method::DELETE, &format!("/api/v1/keys/{id}"), None)
        .await;
    assert_eq!(status, 204);
    let (status, answer) = invoke(&key, &graph, json!({})).await;
    assert_eq!(status, 401, "{answer}");
    assert!(error_message(&answer).starts_with("API key refused: key `bot` was revoked at"));
    let (_, listed) = server.api(Method::GET, "/api/v1/keys", None).await;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|key| key["active"] == false),
        "{listed}"
    );

    // Forged and mistyped secrets.
    for (secret, why) in [
        ("heddle_0000", "API key refused: no such key"),
        (
            "sk-live-1234",
            "API key refused: not a Heddle API key (they start with `heddle_`); make one under \
             Settings, API keys",
        ),
    ] {
        let (status, answer) =
            invoke(&KeyClient::new(server.addr, secret), &graph, json!({})).await;
        assert_eq!(status, 401, "{answer}");
        assert_eq!(error_message(&answer), why);
    }
}

#[tokio::test]
async fn keys_never_reach_past_their_makers_access() {
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

    // A key is made only for graphs its maker can run.
    let refusal = || async {
        let (status, answer) = eddie
            .api(
                Method::POST,
                "/api/v1/keys",
                Some(json!({"name": "x", "graphs": [graph]})),
            )
            .await;
        assert_eq!(status, 400, "{answer}");
        error_message(&answer).to_string()
    };
    assert_eq!(
        refusal().await,
        format!("`graphs[0]`: graph {graph} was not found")
    );
    set_role("viewer").await;
    assert_eq!(
        refusal().await,
        "`graphs[0]`: you are a viewer of this graph; this needs the editor role"
    );
    for (request, why) in [
        (
            json!({"name": " ", "graphs": [graph]}),
            "`name`: a key's name is 1 to 64 characters",
        ),
        (
            json!({"name": "k", "graphs": []}),
            "`graphs`: a key works on 1 to 100 graphs",
        ),
        (
            json!({"name": "k", "graphs": [graph], "expires_in_days": 0}),
            "`expires_in_days`: 1 to 3650 days, not 0",
        ),
    ] {
        let (status, answer) = server
            .api(Method::POST, "/api/v1/keys", Some(request))
            .await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(error_message(&answer), why);
    }

    // An editor's key stops working when they stop being an editor, and
    // when they lose the graph altogether.
    set_role("editor").await;
    let made = eddie
        .make_key(json!({"name": "eddie's", "graphs": [graph]}))
        .await;
    let key = KeyClient::new(server.addr, made["secret"].as_str().unwrap());
    assert_eq!(invoke(&key, &graph, json!({})).await.0, 200);
    set_role("viewer").await;
    let (status, answer) = invoke(&key, &graph, json!({})).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(
        error_message(&answer),
        "API key `eddie's` belongs to eddie, who is a viewer of this graph; running it needs \
         the editor role"
    );
    set_role("none").await;
    let (status, answer) = invoke(&key, &graph, json!({})).await;
    assert_eq!(status, 404, "{answer}");
}

#[tokio::test]
async fn the_graphs_page_opens_on_the_last_run_started_from_the_editor_not_a_keys() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let run_to_show = || async {
        let (status, body) = status_and_json(
            server
                .call("run_to_show", &[("graph_id", graph.as_str())])
                .await,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        body
    };
    assert_eq!(run_to_show().await, Value::Null, "no run yet");
    // A run started from the editor (the session), finished: the page
    // opens on it.
    let mine = server
        .start_run(&graph, json!({"input": {"target": 2}}))
        .await;
    assert_eq!(server.wait_for_run(&mine).await["status"], "finished");
    assert_eq!(run_to_show().await, json!(mine));
    // A caller's run with a key, finished since: the page still opens on
    // the editor's.
    server.publish(&graph, 1).await;
    let made = server
        .owner
        .make_key(json!({"name": "site", "graphs": [graph]}))
        .await;
    let key = KeyClient::new(server.addr, made["secret"].as_str().unwrap());
    let (status, result) = invoke(&key, &graph, json!({"target": 3})).await;
    assert_eq!(status, 200, "{result}");
    assert_ne!(result["run_id"], json!(mine));
    assert_eq!(run_to_show().await, json!(mine));
    // The graph edited since (version 2): that run is not drawn over it.
    let mut edited = counting_loop(2);
    edited["name"] = json!("edited");
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}"),
            Some(json!({"base_version": 1, "document": edited})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(run_to_show().await, Value::Null);
    let again = server
        .start_run(&graph, json!({"input": {"target": 2}}))
        .await;
    assert_eq!(server.wait_for_run(&again).await["status"], "finished");
    assert_eq!(run_to_show().await, json!(again));
    // A stranger is told nothing of it.
    let stranger = server.user("stranger").await;
    let refused = stranger
        .call("run_to_show", &[("graph_id", graph.as_str())])
        .await;
    assert!(!refused.status().is_success());
    assert!(!refused.text().await.unwrap_or_default().contains(&again));
}
