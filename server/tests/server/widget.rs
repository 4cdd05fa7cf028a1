//! The chat widget's public side over real HTTP: the script, its config
//! and messages answered only for pages on the widget's allowed origins
//! (each answer readable by that origin alone), a conversation that goes
//! on in its thread, rate limits, and what a turned-off widget or one
//! whose maker lost the graph answers.

use reqwest::Method;
use serde_json::{Value, json};

use crate::invoke::chat_graph;
use crate::support::{TestServer, error_message, example, status_and_json};

const SHOP: &str = "http://shop.test";

async fn widget(server: &TestServer, graph: &str) -> Value {
    let (status, made) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/widgets"),
            Some(
                json!({"name": "Shop support", "allowed_origins": ["http://Shop.test/"],
                        "greeting": "Hi! How can I help?"}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    made
}

/// Sends a message as a page on `origin` would (text/plain JSON, from
/// another site); the status, the `Access-Control-Allow-Origin`, and the
/// body.
async fn send(
    server: &TestServer,
    token: &str,
    origin: &str,
    conversation: &str,
    message: &str,
) -> (u16, Option<String>, String) {
    let response = reqwest::Client::new()
        .post(server.url(&format!("/api/v1/widget/{token}/messages")))
        .header("origin", origin)
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "text/plain")
        .body(json!({"conversation": conversation, "message": message}).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let allow = response
        .headers()
        .get("access-control-allow-origin")
        .map(|value| value.to_str().unwrap().to_string());
    (status, allow, response.text().await.unwrap())
}

/// The `reply` event of a streamed answer.
fn reply(stream: &str) -> Value {
    let block = stream
        .split("\n\n")
        .find(|block| block.starts_with("event: reply"))
        .unwrap_or_else(|| panic!("no reply in {stream}"));
    let data = block
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap();
    serde_json::from_str(data).unwrap()
}

#[tokio::test]
async fn a_widget_chats_only_with_pages_on_its_origins() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    server.publish(&graph, 1).await;
    let made = widget(&server, &graph).await;
    assert_eq!(
        made["allowed_origins"],
        json!([SHOP]),
        "origins are normalised"
    );
    assert_eq!(made["title"], "Support chat", "the graph's name by default");
    let token = made["token"].as_str().unwrap();

    let script = server.get("/widget.js").await;
    assert_eq!(script.status(), 200);
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(script.text().await.unwrap().contains("data-heddle-widget"));

    // The config: for the shop, readable by the shop alone.
    let config = |origin: Option<&'static str>| {
        let mut request =
            reqwest::Client::new().get(server.url(&format!("/api/v1/widget/{token}")));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let response = config(Some(SHOP)).await.unwrap();
    assert_eq!(response.headers()["access-control-allow-origin"], SHOP);
    assert_eq!(response.headers()["vary"], "Origin");
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"title": "Support chat", "color": "#4f46e5", "greeting": "Hi! How can I help?"})
    );
    for origin in [Some("http://evil.test"), Some("https://shop.test"), None] {
        let (status, body) = status_and_json(config(origin).await.unwrap()).await;
        assert_eq!(status, 403, "{origin:?}: {body}");
        assert_eq!(
            error_message(&body),
            "this chat is not available on this site"
        );
    }

    // Two messages in one conversation: the thread remembers.
    let conversation = "0123456789abcdef0123";
    let (status, allow, stream) =
        send(&server, token, SHOP, conversation, "Hi, my name is Ada").await;
    assert_eq!(status, 200, "{stream}");
    assert_eq!(allow.as_deref(), Some(SHOP));
    assert!(stream.contains("event: token"), "tokens stream: {stream}");
    // Nothing of the run but its words reaches the visitor.
    for private in ["run_started", "state", "node", "\"step\"", "thread"] {
        assert!(!stream.contains(private), "{private} leaked: {stream}");
    }
    assert_eq!(
        reply(&stream)["text"],
        "(offline model) Nice to meet you, Ada. I will remember your name in this conversation."
    );
    let (_, _, stream) = send(&server, token, SHOP, conversation, "What is my name?").await;
    assert_eq!(reply(&stream)["text"], "(offline model) Your name is Ada.");
    // The owner opens the conversation in the app; its runs are labelled.
    let thread = format!("widget-{}-{conversation}", made["id"].as_str().unwrap());
    let (status, view) = server
        .api(Method::GET, &format!("/api/v1/threads/{thread}"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(view["messages"].as_array().unwrap().len(), 4);
    let (_, runs) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/runs"), None)
        .await;
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .all(|run| run["origin"] == "widget" && run["origin_label"] == "Shop support")
    );

    // Another site, a bad conversation id, an empty message: refused.
    let (status, _, body) = send(&server, token, "http://evil.test", conversation, "hi").await;
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = send(&server, token, SHOP, "short", "hi").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("`conversation`: 16 to 64"), "{body}");
    let (status, _, _) = send(&server, token, SHOP, "fedcba9876543210fedc", "   ").await;
    assert_eq!(status, 400);

    // One visitor's burst (10) runs out, and stays out while they keep
    // sending. Only the status is read: the streams are left, so the burst
    // is sent well inside one refill.
    let mut statuses = Vec::new();
    let mut refusal = String::new();
    for n in 0..12 {
        let body = json!({"conversation": format!("visitor-burst-{n:08}"), "message": "hello"});
        let response = reqwest::Client::new()
            .post(server.url(&format!("/api/v1/widget/{token}/messages")))
            .header("origin", SHOP)
            .header("content-type", "text/plain")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        if status == 429 {
            refusal = response.text().await.unwrap();
        }
        statuses.push(status);
    }
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    assert!(
        refusal.contains("too many messages; try again in"),
        "{refusal}"
    );
}

