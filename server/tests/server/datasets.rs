//! Datasets over real HTTP: versions that read back as they were, bad
//! examples refused where they are wrong, a run made into an example,
//! changes at once never lost, and who may do what (a viewer reads, a
//! stranger sees nothing, nobody is asked to log in).

use reqwest::Method;
use serde_json::{Value, json};

use crate::invoke::chat_graph;
use crate::support::{TestServer, error_message};

fn asked(text: &str) -> Value {
    json!({"input": {"messages": [{"role": "user", "content": text}]},
           "reference": {"answer": text.to_uppercase()}, "label": text})
}

fn inputs(version: &Value) -> Vec<String> {
    version["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|example| example["label"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn every_change_is_a_version_and_old_versions_read_back_as_they_were() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (status, made) = server
        .api(
            Method::POST,
            &base,
            Some(json!({"name": "support questions"})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["version"], 0);
    assert_eq!(made["examples"], 0);
    let dataset = format!("{base}/{}", made["id"].as_str().unwrap());

    let (status, changed) = server
        .api(
            Method::POST,
            &format!("{dataset}/examples"),
            Some(json!({"examples": [asked("refund"), asked("invoice"), asked("hours")]})),
        )
        .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        (changed["version"].as_i64(), changed["examples"].as_i64()),
        (Some(1), Some(3))
    );
    let (_, first) = server.api(Method::GET, &dataset, None).await;
    assert_eq!(inputs(&first), ["refund", "invoice", "hours"]);
    assert_eq!(
        first["examples"][0]["reference"],
        json!({"answer": "REFUND"})
    );
    let invoice = first["examples"][1]["id"].as_str().unwrap().to_string();
    let hours = first["examples"][2]["id"].as_str().unwrap().to_string();

    // Replaced in place (version 2), then one removed (version 3).
    let (status, changed) = server
        .api(
            Method::PUT,
            &format!("{dataset}/examples/{invoice}"),
            Some(asked("invoice copy")),
        )
        .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["version"], 2);
    let (status, changed) = server
        .api(Method::DELETE, &format!("{dataset}/examples/{hours}"), None)
        .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        (changed["version"].as_i64(), changed["examples"].as_i64()),
        (Some(3), Some(2))
    );

    let read = |version: i64| {
        let path = format!("{dataset}?version={version}");
        let server = &server;
        async move { server.api(Method::GET, &path, None).await }
    };
    for (version, expected) in [
        (0, vec![]),
        (1, vec!["refund", "invoice", "hours"]),
        (2, vec!["refund", "invoice copy", "hours"]),
        (3, vec!["refund", "invoice copy"]),
    ] {
        let (status, body) = read(version).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(inputs(&body), expected, "version {version}");
        assert_eq!(body["total"], expected.len());
    }
    let (status, body) = read(4).await;
    assert_eq!(status, 404, "{body}");
    let (status, page) = server
        .api(
            Method::GET,
            &format!("{dataset}?version=1&offset=1&limit=1"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        (inputs(&page), page["total"].as_i64()),
        (vec!["invoice".to_string()], Some(3))
    );

    // The removed example is gone from the latest version: changing it
    // again is "not found", and makes no version.
    let (status, body) = server
        .api(Method::DELETE, &format!("{dataset}/examples/{hours}"), None)
        .await;
    assert_eq!(status, 404, "{body}");
    let (_, latest) = server.api(Method::GET, &dataset, None).await;
    assert_eq!(latest["version"], 3);
    assert_eq!(latest["dataset"]["version"], 3);
}

