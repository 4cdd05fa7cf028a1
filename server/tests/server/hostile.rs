//! Graphs and callers that tried to take the server down, each over real
//! HTTP: values nested past the limit where they enter (inputs, webhook
//! bodies, scripts and hooks, node updates), rows stored before the limit
//! held, a run that ends without an answer, a paused thread invoked
//! without an answer, forged calls to a signed webhook, foreign `Host`
//! names, `read` keys and triggers, schedules, and oversized bodies on
//! `/v1`. The crash loop (a run that kills its servers) is in `quarantine`.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::approval;
use crate::support::{Browser, Killed, TestServer, error_message, serve_process, test_database};

/// `{"a": {"a": ... 1}}`, `depth` objects deep, built without recursion
/// (each level moved into the next).
pub fn nested(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        let mut fields = serde_json::Map::new();
        fields.insert("a".into(), value);
        value = Value::Object(fields);
    }
    value
}

/// `{"a": ...}` as text, `depth` objects deep: past what serde_json parses.
fn nested_text(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

/// Room for an unoptimised build to nest 1,000 levels (it copies the map
/// at each one).
fn script(source: &str) -> Value {
    json!({"source": source, "timeout_ms": 20_000, "max_operations": 10_000_000})
}

/// start -> end, with one channel `x` of any value.
fn passthrough(name: &str) -> Value {
    json!({
        "format_version": 2, "name": name,
        "state": {"channels": {"x": {"type": "any"}}},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}]
    })
}

fn script_graph(source: &str) -> Value {
    json!({
        "format_version": 2, "name": "deep script",
        "state": {"channels": {"out": {"type": "any"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "build", "kind": "script", "config": script(source)},
                  {"id": "end", "kind": "end"}],
        "edges": [{"id": "e1", "from": "start", "to": "build"}, {"id": "e2", "from": "build", "to": "end"}]
    })
}

fn hook_graph(source: &str) -> Value {
    json!({
        "format_version": 2, "name": "deep hook",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "reply", "kind": "llm", "config": {
                      "prompt": "hello",
                      "hooks": {"before": {"script": script(source)}}}},
                  {"id": "end", "kind": "end"}],
        "edges": [{"id": "e1", "from": "start", "to": "reply"}, {"id": "e2", "from": "reply", "to": "end"}]
    })
}

