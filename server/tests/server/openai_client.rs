//! The OpenAI-compatible endpoints (`/v1/models`, `/v1/chat/completions`)
//! driven by the official `openai` Python package from PyPI, installed by
//! scripts/setup.sh (`ensure_openai_client`) into target/openai-client:
//! plain and streamed replies, a model named by id and by name, a
//! two-turn thread, and the refusals, exactly as an OpenAI client sees
//! them.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::api_runs::counting_loop;
use crate::invoke::chat_graph;
use crate::support::TestServer;

/// The virtualenv's Python, if the client is installed; a test that needs
/// it fails when `HEDDLE_REQUIRE_OPENAI_CLIENT` is set (the test command
/// sets it), and is skipped with a note otherwise.
fn client_python() -> Option<PathBuf> {
    let python = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/openai-client/bin/python"
    ));
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("HEDDLE_REQUIRE_OPENAI_CLIENT").is_none(),
        "the openai Python client is not installed in target/openai-client (scripts/setup.sh \
         ensure_openai_client installs it)"
    );
    eprintln!("skipped: the openai Python client is not installed (bash scripts/test installs it)");
    None
}

#[tokio::test]
async fn the_official_openai_client_talks_to_a_published_agent() {
    let Some(python) = client_python() else {
        return;
    };
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    server.publish(&graph, 1).await;
    let not_chat = server.create_graph(counting_loop(1)).await;
    server.publish(&not_chat, 1).await;
    let unpublished = server.create_graph(chat_graph()).await;
    let made = server
        .owner
        .make_key(json!({"name": "python", "graphs": [graph, not_chat, unpublished]}))
        .await;

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/openai_chat.py");
    let mut command = std::process::Command::new(python);
    command
        .arg(script)
        .env("HEDDLE_BASE", server.url("/v1"))
        .env("HEDDLE_KEY", made["secret"].as_str().unwrap())
        .env("HEDDLE_MODEL", &graph)
        .env("HEDDLE_MODEL_NAME", "Support chat")
        .env("HEDDLE_NOT_CHAT", &not_chat)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed: {stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();

    // Only published graphs the key may run are models.
    let mut models: Vec<&str> = seen["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    models.sort_unstable();
    let mut expected = vec![graph.as_str(), not_chat.as_str()];
    expected.sort_unstable();
    assert_eq!(models, expected);

    let plain = &seen["plain"];
    assert_eq!(plain["role"], "assistant");
    assert_eq!(plain["finish_reason"], "stop");
    assert_eq!(plain["model"], graph.as_str());
    assert!(
        plain["id"].as_str().unwrap().starts_with("chatcmpl-run-"),
        "{plain}"
    );
    let content = plain["content"].as_str().unwrap();
    assert!(content.starts_with("(offline model)"), "{content}");
    // What the run's model calls used, as the client reads it.
    let usage = &plain["usage"];
    let (prompt, completion) = (
        usage["prompt_tokens"].as_u64().unwrap(),
        usage["completion_tokens"].as_u64().unwrap(),
    );
    assert!(prompt > 0 && completion > 0, "{usage}");
    assert_eq!(usage["total_tokens"].as_u64(), Some(prompt + completion));
    assert!(
        seen["by_name"]
            .as_str()
            .unwrap()
            .starts_with("(offline model)")
    );

    // Streamed word by word: several chunks that make the whole reply.
    let chunks: Vec<&str> = seen["streamed"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chunk| chunk.as_str().unwrap())
        .collect();
    assert!(chunks.len() > 3, "{chunks:?}");
    assert!(chunks.concat().starts_with("(offline model)"), "{chunks:?}");
    assert_eq!(seen["streamed"]["finish_reason"], "stop");

    // The thread remembers across requests.
    assert_eq!(
        seen["turns"][0],
        "(offline model) Nice to meet you, Ada. I will remember your name in this conversation."
    );
    assert_eq!(seen["turns"][1], "(offline model) Your name is Ada.");
    assert_eq!(seen["turns"][2], "(offline model) Your name is Ada.");
    let thread = seen["thread_header"].as_str().unwrap();
    assert!(thread.starts_with("chat-"), "{thread}");
    // It is a thread the owner can open in the app, with runs labelled.
    let (status, view) = server
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/threads/{thread}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["messages"].as_array().unwrap().len(), 6, "{view}");
    let (_, runs) = server
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/graphs/{graph}/runs"),
            None,
        )
        .await;
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .all(|run| run["origin"] == "api_key" && run["origin_label"] == "python"),
        "{runs}"
    );

    assert_eq!(seen["forged"]["status"], 401, "{}", seen["forged"]);
    assert_eq!(seen["not_chat"]["status"], 400, "{}", seen["not_chat"]);
    assert!(
        seen["not_chat"]["message"]
            .as_str()
            .unwrap()
            .contains("is not a chat graph"),
        "{}",
        seen["not_chat"]
    );
    assert_eq!(seen["tools"]["status"], 400, "{}", seen["tools"]);
    assert!(
        seen["tools"]["message"]
            .as_str()
            .unwrap()
            .contains("`tools`: a Heddle agent calls the tools its graph gives it"),
        "{}",
        seen["tools"]
    );
    assert_eq!(seen["unknown"]["status"], 400);
    assert!(
        seen["unknown"]["message"]
            .as_str()
            .unwrap()
            .contains("GET /v1/models lists them")
    );
}