#[tokio::test]
async fn only_editors_make_widgets_and_a_widget_ends_with_its_makers_access() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    server.publish(&graph, 1).await;
    let path = format!("/api/v1/graphs/{graph}/widgets");
    let eddie = server.user("eddie").await;
    assert_eq!(eddie.api(Method::GET, &path, None).await.0, 404);
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/eddie"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = eddie
        .api(
            Method::POST,
            &path,
            Some(json!({"name": "x", "allowed_origins": [SHOP]})),
        )
        .await;
    assert_eq!(status, 403);
    for (settings, why) in [
        (
            json!({"name": "x", "allowed_origins": []}),
            "`allowed_origins`: a widget answers 1 to 20 sites",
        ),
        (
            json!({"name": "x", "allowed_origins": ["shop.test/page"]}),
            "`allowed_origins[0]`: `shop.test/page` is not an origin",
        ),
        (
            json!({"name": "x", "allowed_origins": [SHOP], "color": "red"}),
            "`color`: `red` is not a colour like `#4f46e5`",
        ),
    ] {
        let (status, body) = server.api(Method::POST, &path, Some(settings)).await;
        assert_eq!(status, 400, "{body}");
        assert!(error_message(&body).starts_with(why), "{body}");
    }

    // Eddie, an editor, makes one; demoted, his widget is unavailable.
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/eddie"),
            Some(json!({"role": "editor"})),
        )
        .await;
    assert_eq!(status, 204);
    let (status, made) = eddie
        .api(
            Method::POST,
            &path,
            Some(json!({"name": "eddie's", "allowed_origins": [SHOP]})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap();
    let (status, _, _) = send(&server, token, SHOP, "0000000000000000aaaa", "hi").await;
    assert_eq!(status, 200);
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/eddie"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(status, 204);
    let (status, _, body) = send(&server, token, SHOP, "0000000000000000bbbb", "hi").await;
    assert_eq!(status, 410, "{body}");
    assert!(body.contains("this chat is no longer available"), "{body}");

    // Only Eddie changes it (it runs as him): the owner may not add a site.
    let id = made["id"].as_str().unwrap();
    let (status, answer) = server
        .api(
            Method::PUT,
            &format!("{path}/{id}"),
            Some(json!({"name": "eddie's", "allowed_origins": [SHOP, "https://owner.example"]})),
        )
        .await;
    assert_eq!(status, 403, "{answer}");
    // Turned off by Eddie: 410 too; unknown tokens are not found.
    let (status, _) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/eddie"),
            Some(json!({"role": "editor"})),
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = eddie
        .api(
            Method::PUT,
            &format!("{path}/{id}"),
            Some(json!({"name": "eddie's", "allowed_origins": [SHOP], "enabled": false})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _, body) = send(&server, token, SHOP, "0000000000000000cccc", "hi").await;
    assert_eq!(status, 410, "{body}");
    let (status, _, _) = send(&server, "w_nothing", SHOP, "0000000000000000cccc", "hi").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_fan_outs_instances_do_not_stream_into_the_visitors_answer() {
    let server = TestServer::start().await;
    let graph = server.create_graph(example("research.json")).await;
    server.publish(&graph, 1).await;
    let made = widget(&server, &graph).await;
    let token = made["token"].as_str().unwrap();
    let (status, _, stream) = send(
        &server,
        token,
        SHOP,
        "fedcba9876543210fedc",
        "How do heat pumps work?",
    )
    .await;
    assert_eq!(status, 200, "{stream}");
    let streamed: String = stream
        .split("\n\n")
        .filter(|block| block.starts_with("event: token"))
        .filter_map(|block| block.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| {
            serde_json::from_str::<Value>(data).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // The summary streams; the three researchers' words, side by side,
    // would be a jumble, and are not the answer.
    assert!(
        streamed.contains("Findings: 3 topics researched."),
        "{streamed}"
    );
    assert!(!streamed.contains("Research:"), "{streamed}");
    assert!(
        reply(&stream)["text"]
            .as_str()
            .unwrap()
            .contains("Findings: 3 topics researched.")
    );
}
