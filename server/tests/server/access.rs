//! The authorization matrix: every endpoint, server function, page and
//! websocket subscription, called by the graph's owner, an editor, a viewer
//! (through a share link), a logged-in stranger and an anonymous visitor;
//! the status of each cell is asserted.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::support::{Browser, TestServer, error_message};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Caller {
    Anonymous,
    Stranger,
    Viewer,
    Editor,
    Owner,
}

/// Callers in the order cells are called: the owner last, so an owner-only
/// change (delete) happens after everyone else was refused.
const CALLERS: [Caller; 5] = [
    Caller::Anonymous,
    Caller::Stranger,
    Caller::Viewer,
    Caller::Editor,
    Caller::Owner,
];

/// What a cell needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// Anyone, logged in or not.
    Public,
    /// Any logged-in user.
    Account,
    Viewer,
    Editor,
    Owner,
}

/// The status `caller` must get from a cell needing `need` that answers
/// `ok` when allowed: 401 for nobody, 404 for a graph one cannot see, 403
/// for a role too low.
fn expected(need: Need, caller: Caller, ok: u16) -> u16 {
    use Caller as C;
    match (need, caller) {
        (Need::Public, _) => ok,
        (_, C::Anonymous) => 401,
        (Need::Account, _) => ok,
        (_, C::Stranger) => 404,
        (Need::Viewer, _) => ok,
        (Need::Editor, C::Viewer) => 403,
        (Need::Editor, _) => ok,
        (Need::Owner, C::Owner) => ok,
        (Need::Owner, _) => 403,
    }
}

enum Body {
    None,
    Json(Value),
    /// A save based on the graph's current version.
    SaveCurrent,
}

struct Cell {
    method: Method,
    path: String,
    body: Body,
    need: Need,
    ok: u16,
}

fn cell(method: Method, path: String, body: Body, need: Need, ok: u16) -> Cell {
    Cell {
        method,
        path,
        body,
        need,
        ok,
    }
}

struct World {
    server: TestServer,
    stranger: Browser,
    viewer: Browser,
    editor: Browser,
    anonymous: Browser,
    graph: String,
    run: String,
    thread: String,
    /// A link to another graph: accepting it changes nothing in `graph`.
    other_token: String,
    /// A link the owner revokes in its cell.
    doomed_link: String,
}

impl World {
    fn browser(&self, caller: Caller) -> &Browser {
        match caller {
            Caller::Anonymous => &self.anonymous,
            Caller::Stranger => &self.stranger,
            Caller::Viewer => &self.viewer,
            Caller::Editor => &self.editor,
            Caller::Owner => &self.server.owner,
        }
    }
}

async fn world() -> World {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(3)).await;
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": 3}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run_id = run["id"].as_str().unwrap().to_string();
    let done = server.wait_for_run(&run_id).await;
    assert_eq!(done["status"], "finished");
    let thread = done["thread_id"].as_str().unwrap().to_string();

    let editor = server.user("eddie").await;
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/eddie"),
            Some(json!({"role": "editor"})),
        )
        .await;
    assert_eq!(status, 204);

    let viewer = server.user("vera").await;
    let (status, link) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(status, 201, "{link}");
    let token = link["path"].as_str().unwrap().trim_start_matches("/share/");
    let (status, accepted) = viewer
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert_eq!(status, 200, "{accepted}");
    assert_eq!(accepted["role"], "viewer");

    let other = server.create_graph(counting_loop(1)).await;
    let (_, other_link) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{other}/links"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    let (_, doomed) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": "editor", "expires_in_hours": 24})),
        )
        .await;

    World {
        stranger: server.user("stan").await,
        anonymous: server.anonymous(),
        viewer,
        editor,
        graph,
        run: run_id,
        thread,
        other_token: other_link["path"]
            .as_str()
            .unwrap()
            .trim_start_matches("/share/")
            .to_string(),
        doomed_link: doomed["id"].as_str().unwrap().to_string(),
        server,
    }
}