async fn wait(browser: &Browser, run: &str) -> Value {
    for _ in 0..1000 {
        let (status, body) = browser
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        assert_eq!(status, 200, "{body}");
        if !matches!(body["status"].as_str(), Some("queued" | "running")) {
            return body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("run {run} did not end");
}

async fn start(browser: &Browser, graph: &str, input: Value) -> String {
    let (status, run) = browser
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": input})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    run["id"].as_str().unwrap().to_string()
}

async fn create(browser: &Browser, document: Value) -> String {
    let (status, made) = browser
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": document})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    made["id"].as_str().unwrap().to_string()
}

/// The reported crash: a script (or a model hook's script) returning a map
/// nested 1,000 deep aborted the whole process on a worker thread's stack.
/// Against the real binary: each run fails saying where, every list and
/// log of the graph reads back, and the server goes on serving runs.
#[tokio::test]
async fn a_script_or_hook_returning_a_value_1000_deep_fails_its_run_not_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let (child, addr) = serve_process(dir.path(), &url, &[], &[]).await;
    let _server = Killed(child);
    let owner = Browser::new(addr);
    owner.sign_up("owner").await;
    let deep = "let m = #{}; for i in 0..1000 { m = #{ a: m }; } m";
    let scripted = create(&owner, script_graph(&format!("#{{ out: {{ {deep} }} }}"))).await;
    let hook = create(&owner, hook_graph(&format!("{deep}; [m]"))).await;
    // As deep as a script builds in its limits, kept and dropped by the
    // script engine itself.
    let mut endless = script_graph("let m = #{}; loop { m = #{ a: m }; } #{}");
    endless["nodes"][1]["config"]["timeout_ms"] = json!(5000);
    let deepest = create(&owner, endless).await;
    for (graph, expected) in [
        (&scripted, "nests deeper than 64 levels"),
        (&hook, "nests deeper than 64 levels"),
        (&deepest, "the script ran longer than 5000 ms"),
    ] {
        let run = start(&owner, graph, json!({})).await;
        let ended = wait(&owner, &run).await;
        assert_eq!(ended["status"], "failed", "{ended}");
        assert!(
            ended["error"].as_str().unwrap().contains(expected),
            "{ended}"
        );
        let (status, listed) = owner
            .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
            .await;
        assert_eq!(status, 200, "{listed}");
        let events = crate::replicas::events(&owner, &run).await;
        assert_eq!(events.last().unwrap()["type"], "run_failed");
    }
    // Still serving: a plain run finishes.
    let fine = create(&owner, script_graph("#{ out: 1 }")).await;
    let run = start(&owner, &fine, json!({})).await;
    assert_eq!(wait(&owner, &run).await["status"], "finished");
}

/// Values past the limit are refused where they enter, with the place in
/// the message: a run's input over the API (and through a key's invoke),
/// a webhook's body (which the JSON API's parser would refuse itself), a
/// fork's edits; a `set` loop that nests its value fails its run, and the
/// graph's runs still list.
#[tokio::test]
async fn values_past_the_depth_limit_are_refused_where_they_enter() {
    let server = TestServer::start().await;
    let graph = server.create_graph(passthrough("any")).await;
    let (status, answer) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"x": nested(70)}})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error_message(&answer)
            .starts_with("`input.x`: the value nests deeper than 64 levels (at $.a.a.a"),
        "{answer}"
    );
    // A fork's edits, of a run that finished.
    let run = server.start_run(&graph, json!({"input": {"x": 1}})).await;
    server.wait_for_run(&run).await;
    let (status, answer) = server
        .api(
            Method::POST,
            &format!("/api/v1/runs/{run}/fork"),
            Some(json!({"step": 1, "edits": {"x": nested(70)}})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error_message(&answer).starts_with("`edits.x`: the value nests deeper than 64 levels"),
        "{answer}"
    );
    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let (status, answer) = key
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/invoke"),
            Some(json!({"input": {"x": nested(100)}})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(error_message(&answer).contains("`input.x`"), "{answer}");

    // A webhook's body is the input itself: one level less of wrapping.
    let (path, _) = crate::triggers::hook(&server, &graph, json!({"name": "deep"})).await;
    let body = format!("{{\"x\": {}}}", nested_text(120));
    let (status, answer) = crate::triggers::call(&server, &path, &body, &[]).await;
    assert_eq!(status, 400, "{answer}");
    assert!(error_message(&answer).contains("`input.x`"), "{answer}");
    // Past what JSON parsers read at all: refused as such, never a 500.
    let body = format!("{{\"x\": {}}}", nested_text(5000));
    let (status, answer) = crate::triggers::call(&server, &path, &body, &[]).await;
    assert_eq!(status, 400, "{answer}");

    // A loop that nests its value one level a step.
    let nesting = server
        .create_graph(json!({
            "format_version": 2, "name": "nesting loop",
            "state": {"channels": {"x": {"type": "any"}, "n": {"type": "integer", "reducer": "sum"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "wrap", "kind": "set", "config": {"values": {
                          "x": {"expr": "{inner: x}"}, "n": {"value": 1}}}},
                      {"id": "end", "kind": "end"}],
            "edges": [{"id": "e1", "from": "start", "to": "wrap"},
                      {"id": "again", "from": "wrap", "to": "wrap", "condition": "n < 500"},
                      {"id": "done", "from": "wrap", "to": "end", "condition": "n >= 500"}],
            "limits": {"max_steps": 1000}
        }))
        .await;
    let run = server.start_run(&nesting, json!({"input": {}})).await;
    let ended = server.wait_for_run(&run).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert!(
        ended["error"]
            .as_str()
            .unwrap()
            .contains("the update of `x`: the value nests deeper than 64 levels"),
        "{ended}"
    );
    let (status, _) = server
        .api(Method::GET, &format!("/api/v1/graphs/{nesting}/runs"), None)
        .await;
    assert_eq!(status, 200);
    crate::replicas::events(&server.owner, &run).await;
}

/// Runs stored before values were bounded hold JSON deeper than parsers
/// read (the bug made them): they read back, their too-deep parts cut and
/// marked, and never fail the graph's list for everyone.
#[tokio::test]
async fn rows_stored_before_the_limit_read_back_cut() {
    let server = TestServer::start().await;
    let graph = server.create_graph(passthrough("old rows")).await;
    let run = server.start_run(&graph, json!({"input": {"x": 1}})).await;
    assert_eq!(server.wait_for_run(&run).await["status"], "finished");
    // As the bug stored them: 300 levels in the run's record and in its
    // first event's input.
    let deep = nested_text(300);
    let db = server.db().await;
    let events: String = heddle_store::on_db!(&db, pool => sqlx::query_scalar(
        "SELECT body FROM heddle_events WHERE run_id = $1 AND first_seq = 0",
    )
    .bind(&run)
    .fetch_one(pool)
    .await)
    .unwrap();
    let events = events.replacen(
        "\"input\":{\"x\":1}",
        &format!("\"input\":{{\"x\":{deep}}}"),
        1,
    );
    assert!(events.contains(&deep), "the first event holds the input");
    heddle_store::on_db!(&db, pool => sqlx::query(
        "UPDATE heddle_events SET body = $1 WHERE run_id = $2 AND first_seq = 0",
    )
    .bind(&events)
    .bind(&run)
    .execute(pool)
    .await
    .map(drop))
    .unwrap();
    heddle_store::on_db!(&db, pool => sqlx::query("UPDATE runs SET input = $1, output = $1 WHERE id = $2")
        .bind(format!("{{\"x\":{deep}}}"))
        .bind(&run)
        .execute(pool)
        .await
        .map(drop))
    .unwrap();

    let (status, listed) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(status, 200, "{listed}");
    assert!(
        listed
            .to_string()
            .contains(heddle_engine::state::CUT_MARKER)
    );
    let events = Value::Array(crate::replicas::events(&server.owner, &run).await);
    assert_eq!(events[0]["type"], "run_started");
    assert!(
        events[0]
            .to_string()
            .contains(heddle_engine::state::CUT_MARKER)
    );
}

/// A fan-out over no items: nothing after it runs and no branch reaches
/// `end`. The run says so, in its status and error, and in invoke's
/// answer; it never shows as finished with another node's output.
#[tokio::test]
async fn a_run_that_reaches_no_end_is_not_shown_as_succeeded() {
    let server = TestServer::start().await;
    let graph = server
        .create_graph(json!({
            "format_version": 2, "name": "empty fan-out",
            "state": {"channels": {"topics": {"type": "list"}, "notes": {"type": "list", "reducer": "append"}}},
            "nodes": [{"id": "start", "kind": "start", "config": {"inputs": ["topics"]}},
                      {"id": "each", "kind": "fan_out", "config": {"over": "topics", "to": "note"}},
                      {"id": "note", "kind": "set", "config": {"values": {"notes": {"expr": "item"}}}},
                      {"id": "end", "kind": "end"}],
            "edges": [{"id": "e1", "from": "start", "to": "each"}, {"id": "e2", "from": "note", "to": "end"}]
        }))
        .await;
    let run = server
        .start_run(&graph, json!({"input": {"topics": []}}))
        .await;
    let ended = server.wait_for_run(&run).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert!(
        ended["error"]
            .as_str()
            .unwrap()
            .contains("the run ended without an answer: no branch reached end"),
        "{ended}"
    );
    assert!(ended["output"].is_null(), "{ended}");
    // With items, the same graph reaches its end.
    let run = server
        .start_run(&graph, json!({"input": {"topics": ["a", "b"]}}))
        .await;
    let ended = server.wait_for_run(&run).await;
    assert_eq!(ended["status"], "finished", "{ended}");
    assert_eq!(ended["output"]["notes"], json!(["a", "b"]));

    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let (status, answer) = key
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/invoke"),
            Some(json!({"input": {"topics": []}})),
        )
        .await;
    assert_eq!(answer["status"], "failed", "{status} {answer}");
    assert!(
        answer.to_string().contains("no branch reached end"),
        "{answer}"
    );

    // The chat endpoint: the model node replied, but the branch never
    // reached `end`; the reply is not passed off as the agent's answer.
    let mut chat = crate::invoke::chat_graph();
    chat["edges"][1]["condition"] = json!("1 > 2");
    let chat = server.create_graph(chat).await;
    server.publish(&chat, 1).await;
    let key = server.owner.key_client("run", &[&chat]).await;
    let (status, answer) = key
        .api(
            Method::POST,
            "/v1/chat/completions",
            Some(json!({"model": chat, "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, 410, "{answer}");
    assert!(
        error_message(&answer).contains("the run ended without an answer"),
        "{answer}"
    );
    assert!(answer["choices"].is_null(), "{answer}");
}

/// Invoking a paused thread with an input (or a null answer) is refused
/// with 409, and the pause is kept: answering it still works.
#[tokio::test]
async fn a_paused_thread_is_not_started_over_and_stays_answerable() {
    let server = TestServer::start().await;
    let graph = server.create_graph(approval()).await;
    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let invoke = format!("/api/v1/graphs/{graph}/invoke");
    let (status, paused) = key
        .api(
            Method::POST,
            &invoke,
            Some(json!({"input": {"request": "order 7"}})),
        )
        .await;
    assert_eq!(status, 200, "{paused}");
    let thread = paused["thread_id"].as_str().unwrap();
    for body in [
        json!({"thread_id": thread, "input": {"request": "order 8"}}),
        json!({"thread_id": thread, "resume": null}),
    ] {
        let (status, answer) = key.api(Method::POST, &invoke, Some(body.clone())).await;
        assert_eq!(status, 409, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "thread_paused", "{answer}");
    }
    let (status, done) = key
        .api(
            Method::POST,
            &invoke,
            Some(json!({"thread_id": thread, "resume": "true"})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "finished", "{done}");
}

/// Forged calls to a signed webhook do not spend its budget: after 60 of
/// them, the genuine sender's call still runs.
#[tokio::test]
async fn forged_calls_do_not_lock_a_signed_webhooks_sender_out() {
    use crate::triggers::{call, hook, now, sign};
    let server = TestServer::start().await;
    let graph = server.create_graph(crate::api_runs::counting_loop(1)).await;
    server.publish(&graph, 1).await;
    let (status, _) = server
        .api(
            Method::PUT,
            "/api/v1/secrets/hook-secret",
            Some(json!({"value": "shared"})),
        )
        .await;
    assert_eq!(status, 204);
    let (path, _) = hook(
        &server,
        &graph,
        json!({"name": "signed", "signing_secret": "hook-secret"}),
    )
    .await;
    let body = r#"{"target": 1}"#;
    for n in 0..40 {
        let at = now().to_string();
        let forged = vec![
            ("x-heddle-timestamp", at.clone()),
            (
                "x-heddle-signature",
                sign(&format!("guess {n}"), &format!("{at}.{body}")),
            ),
        ];
        let (status, _) = call(&server, &path, body, &forged).await;
        assert_eq!(status, 401, "forged call {n}");
    }
    let at = now().to_string();
    let genuine = vec![
        ("x-heddle-timestamp", at.clone()),
        (
            "x-heddle-signature",
            sign("shared", &format!("{at}.{body}")),
        ),
    ];
    let (status, answer) = call(&server, &path, body, &genuine).await;
    assert_eq!(status, 202, "{answer}");
}

/// A request naming a host the server does not answer to (a page on
/// another domain rebinding its name to the server) is refused before
/// anything runs; addresses and localhost pass.
#[tokio::test]
async fn requests_for_a_foreign_host_are_refused() {
    let server = TestServer::start().await;
    let client = reqwest::Client::new();
    for (host, expected) in [
        ("attacker.example", 421),
        ("attacker.example:3000", 421),
        ("localhost", 200),
        ("127.0.0.1", 200),
    ] {
        let response = client
            .get(server.url("/api/health"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), expected, "{host}");
    }
    // Sign-up from a rebound page: refused, nobody is created.
    let response = client
        .post(server.url("/api/v1/auth/signup"))
        .header("host", "attacker.example:3000")
        .header("origin", "http://attacker.example:3000")
        .json(&json!({"username": "mallory", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 421);
    let text = response.text().await.unwrap();
    assert!(text.contains("does not answer to the host"), "{text}");
}

/// A `read` key may read a graph, never its triggers' tokens and inputs.
#[tokio::test]
async fn a_read_key_cannot_list_a_graphs_triggers() {
    let server = TestServer::start().await;
    let graph = server.create_graph(crate::api_runs::counting_loop(1)).await;
    let key = server.owner.key_client("read", &[&graph]).await;
    let (status, _) = key
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 200);
    for triggers in ["webhooks", "schedules", "widgets"] {
        let path = format!("/api/v1/graphs/{graph}/{triggers}");
        let (status, answer) = key.api(Method::GET, &path, None).await;
        assert_eq!(status, 403, "{triggers}: {answer}");
        let (status, _) = server.api(Method::GET, &path, None).await;
        assert_eq!(status, 200, "{triggers} for the owner");
    }
}

/// A schedule's input is checked when it is saved (against the graph's
/// channels and the value limits), a schedule fires at most once a minute,
/// and a graph has at most 20.
#[tokio::test]
async fn schedules_are_checked_when_saved_and_bounded() {
    let server = TestServer::start().await;
    let graph = server.create_graph(crate::api_runs::counting_loop(1)).await;
    let path = format!("/api/v1/graphs/{graph}/schedules");
    for (settings, expected) in [
        (
            json!({"name": "typo", "cron": "0 9 * * *", "input": {"targett": 1}}),
            "`input.targett`: it is not a channel of this graph's state",
        ),
        (
            json!({"name": "wrong type", "cron": "0 9 * * *", "input": {"target": "three"}}),
            "`input.target`",
        ),
        (
            json!({"name": "deep", "cron": "0 9 * * *", "input": {"target": nested(80)}}),
            "nests deeper than 64 levels",
        ),
        (
            json!({"name": "flood", "cron": "* * * * * *", "input": {"target": 1}}),
            "fires 1 s apart; a schedule fires at most once every 60 s",
        ),
    ] {
        let (status, answer) = server.api(Method::POST, &path, Some(settings)).await;
        assert_eq!(status, 400, "{answer}");
        assert!(error_message(&answer).contains(expected), "{answer}");
    }
    for n in 0..20 {
        let (status, answer) = server
            .api(
                Method::POST,
                &path,
                Some(json!({"name": format!("s{n}"), "cron": "0 9 * * *", "input": {"target": 1}})),
            )
            .await;
        assert_eq!(status, 201, "{answer}");
    }
    let (status, answer) = server
        .api(
            Method::POST,
            &path,
            Some(json!({"name": "one too many", "cron": "0 9 * * *"})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error_message(&answer).contains("at most 20 schedules"),
        "{answer}"
    );
}

/// A body past the limit on the OpenAI-compatible endpoint: JSON, as its
/// clients expect, not plain text.
#[tokio::test]
async fn an_oversized_body_on_v1_is_answered_in_json() {
    let server = TestServer::start().await;
    let response = reqwest::Client::new()
        .post(server.url("/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("authorization", "Bearer hk_not_a_key")
        .body(vec![b' '; 9 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 413);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_large", "{body}");
}

/// Generated values (of any shape, up to 300 levels deep, up to a few
/// hundred KiB) thrown at every way in: a run's input over the API, a
/// webhook's body, a pause's answer. The server answers each with a
/// success or a 4xx naming the problem, never a 5xx, and afterwards the
/// graph's runs and every run's events read back.
#[tokio::test]
async fn generated_hostile_values_never_break_the_server_or_its_stored_runs() {
    let server = TestServer::start().await;
    let graph = server
        .create_graph(json!({
            "format_version": 2, "name": "takes anything",
            "state": {"channels": {"x": {"type": "any"}, "ok": {"type": "boolean"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "ask", "kind": "ask", "config": {"prompt": "Anything?", "answer": "x"}},
                      {"id": "end", "kind": "end"}],
            "edges": [{"id": "e1", "from": "start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "end"}]
        }))
        .await;
    server.publish(&graph, 1).await;
    let (hook, _) = crate::triggers::hook(&server, &graph, json!({"name": "any"})).await;
    let shape = (
        proptest::collection::vec((proptest::bool::ANY, 0u8..3), 0..300),
        0usize..200_000,
    );
    let mut runner = TestRunner::deterministic();
    let mut runs = Vec::new();
    for case in 0..24 {
        let (levels, padding) = shape.new_tree(&mut runner).unwrap().current();
        let mut value = json!("x".repeat(padding));
        for (array, siblings) in levels {
            value = if array {
                let mut items: Vec<Value> = (0..siblings).map(|n| json!(n)).collect();
                items.push(value);
                Value::Array(items)
            } else {
                let mut fields = serde_json::Map::new();
                fields.insert("s".into(), json!(siblings));
                fields.insert("next".into(), value);
                Value::Object(fields)
            };
        }
        let (status, run) = server
            .api(
                Method::POST,
                &format!("/api/v1/graphs/{graph}/runs"),
                Some(json!({"input": {"x": value}})),
            )
            .await;
        assert!(
            matches!(status, 202 | 400 | 413),
            "case {case}: {status} {run}"
        );
        if status == 202 {
            let id = run["id"].as_str().unwrap().to_string();
            let paused = server.wait_for_run(&id).await;
            assert_eq!(paused["status"], "interrupted", "case {case}: {paused}");
            let (status, answer) = server
                .api(
                    Method::POST,
                    &format!(
                        "/api/v1/threads/{}/resume",
                        paused["thread_id"].as_str().unwrap()
                    ),
                    Some(json!({"value": value})),
                )
                .await;
            assert!(
                matches!(status, 202 | 400 | 413),
                "case {case}: {status} {answer}"
            );
            runs.push(id);
        }
        let body = json!({"x": value}).to_string();
        let (status, answer) = crate::triggers::call(&server, &hook, &body, &[]).await;
        // 200 when the run had already paused by the time the hook answered
        // (a hook answers with the run as it stands), 202 while it runs.
        assert!(
            matches!(status, 200 | 202 | 400 | 413),
            "case {case}: {status} {answer}"
        );
        if let Some(id) = answer["run_id"].as_str() {
            runs.push(id.to_string());
        }
    }
    assert!(!runs.is_empty(), "some generated values were taken");
    let (status, listed) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert_eq!(status, 200, "{listed}");
    for run in runs {
        server.wait_for_run(&run).await;
        // Reads back (the helper asserts a 200).
        crate::replicas::events(&server.owner, &run).await;
    }
}
