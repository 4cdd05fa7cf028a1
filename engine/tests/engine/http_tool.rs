//! The `http_request` tool: it reaches the internet, refuses the inside of
//! the network unless allowed, and limits what it reads.

use heddle_engine::tools::{HttpRequest, Tool};
use serde_json::json;

use crate::fake_http::{Reply, serve};

#[tokio::test]
async fn loopback_and_private_addresses_are_refused_by_default() {
    let fake = serve(vec![Reply::Json(200, json!({"secret": true}))]).await;
    let tool = HttpRequest::default();
    let error = tool
        .call(json!({"url": format!("{}/x", fake.base_url)}))
        .await
        .unwrap_err();
    assert!(error.message.contains("inside the network"), "{error}");
    assert!(fake.requests.lock().unwrap().is_empty(), "nothing was sent");
    for url in [
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/",
        "http://[::1]:1/",
    ] {
        assert!(tool.call(json!({"url": url})).await.is_err(), "{url}");
    }
    assert!(
        tool.call(json!({"url": "file:///etc/passwd"}))
            .await
            .unwrap_err()
            .message
            .contains("only http and https")
    );
}

#[tokio::test]
async fn an_allowlisted_host_is_fetched_with_limits() {
    let fake = serve(vec![
        Reply::Json(200, json!({"hello": "world"})),
        Reply::Json(200, json!({"echo": "x".repeat(5000)})),
    ])
    .await;
    let tool = HttpRequest {
        allow: vec!["127.0.0.1".into()],
        max_bytes: 1000,
        ..HttpRequest::default()
    };
    let result = tool
        .call(json!({"url": format!("{}/post", fake.base_url), "method": "POST", "body": {"q": 1}}))
        .await
        .unwrap();
    assert_eq!(result["status"], 200);
    assert_eq!(result["body"], json!({"hello": "world"}));
    assert_eq!(fake.requests.lock().unwrap()[0], json!({"q": 1}));
    let big = tool
        .call(json!({"url": format!("{}/big", fake.base_url)}))
        .await
        .unwrap();
    assert_eq!(big["truncated"], true);
    assert_eq!(big["body"].as_str().unwrap().len(), 1000);
}