fn api_cells(w: &World) -> Vec<Cell> {
    let (g, r, t) = (&w.graph, &w.run, &w.thread);
    let document = counting_loop(2);
    use Method as M;
    vec![
        cell(
            M::GET,
            "/api/v1/graphs".into(),
            Body::None,
            Need::Account,
            200,
        ),
        cell(
            M::POST,
            "/api/v1/graphs".into(),
            Body::Json(json!({})),
            Need::Account,
            201,
        ),
        cell(
            M::POST,
            "/api/v1/graphs/import".into(),
            Body::Json(document.clone()),
            Need::Account,
            201,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::PUT,
            format!("/api/v1/graphs/{g}"),
            Body::SaveCurrent,
            Need::Editor,
            200,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/export"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/versions"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/versions/1"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::POST,
            format!("/api/v1/graphs/{g}/versions/1/restore"),
            Body::None,
            Need::Editor,
            200,
        ),
        cell(
            M::POST,
            format!("/api/v1/graphs/{g}/copy"),
            Body::None,
            Need::Viewer,
            201,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/runs"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::POST,
            format!("/api/v1/graphs/{g}/runs"),
            Body::Json(json!({"input": {"target": 1}})),
            Need::Editor,
            202,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/threads"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::GET,
            format!("/api/v1/runs/{r}"),
            Body::None,
            Need::Viewer,
            200,
        ),
        cell(
            M::GET,
            format!("/api/v1/runs/{r}/events"),
            Body::None,
            Need::Viewer,
            200,
        ),
        // Allowed, then refused for what it is: the run has ended.
        cell(
            M::POST,
            format!("/api/v1/runs/{r}/cancel"),
            Body::None,
            Need::Editor,
            400,
        ),
        // Allowed, then refused for what it asks: no such channel.
        cell(
            M::POST,
            format!("/api/v1/runs/{r}/fork"),
            Body::Json(json!({"step": 1, "edits": {"no_such_channel": 1}})),
            Need::Editor,
            400,
        ),
        cell(
            M::GET,
            format!("/api/v1/threads/{t}"),
            Body::None,
            Need::Viewer,
            200,
        ),
        // Allowed, then refused: the thread is not waiting for an answer.
        cell(
            M::POST,
            format!("/api/v1/threads/{t}/resume"),
            Body::Json(json!({"value": true})),
            Need::Editor,
            400,
        ),
        cell(
            M::GET,
            format!("/api/v1/graphs/{g}/sharing"),
            Body::None,
            Need::Owner,
            200,
        ),
        cell(
            M::POST,
            format!("/api/v1/graphs/{g}/links"),
            Body::Json(json!({"role": "viewer"})),
            Need::Owner,
            201,
        ),
        cell(
            M::DELETE,
            format!("/api/v1/graphs/{g}/links/{}", w.doomed_link),
            Body::None,
            Need::Owner,
            204,
        ),
        cell(
            M::PUT,
            format!("/api/v1/graphs/{g}/members/eddie"),
            Body::Json(json!({"role": "editor"})),
            Need::Owner,
            204,
        ),
        cell(
            M::POST,
            format!("/api/v1/share/{}", w.other_token),
            Body::None,
            Need::Account,
            200,
        ),
        cell(
            M::GET,
            "/api/v1/auth/me".into(),
            Body::None,
            Need::Account,
            200,
        ),
        cell(
            M::GET,
            "/api/v1/secrets".into(),
            Body::None,
            Need::Account,
            200,
        ),
        cell(
            M::PUT,
            "/api/v1/secrets/matrix".into(),
            Body::Json(json!({"value": "v"})),
            Need::Account,
            204,
        ),
        cell(
            M::DELETE,
            "/api/v1/secrets/matrix".into(),
            Body::None,
            Need::Account,
            204,
        ),
        cell(M::GET, "/api/health".into(), Body::None, Need::Public, 200),
        // Last: the owner deletes the graph.
        cell(
            M::DELETE,
            format!("/api/v1/graphs/{g}"),
            Body::None,
            Need::Owner,
            204,
        ),
    ]
}

