//! The OpenAPI document at `/api/v1/openapi.json`: served to anyone, it
//! lists every JSON endpoint with the types the handlers use, and every
//! operation's errors are the one error body. (`scripts/api-contract`
//! fuzzes the server against it; this checks the document's shape.)

use serde_json::Value;

use crate::support::TestServer;

async fn document(server: &TestServer) -> Value {
    let response = reqwest::get(server.url("/api/v1/openapi.json"))
        .await
        .expect("GET");
    assert_eq!(response.status(), 200);
    response.json().await.expect("JSON")
}

#[tokio::test]
async fn the_document_describes_every_endpoint_with_its_types() {
    let server = TestServer::start().await;
    let doc = document(&server).await;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().expect("paths");
    // Every route under /api/v1 but the websocket and the document itself.
    for (path, methods) in [
        ("/api/v1/graphs", &["get", "post"][..]),
        ("/api/v1/graphs/import", &["post"]),
        ("/api/v1/graphs/{id}", &["get", "put", "delete"]),
        ("/api/v1/graphs/{id}/export", &["get"]),
        ("/api/v1/graphs/{id}/versions", &["get"]),
        ("/api/v1/graphs/{id}/versions/{version}", &["get"]),
        ("/api/v1/graphs/{id}/versions/{version}/restore", &["post"]),
        ("/api/v1/graphs/{id}/copy", &["post"]),
        ("/api/v1/graphs/{id}/published", &["get", "put", "delete"]),
        ("/api/v1/graphs/{id}/runs", &["get", "post"]),
        ("/api/v1/graphs/{id}/threads", &["get"]),
        ("/api/v1/graphs/{id}/usage", &["get"]),
        ("/api/v1/runs/{id}", &["get"]),
        ("/api/v1/runs/{id}/events", &["get"]),
        ("/api/v1/runs/{id}/cancel", &["post"]),
        ("/api/v1/runs/{id}/fork", &["post"]),
        ("/api/v1/threads/{id}", &["get"]),
        ("/api/v1/threads/{id}/resume", &["post"]),
        ("/api/v1/graphs/{id}/sharing", &["get"]),
        ("/api/v1/graphs/{id}/links", &["post"]),
        ("/api/v1/graphs/{id}/links/{link}", &["delete"]),
        ("/api/v1/graphs/{id}/members/{username}", &["put"]),
        ("/api/v1/share/{token}", &["post"]),
        ("/api/v1/auth/signup", &["post"]),
        ("/api/v1/auth/login", &["post"]),
        ("/api/v1/auth/logout", &["post"]),
        ("/api/v1/auth/me", &["get"]),
        ("/api/v1/auth/password", &["post"]),
        ("/api/v1/secrets", &["get"]),
        ("/api/v1/secrets/{name}", &["put", "delete"]),
        ("/api/v1/graphs/{id}/invoke", &["post"]),
        ("/api/v1/keys", &["get", "post"]),
        ("/api/v1/keys/{id}", &["delete"]),
        ("/api/v1/graphs/{id}/webhooks", &["get", "post"]),
        ("/api/v1/graphs/{id}/webhooks/{hook}", &["put", "delete"]),
        ("/api/v1/graphs/{id}/webhooks/{hook}/regenerate", &["post"]),
        ("/api/v1/hooks/{token}", &["post"]),
        ("/api/v1/graphs/{id}/schedules", &["get", "post"]),
        (
            "/api/v1/graphs/{id}/schedules/{schedule}",
            &["put", "delete"],
        ),
        ("/api/v1/graphs/{id}/datasets", &["get", "post"]),
        (
            "/api/v1/graphs/{id}/datasets/{dataset}",
            &["get", "put", "delete"],
        ),
        ("/api/v1/graphs/{id}/datasets/{dataset}/examples", &["post"]),
        (
            "/api/v1/graphs/{id}/datasets/{dataset}/examples/from-run",
            &["post"],
        ),
        (
            "/api/v1/graphs/{id}/datasets/{dataset}/examples/{example}",
            &["put", "delete"],
        ),
        ("/api/v1/graphs/{id}/experiments", &["get", "post"]),
        (
            "/api/v1/graphs/{id}/experiments/{experiment}",
            &["get", "delete"],
        ),
        (
            "/api/v1/graphs/{id}/experiments/{experiment}/items",
            &["get"],
        ),
        (
            "/api/v1/graphs/{id}/experiments/{experiment}/cancel",
            &["post"],
        ),
        (
            "/api/v1/graphs/{id}/publish-gate",
            &["get", "put", "delete"],
        ),
    ] {
        for method in methods {
            let operation = &paths[path][method];
            assert!(operation.is_object(), "{method} {path} is not documented");
            assert_eq!(
                operation["responses"]["default"]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/ErrorBody",
                "{method} {path}: its errors are not the error body"
            );
        }
    }
    assert_eq!(
        paths.len(),
        51,
        "an endpoint is documented that this test does not know"
    );

    // Sessions and API keys are both described; the handlers' access
    // checks decide which an operation takes.
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["api_key"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");
    let invoke = &paths["/api/v1/graphs/{id}/invoke"]["post"];
    assert_eq!(
        invoke["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/InvokeRequest"
    );
    for status in ["200", "202"] {
        assert_eq!(
            invoke["responses"][status]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Outcome",
            "{status}"
        );
    }
    let mut security: Vec<String> = invoke["security"]
        .as_array()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    security.sort();
    assert_eq!(security, [r#"{"api_key":[]}"#, r#"{"session":[]}"#]);

    let start = &paths["/api/v1/graphs/{id}/runs"]["post"];
    assert_eq!(
        start["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/StartRequest"
    );
    assert_eq!(
        start["responses"]["202"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RunInfo"
    );
    let schemas = &doc["components"]["schemas"];
    let statuses: Vec<&str> = schemas["RunStatus"]["oneOf"]
        .as_array()
        .expect("RunStatus is an enum")
        .iter()
        .filter_map(|variant| variant["const"].as_str())
        .collect();
    assert_eq!(
        statuses,
        [
            "queued",
            "running",
            "interrupted",
            "finished",
            "failed",
            "cancelled"
        ],
        "the run statuses, typed"
    );
    assert!(schemas["GraphDocument"]["properties"]["nodes"].is_object());
}

#[tokio::test]
async fn operations_say_which_need_the_session_cookie() {
    let server = TestServer::start().await;
    let doc = document(&server).await;
    let scheme = &doc["components"]["securitySchemes"]["session"];
    assert_eq!(scheme["type"], "apiKey");
    assert_eq!(scheme["in"], "cookie");
    assert_eq!(scheme["name"], "heddle_session");
    let session = serde_json::json!([{"session": []}]);
    assert_eq!(doc["paths"]["/api/v1/graphs"]["get"]["security"], session);
    assert_eq!(
        doc["paths"]["/api/v1/secrets/{name}"]["put"]["security"],
        session
    );
    // Keys are taken where the access layer lets them act, nowhere else.
    assert_eq!(doc["paths"]["/api/v1/keys"]["post"]["security"], session);
    for (path, method) in [
        ("/api/v1/graphs/{id}/invoke", "post"),
        ("/api/v1/runs/{id}", "get"),
        ("/api/v1/graphs/{id}", "get"),
    ] {
        let security = doc["paths"][path][method]["security"].to_string();
        assert!(security.contains("api_key"), "{method} {path}: {security}");
    }
    // No document-wide requirement, so an operation without one is open.
    assert!(doc["security"].is_null());
    assert!(
        doc["paths"]["/api/v1/auth/login"]["post"]["security"].is_null(),
        "logging in needs no session"
    );
}