#[tokio::test]
async fn bad_examples_are_refused_where_they_are_wrong() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (_, made) = server
        .api(Method::POST, &base, Some(json!({"name": "one"})))
        .await;
    let examples = format!("{base}/{}/examples", made["id"].as_str().unwrap());
    let refused = |body: Value| {
        let server = &server;
        let examples = examples.clone();
        async move {
            let (status, answer) = server.api(Method::POST, &examples, Some(body)).await;
            assert_eq!(status, 400, "{answer}");
            error_message(&answer).to_string()
        }
    };
    let mut deep = json!(1);
    for _ in 0..100 {
        deep = json!([deep]);
    }
    let message = refused(json!({"examples": [asked("fine"), {"input": {"x": deep}}]})).await;
    assert!(message.starts_with("`examples[1].input`: "), "{message}");
    let message = refused(json!({"examples": [{"input": {}, "label": "x".repeat(201)}]})).await;
    assert!(
        message.starts_with("`examples[0].label`: at most 200"),
        "{message}"
    );
    let message = refused(json!({"examples": []})).await;
    assert!(message.contains("1 to 1000"), "{message}");
    let message = refused(json!({"examples": [{"input": "not an object"}]})).await;
    assert!(message.contains("examples[0].input"), "{message}");
    let (status, answer) = server
        .api(Method::POST, &base, Some(json!({"name": "one"})))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(error_message(&answer).contains("already has a dataset named `one`"));
    let (status, answer) = server
        .api(Method::POST, &base, Some(json!({"name": "  "})))
        .await;
    assert_eq!(status, 400, "{answer}");
    // Nothing refused made a version.
    let (_, list) = server.api(Method::GET, &base, None).await;
    assert_eq!(list[0]["version"], 0, "{list}");
}