async fn current_version(w: &World) -> i64 {
    let (_, graph) = w
        .server
        .api(Method::GET, &format!("/api/v1/graphs/{}", w.graph), None)
        .await;
    graph["version"].as_i64().unwrap_or(1)
}

#[tokio::test]
async fn every_endpoint_answers_each_caller_as_their_role_allows() {
    let w = world().await;
    let mut failures = Vec::new();
    let mut checked = 0;
    for cell in api_cells(&w) {
        for caller in CALLERS {
            let body = match &cell.body {
                Body::None => None,
                Body::Json(value) => Some(value.clone()),
                Body::SaveCurrent => Some(json!({
                    "base_version": current_version(&w).await,
                    "document": counting_loop(5),
                })),
            };
            let (status, answer) = w
                .browser(caller)
                .api(cell.method.clone(), &cell.path, body)
                .await;
            let want = expected(cell.need, caller, cell.ok);
            checked += 1;
            if status != want {
                failures.push(format!(
                    "{} {} as {caller:?}: got {status}, want {want} ({answer})",
                    cell.method, cell.path
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} cells wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A server function, its form, what it needs, and its status when allowed.
type FunctionCell<'a> = (&'a str, Vec<(&'a str, &'a str)>, Need, u16);

/// Server functions, as the app calls them (form-encoded POSTs).
#[tokio::test]
async fn every_server_function_answers_each_caller_as_their_role_allows() {
    let w = world().await;
    let g = w.graph.as_str();
    let (_, other_link) = w
        .server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{g}/links"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    let revocable = other_link["id"].as_str().unwrap().to_string();
    let cells: Vec<FunctionCell> = vec![
        ("current_user", vec![], Need::Public, 200),
        ("auth_status", vec![], Need::Public, 200),
        ("list_examples", vec![], Need::Public, 200),
        ("catalog", vec![], Need::Account, 200),
        ("list_graphs", vec![], Need::Account, 200),
        ("create_graph", vec![], Need::Account, 200),
        ("use_example", vec![("slug", "router")], Need::Account, 200),
        ("get_graph", vec![("id", g)], Need::Viewer, 200),
        ("copy_graph", vec![("id", g)], Need::Viewer, 200),
        ("run_to_show", vec![("graph_id", g)], Need::Viewer, 200),
        ("list_runs", vec![("graph_id", g)], Need::Viewer, 200),
        ("list_versions", vec![("graph_id", g)], Need::Viewer, 200),
        (
            "get_version",
            vec![("graph_id", g), ("version", "1")],
            Need::Viewer,
            200,
        ),
        (
            "restore_version",
            vec![("graph_id", g), ("version", "1")],
            Need::Editor,
            200,
        ),
        (
            "rename_graph",
            vec![("id", g), ("name", "Renamed")],
            Need::Editor,
            200,
        ),
        (
            "label_version",
            vec![("graph_id", g), ("version", "1"), ("label", "first")],
            Need::Editor,
            200,
        ),
        (
            "create_graph",
            vec![("template", "chat-agent")],
            Need::Account,
            200,
        ),
        ("sharing", vec![("graph_id", g)], Need::Owner, 200),
        (
            "create_share_link",
            vec![("graph_id", g), ("role", "viewer")],
            Need::Owner,
            200,
        ),
        (
            "revoke_share_link",
            vec![("graph_id", g), ("link_id", &revocable)],
            Need::Owner,
            200,
        ),
        (
            "set_member_role",
            vec![("graph_id", g), ("username", "eddie"), ("role", "editor")],
            Need::Owner,
            200,
        ),
        (
            "accept_share_link",
            vec![("token", &w.other_token)],
            Need::Account,
            200,
        ),
        ("list_secrets", vec![], Need::Account, 200),
        (
            "save_secret",
            vec![("name", "fn-matrix"), ("value", "v")],
            Need::Account,
            200,
        ),
        (
            "delete_secret",
            vec![("name", "fn-matrix")],
            Need::Account,
            200,
        ),
    ];
    let mut failures = Vec::new();
    for (function, form, need, ok) in &cells {
        for caller in CALLERS {
            let response = w.browser(caller).call(function, form).await;
            let status = response.status().as_u16();
            let want = expected(*need, caller, *ok);
            if status != want {
                let text = response.text().await.unwrap_or_default();
                failures.push(format!(
                    "{function} as {caller:?}: got {status}, want {want} ({text})"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The run server functions (JSON bodies) answer like the run endpoints:
/// viewers read runs and threads, editors start, stop, fork and resume.
#[tokio::test]
async fn run_server_functions_answer_each_caller_as_their_role_allows() {
    let w = world().await;
    let (g, run, thread) = (w.graph.as_str(), w.run.as_str(), w.thread.as_str());
    let cells: Vec<(&str, Value, Need, u16)> = vec![
        ("get_run", json!({"run_id": run}), Need::Viewer, 200),
        (
            "run_events",
            json!({"run_id": run, "from_seq": 0}),
            Need::Viewer,
            200,
        ),
        (
            "run_base",
            json!({"run_id": run, "checkpoint": format!("{run}/0")}),
            Need::Viewer,
            200,
        ),
        ("list_threads", json!({"graph_id": g}), Need::Viewer, 200),
        (
            "get_thread",
            json!({"thread_id": thread}),
            Need::Viewer,
            200,
        ),
        // The run is finished and its thread not paused: nothing to stop
        // or answer, which only those allowed to try learn.
        ("cancel_run", json!({"run_id": run}), Need::Editor, 400),
        (
            "resume_thread",
            json!({"thread_id": thread, "value": true}),
            Need::Editor,
            400,
        ),
        (
            "fork_run",
            json!({"run_id": run, "request": {"step": 1}}),
            Need::Editor,
            200,
        ),
        (
            "start_run",
            json!({"graph_id": g, "request": {"input": {"target": 1}}}),
            Need::Editor,
            200,
        ),
    ];
    let mut failures = Vec::new();
    for (function, body, need, ok) in &cells {
        for caller in CALLERS {
            let response = w.browser(caller).call_json(function, body).await;
            let status = response.status().as_u16();
            let want = expected(*need, caller, *ok);
            let text = response.text().await.unwrap_or_default();
            if status != want {
                failures.push(format!(
                    "{function} as {caller:?}: got {status}, want {want} ({text})"
                ));
            }
            // A run or thread someone may not see does not give its graph away.
            if status == 404 && body.get("graph_id").is_none() && text.contains(g) {
                failures.push(format!("{function} as {caller:?} names the graph: {text}"));
            }
            // Let a fork or start end before the next caller's, on the same thread.
            for _ in 0..200 {
                let (_, runs) = w
                    .server
                    .api(Method::GET, &format!("/api/v1/graphs/{g}/runs"), None)
                    .await;
                let busy = runs
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|run| matches!(run["status"].as_str(), Some("queued" | "running")));
                if !busy {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Pages: anonymous visitors are sent to log in; strangers get a 404 page.
#[tokio::test]
async fn pages_answer_each_caller_as_their_role_allows() {
    let w = world().await;
    let graph_page = format!("/graphs/{}", w.graph);
    for caller in CALLERS {
        let response = w
            .browser(caller)
            .client
            .get(w.browser(caller).url(&graph_page))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        match caller {
            Caller::Anonymous => {
                assert_eq!(status, 303, "anonymous: sent to log in");
                let location = response.headers()["location"].to_str().unwrap();
                assert_eq!(
                    location,
                    format!("/login?next=/graphs/{}", w.graph),
                    "and brought back after"
                );
            }
            Caller::Stranger => assert_eq!(status, 404, "a stranger sees no graph"),
            _ => assert_eq!(status, 200, "{caller:?}"),
        }
    }
    for page in ["/login", "/signup"] {
        let response = w
            .anonymous
            .client
            .get(w.anonymous.url(page))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{page} is open to everyone");
    }
}

mod sockets {
    use std::time::Duration;

    use futures_util::{SinkExt, StreamExt};
    use serde_json::{Value, json};
    use tokio_tungstenite::tungstenite::Message;

    use super::{CALLERS, Caller, world};
    use crate::support::Browser;

    type Socket = tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >;

    pub async fn open(browser: &Browser) -> Result<Socket, u16> {
        match tokio_tungstenite::connect_async(browser.ws_request()).await {
            Ok((socket, _)) => Ok(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                Err(response.status().as_u16())
            }
            Err(error) => panic!("websocket: {error}"),
        }
    }

    pub async fn send(socket: &mut Socket, value: Value) {
        socket
            .send(Message::text(value.to_string()))
            .await
            .expect("send");
    }

    /// The next JSON message, or `None` when the socket closed.
    pub async fn next(socket: &mut Socket) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
                .await
                .expect("a message in time")?;
            match message {
                Ok(Message::Text(text)) => return serde_json::from_str(&text).ok(),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            }
        }
    }

    #[tokio::test]
    async fn subscriptions_need_the_viewer_role() {
        let w = world().await;
        for caller in CALLERS {
            let opened = open(w.browser(caller)).await;
            let mut socket = match (caller, opened) {
                (Caller::Anonymous, Err(status)) => {
                    assert_eq!(status, 401, "anonymous sockets are refused");
                    continue;
                }
                (_, Ok(socket)) => socket,
                (caller, Err(status)) => panic!("{caller:?} could not connect: {status}"),
            };
            send(
                &mut socket,
                json!({"type": "subscribe", "run_id": w.run, "from_seq": 0}),
            )
            .await;
            let first = next(&mut socket).await.expect("an answer");
            send(
                &mut socket,
                json!({"type": "watch_graph", "graph_id": w.graph}),
            )
            .await;
            send(&mut socket, json!({"type": "ping"})).await;
            let mut answers = vec![first];
            while answers.last().is_some_and(|m| m["type"] != "pong") {
                answers.push(next(&mut socket).await.expect("an answer"));
            }
            let errors: Vec<&Value> = answers.iter().filter(|m| m["type"] == "error").collect();
            match caller {
                Caller::Stranger => {
                    assert_eq!(answers[0]["type"], "error", "{answers:?}");
                    assert_eq!(
                        answers[0]["message"],
                        format!("run {} was not found", w.run)
                    );
                    assert_eq!(errors.len(), 2, "the run and the graph: {answers:?}");
                }
                _ => {
                    assert_eq!(answers[0]["type"], "event", "{caller:?}: {answers:?}");
                    assert!(errors.is_empty(), "{caller:?}: {answers:?}");
                }
            }
        }
    }

    #[tokio::test]
    async fn a_cross_site_socket_is_refused() {
        let w = world().await;
        let mut request = w.server.owner.ws_request();
        request
            .headers_mut()
            .insert("origin", "https://evil.example".parse().unwrap());
        match tokio_tungstenite::connect_async(request).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status().as_u16(), 403)
            }
            other => panic!("expected a 403, got {:?}", other.map(|_| ())),
        }
    }
}

pub use sockets::{next as next_message, open as open_socket, send as send_message};

#[tokio::test]
async fn cross_site_requests_that_change_state_are_refused() {
    let w = world().await;
    let response = w
        .server
        .client
        .post(w.server.url("/api/v1/graphs"))
        .header("origin", "https://evil.example")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "cross_site");
    // A browser saying the request is from this site passes.
    let response = w
        .server
        .client
        .post(w.server.url("/api/v1/graphs"))
        .header("sec-fetch-site", "same-origin")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    // Server functions too.
    let response = w
        .server
        .client
        .post(w.server.url("/api/create_graph"))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

/// Embedding the matrix's graph as a saved subgraph, in a graph of one's
/// own: a viewer may (it reads the graph), a stranger may not, and is told
/// nothing a missing graph would not tell.
#[tokio::test]
async fn embedding_a_graph_needs_the_viewer_role() {
    let w = world().await;
    let parent = json!({
        "format_version": 2, "name": "embeds",
        "state": {"channels": {"n": {"type": "any"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "sub", "kind": "subgraph",
                   "config": {"graph_id": w.graph, "outputs": {"n": "count"}}}],
        "edges": [{"id": "e", "from": "start", "to": "sub"}]
    });
    for caller in [
        Caller::Stranger,
        Caller::Viewer,
        Caller::Editor,
        Caller::Owner,
    ] {
        let browser = w.browser(caller);
        let (status, created) = browser
            .api(
                Method::POST,
                "/api/v1/graphs",
                Some(json!({"document": parent})),
            )
            .await;
        assert_eq!(status, 201, "{caller:?}: {created}");
        let id = created["id"].as_str().unwrap();
        let (status, run) = browser
            .api(
                Method::POST,
                &format!("/api/v1/graphs/{id}/runs"),
                Some(json!({})),
            )
            .await;
        let want = expected(Need::Viewer, caller, 202);
        let want = if want == 404 { 400 } else { want };
        assert_eq!(status, want, "{caller:?}: {run}");
        if status == 202 {
            let run = run["id"].as_str().unwrap();
            let finished = loop {
                let (_, info) = browser
                    .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
                    .await;
                if !matches!(info["status"].as_str(), Some("queued" | "running")) {
                    break info;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            };
            assert_eq!(finished["status"], "finished", "{caller:?}: {finished}");
            assert_eq!(finished["output"]["n"], 1, "{caller:?}: {finished}");
        } else {
            assert!(
                error_message(&run).contains("does not exist or which you cannot open"),
                "{run}"
            );
        }
    }
}

#[tokio::test]
async fn only_viewer_and_editor_can_be_granted() {
    let server = TestServer::start().await;
    server.user("ada").await;
    let graph = server.create_graph(counting_loop(3)).await;
    for (path, body) in [
        (
            format!("/api/v1/graphs/{graph}/links"),
            json!({"role": "owner"}),
        ),
        (
            format!("/api/v1/graphs/{graph}/members/ada"),
            json!({"role": "owner"}),
        ),
        (
            format!("/api/v1/graphs/{graph}/members/ada"),
            json!({"role": "admin"}),
        ),
    ] {
        let method = if path.ends_with("links") {
            Method::POST
        } else {
            Method::PUT
        };
        let (status, answer) = server.api(method, &path, Some(body)).await;
        assert_eq!(status, 400, "{path}: {answer}");
        let message = error_message(&answer);
        assert!(message.contains("role"), "{message}");
        assert!(message.contains("viewer"), "{message}");
    }
    // `none` takes a member's role away.
    let members = format!("/api/v1/graphs/{graph}/members/ada");
    let (status, _) = server
        .api(Method::PUT, &members, Some(json!({"role": "editor"})))
        .await;
    assert_eq!(status, 204);
    let (status, _) = server
        .api(Method::PUT, &members, Some(json!({"role": "none"})))
        .await;
    assert_eq!(status, 204);
    let (_, sharing) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/sharing"),
            None,
        )
        .await;
    assert_eq!(sharing["members"], json!([]));
}

/// Someone let in by a share link that was then revoked is told their
/// access ended (410, on the graph and its page); its runs and threads stay
/// hidden (404), and to a stranger who never had a link the graph is
/// still "not found".
#[tokio::test]
async fn a_revoked_link_tells_whom_it_let_in_that_their_access_ended() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let run = server.start_run(&graph, json!({})).await;
    server.wait_for_run(&run).await;
    let (link, token) = server.share_link(&graph, "viewer").await;
    let viewer = server.user("vera").await;
    let (status, _) = viewer
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert_eq!(status, 200);
    let stranger = server.user("stan").await;
    let (status, _) = viewer
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 200, "let in");

    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/links/{link}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, answer) = viewer
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 410, "{answer}");
    assert_eq!(
        error_message(&answer),
        "your access to this graph has ended: the share link you opened was revoked. \
         Ask its owner for a new link"
    );
    let page = viewer
        .client
        .get(viewer.url(&format!("/graphs/{graph}")))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 410);
    assert!(page.text().await.unwrap().contains("Your access has ended"));
    let (status, _) = viewer
        .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
        .await;
    assert_eq!(status, 404, "a run says nothing to whose access ended");
    let (status, _) = stranger
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 404, "a stranger learns nothing");
}