#[tokio::test]
async fn a_finished_run_becomes_an_example_of_its_own_graph_only() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    let other = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (_, made) = server
        .api(Method::POST, &base, Some(json!({"name": "from chats"})))
        .await;
    let dataset = format!("{base}/{}", made["id"].as_str().unwrap());
    let input = json!({"messages": [{"role": "user", "content": "My name is Ada."}]});
    let run = server.start_run(&graph, json!({"input": input})).await;
    server.wait_for_run(&run).await;
    let (status, changed) = server
        .api(
            Method::POST,
            &format!("{dataset}/examples/from-run"),
            Some(json!({"run_id": run, "label": "name"})),
        )
        .await;
    assert_eq!(status, 200, "{changed}");
    let (_, version) = server.api(Method::GET, &dataset, None).await;
    let example = &version["examples"][0];
    assert_eq!(example["input"], input);
    assert_eq!(example["source_run"], run);
    let answer = example["reference"]["answer"].as_str().unwrap();
    assert!(answer.starts_with("(offline model)"), "{example}");

    // The thread's next turn, with the conversation before it: the
    // example asks the second question after the first and its answer.
    let thread = version["examples"][0]["source_run"].as_str().unwrap();
    let (_, first) = server
        .api(Method::GET, &format!("/api/v1/runs/{thread}"), None)
        .await;
    let second = server
        .start_run(
            &graph,
            json!({"input": {"messages": [{"role": "user", "content": "What is my name?"}]},
                   "thread_id": first["thread_id"]}),
        )
        .await;
    server.wait_for_run(&second).await;
    for (with, asked) in [
        (false, vec!["What is my name?"]),
        (true, vec!["My name is Ada.", "", "What is my name?"]),
    ] {
        let (status, changed) = server
            .api(
                Method::POST,
                &format!("{dataset}/examples/from-run"),
                Some(json!({"run_id": second, "with_conversation": with})),
            )
            .await;
        assert_eq!(status, 200, "{changed}");
        let (_, version) = server.api(Method::GET, &dataset, None).await;
        let example = version["examples"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let messages = example["input"]["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        let texts: Vec<&str> = messages
            .iter()
            .map(|m| {
                if m["role"] == "user" {
                    m["content"].as_str().unwrap()
                } else {
                    ""
                }
            })
            .collect();
        assert_eq!(texts, asked, "{example}");
        if with {
            assert_eq!(roles, ["user", "assistant", "user"]);
        }
        // The answer the thread gave is the reference either way; only
        // the example with the conversation asks in the context it needs.
        assert!(
            example["reference"]["answer"]
                .as_str()
                .unwrap()
                .contains("Your name is Ada."),
            "{example}"
        );
    }

    let elsewhere = server
        .start_run(
            &other,
            json!({"input": {"messages": [{"role": "user", "content": "hi"}]}}),
        )
        .await;
    server.wait_for_run(&elsewhere).await;
    for run_id in [elsewhere.as_str(), "no-such-run"] {
        let (status, body) = server
            .api(
                Method::POST,
                &format!("{dataset}/examples/from-run"),
                Some(json!({"run_id": run_id})),
            )
            .await;
        assert_eq!(status, 404, "{body}");
    }
}

#[tokio::test]
async fn changes_made_at_once_are_each_a_version_and_none_is_lost() {
    let server = std::sync::Arc::new(TestServer::start().await);
    let graph = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (_, made) = server
        .api(Method::POST, &base, Some(json!({"name": "busy"})))
        .await;
    let dataset = format!("{base}/{}", made["id"].as_str().unwrap());
    let mut tasks = Vec::new();
    for writer in 0..8 {
        let server = server.clone();
        let examples = format!("{dataset}/examples");
        tasks.push(tokio::spawn(async move {
            let body =
                json!({"examples": [asked(&format!("w{writer}a")), asked(&format!("w{writer}b"))]});
            let (status, changed) = server.api(Method::POST, &examples, Some(body)).await;
            assert_eq!(status, 200, "{changed}");
            changed["version"].as_i64().unwrap()
        }));
    }
    let mut versions = Vec::new();
    for task in tasks {
        versions.push(task.await.unwrap());
    }
    versions.sort_unstable();
    assert_eq!(versions, (1..=8).collect::<Vec<_>>());
    let (_, latest) = server.api(Method::GET, &dataset, None).await;
    assert_eq!(latest["total"], 16);
    // Each writer's two examples are side by side, in their order.
    let labels = inputs(&latest);
    for pair in labels.chunks(2) {
        assert_eq!(
            pair[0].trim_end_matches('a'),
            pair[1].trim_end_matches('b'),
            "{labels:?}"
        );
    }
}

#[tokio::test]
async fn a_viewer_reads_a_stranger_sees_nothing_and_nobody_must_log_in() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (_, made) = server
        .api(Method::POST, &base, Some(json!({"name": "shared"})))
        .await;
    let dataset = format!("{base}/{}", made["id"].as_str().unwrap());
    let examples = format!("{dataset}/examples");
    server
        .api(
            Method::POST,
            &examples,
            Some(json!({"examples": [asked("one")]})),
        )
        .await;
    let (_, version) = server.api(Method::GET, &dataset, None).await;
    let example = format!(
        "{examples}/{}",
        version["examples"][0]["id"].as_str().unwrap()
    );

    let writes = [
        (Method::POST, base.clone(), Some(json!({"name": "mine"}))),
        (
            Method::PUT,
            dataset.clone(),
            Some(json!({"name": "renamed"})),
        ),
        (
            Method::POST,
            examples.clone(),
            Some(json!({"examples": [asked("two")]})),
        ),
        (Method::PUT, example.clone(), Some(asked("changed"))),
        (Method::DELETE, example.clone(), None),
        (Method::DELETE, dataset.clone(), None),
    ];
    let reads = [
        (Method::GET, base.clone(), None),
        (Method::GET, dataset.clone(), None),
    ];
    server
        .viewer_reads_and_strangers_see_nothing(&graph, &reads, &writes)
        .await;
    // Nothing a viewer tried changed the dataset.
    let (_, after) = server.api(Method::GET, &dataset, None).await;
    assert_eq!(
        (after["version"].as_i64(), after["total"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(after["dataset"]["name"], "shared");
}

/// The Datasets dialog's server functions keep the same rules as the
/// endpoints: a viewer reads the table and changes nothing, a stranger
/// gets 404 and nobody 401, and an editor's table edits and imports make
/// versions.
#[tokio::test]
async fn the_dialogs_functions_let_a_viewer_read_and_only_editors_change() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    let base = format!("/api/v1/graphs/{graph}/datasets");
    let (_, made) = server
        .api(Method::POST, &base, Some(json!({"name": "table"})))
        .await;
    let dataset = made["id"].as_str().unwrap().to_string();
    server
        .api(
            Method::POST,
            &format!("{base}/{dataset}/examples"),
            Some(json!({"examples": [asked("one"), asked("two")]})),
        )
        .await;
    let (_, version) = server
        .api(Method::GET, &format!("{base}/{dataset}"), None)
        .await;
    let first = version["examples"][0]["id"].as_str().unwrap().to_string();
    let page = [
        ("graph_id", graph.as_str()),
        ("dataset_id", dataset.as_str()),
        ("offset", "1"),
        ("limit", "1"),
    ];
    let add = json!({"graph_id": graph, "dataset_id": dataset,
                     "new": {"examples": [asked("three")]}});
    let replace = json!({"graph_id": graph, "dataset_id": dataset, "example_id": first,
                         "example": asked("edited")});
    let remove = [
        ("graph_id", graph.as_str()),
        ("dataset_id", dataset.as_str()),
        ("example_id", first.as_str()),
    ];
    let delete = [
        ("graph_id", graph.as_str()),
        ("dataset_id", dataset.as_str()),
    ];

    let vera = server.user("vera").await;
    let nobody = server.anonymous();
    for (who, status) in [(&vera, 404), (&nobody, 401)] {
        assert_eq!(who.call("dataset_examples", &page).await.status(), status);
        assert_eq!(who.call_json("add_examples", &add).await.status(), status);
        assert_eq!(
            who.call_json("replace_example", &replace).await.status(),
            status
        );
        assert_eq!(who.call("remove_example", &remove).await.status(), status);
        assert_eq!(who.call("delete_dataset", &delete).await.status(), status);
    }
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/vera"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(status, 204);
    // A viewer reads a page of the table: the second example, of two.
    let read: Value = vera
        .call("dataset_examples", &page)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (read["total"].as_i64(), inputs(&read)),
        (Some(2), vec!["two".to_string()])
    );
    assert_eq!(vera.call_json("add_examples", &add).await.status(), 403);
    assert_eq!(
        vera.call_json("replace_example", &replace).await.status(),
        403
    );
    assert_eq!(vera.call("remove_example", &remove).await.status(), 403);
    assert_eq!(vera.call("delete_dataset", &delete).await.status(), 403);
    let (_, unchanged) = server
        .api(Method::GET, &format!("{base}/{dataset}"), None)
        .await;
    assert_eq!(unchanged["version"], 1);

    // The owner (an editor) imports, edits and removes: three versions.
    let added = server.owner.call_json("add_examples", &add).await;
    assert_eq!(added.status(), 200);
    let replaced: Value = server
        .owner
        .call_json("replace_example", &replace)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(replaced["version"], 3);
    let (_, now) = server
        .api(Method::GET, &format!("{base}/{dataset}"), None)
        .await;
    assert_eq!(inputs(&now), ["edited", "two", "three"]);
    let edited = now["examples"][0]["id"].as_str().unwrap().to_string();
    let removed = server
        .owner
        .call(
            "remove_example",
            &[
                ("graph_id", graph.as_str()),
                ("dataset_id", dataset.as_str()),
                ("example_id", edited.as_str()),
            ],
        )
        .await;
    assert_eq!(removed.status(), 200);
    // An import past the request's bound is refused, naming it.
    let too_many: Vec<Value> = (0..1_001).map(|n| asked(&n.to_string())).collect();
    let refused = server
        .owner
        .call_json(
            "add_examples",
            &json!({"graph_id": graph, "dataset_id": dataset,
                    "new": {"examples": too_many}}),
        )
        .await;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("1 to 1000"));
    let (_, last) = server
        .api(Method::GET, &format!("{base}/{dataset}"), None)
        .await;
    assert_eq!(
        (last["version"].as_i64(), inputs(&last)),
        (Some(4), vec!["two".to_string(), "three".to_string()])
    );
    // The first version still reads back as it was.
    let (_, v1) = server
        .api(Method::GET, &format!("{base}/{dataset}?version=1"), None)
        .await;
    assert_eq!(inputs(&v1), ["one", "two"]);
}
