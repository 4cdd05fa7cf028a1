//! A recording given back: the same replies, streamed the same way, in the
//! order they were recorded, with the real model and tools never called.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::*;
use crate::model::{
    ChatMessage, ChatModel, ChatReply, ChatRequest, Delta, ModelFuture, Role, ToolCall,
};
use crate::tools::{ToolError, ToolFuture};

/// A model that answers differently each time it is called (as a real
/// one may), with a tool call whose id is new each time.
#[derive(Clone, Default)]
struct Changing {
    calls: Arc<AtomicU32>,
}

impl ChatModel for Changing {
    fn name(&self) -> &str {
        "changing"
    }

    fn chat<'a>(
        &'a self,
        _request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            deltas(Delta::Text(format!("reply {call} ")));
            deltas(Delta::Text("ends".into()));
            deltas(Delta::ToolCall {
                index: 0,
                id: Some(format!("call_{call}")),
                name: Some("clock".into()),
                arguments: "{}".into(),
            });
            Ok(ChatReply {
                content: format!("reply {call} ends"),
                tool_calls: vec![ToolCall {
                    id: format!("call_{call}"),
                    name: "clock".into(),
                    arguments: "{}".into(),
                }],
                model: "changing-1".into(),
                ..ChatReply::default()
            })
        })
    }
}

/// A tool that answers with how often it was called, and fails
/// transiently when asked to.
#[derive(Clone, Default)]
struct Ticking {
    calls: Arc<AtomicU32>,
}

impl Tool for Ticking {
    fn spec(&self) -> crate::model::ToolSpec {
        crate::model::ToolSpec {
            name: "ticks".into(),
            description: "how often it was called".into(),
            parameters: json!({"type": "object"}),
        }
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            match arguments["fail"].as_str() {
                Some("transient") => Err(ToolError::transient("timed out")),
                Some("refused") => Err(ToolError::new("refused")),
                _ => Ok(json!({"tick": call})),
            }
        })
    }
}

fn registry(model: &Changing, tool: &Ticking) -> Registry {
    Registry::new()
        .with_default_model(model.clone())
        .with_tool(tool.clone())
}

fn ask(text: &str) -> ChatRequest {
    let mut message = ChatMessage::new(Role::User, text);
    message.id = Some(format!("{}-{text}", uuid_like()));
    ChatRequest {
        messages: vec![message],
        ..ChatRequest::default()
    }
}

/// A different message id each time (ids are not part of a call's key).
fn uuid_like() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

async fn chat(registry: &Registry, text: &str) -> (ChatReply, Vec<Delta>) {
    let model = registry.model(None).expect("a default model");
    let streamed = Mutex::new(Vec::new());
    let reply = model
        .chat(ask(text), &|delta| lock(&streamed).push(delta))
        .await
        .expect("a reply");
    (reply, streamed.into_inner().unwrap_or_default())
}

async fn tick(registry: &Registry, arguments: Value) -> Result<Value, ToolError> {
    let tool = Arc::clone(registry.tools().get("ticks").expect("the tool"));
    tool.call(arguments).await
}

fn written(recording: &Recording) -> Vec<u8> {
    let mut bytes = Vec::new();
    recording.write(&mut bytes).expect("written");
    bytes
}

#[tokio::test]
async fn replies_are_given_back_in_the_order_recorded_without_calling_the_model_or_the_tool() {
    let (model, tool) = (Changing::default(), Ticking::default());
    let recording = Recording::new();
    let recorded = recording.wrap(registry(&model, &tool));
    let first = chat(&recorded, "hello").await;
    let second = chat(&recorded, "hello").await;
    let other = chat(&recorded, "bye").await;
    assert_eq!(tick(&recorded, json!({})).await, Ok(json!({"tick": 1})));
    assert_eq!(tick(&recorded, json!({})).await, Ok(json!({"tick": 2})));
    assert_eq!(
        recording.counts(),
        Counts {
            replayed: 0,
            live: 5
        }
    );
    assert_eq!(model.calls.load(Ordering::SeqCst), 3);

    let again = Recording::read(written(&recording).as_slice()).expect("read");
    let (model, tool) = (Changing::default(), Ticking::default());
    let replaying = again.wrap(registry(&model, &tool));
    // Asked in another order: each request gets its own replies, in turn.
    assert_eq!(chat(&replaying, "bye").await, other);
    assert_eq!(chat(&replaying, "hello").await, first);
    assert_eq!(chat(&replaying, "hello").await, second);
    assert_eq!(first.0.tool_calls[0].id, "call_1");
    assert_eq!(second.0.tool_calls[0].id, "call_2");
    assert_eq!(tick(&replaying, json!({})).await, Ok(json!({"tick": 1})));
    assert_eq!(tick(&replaying, json!({})).await, Ok(json!({"tick": 2})));
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
    assert_eq!(tool.calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        again.counts(),
        Counts {
            replayed: 5,
            live: 0
        }
    );

    // Past what was recorded, or a request that changed: the real model.
    let (third, _) = chat(&replaying, "hello").await;
    assert_eq!(third.content, "reply 1 ends");
    let (changed, _) = chat(&replaying, "hello, again").await;
    assert_eq!(changed.content, "reply 2 ends");
    assert_eq!(model.calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        again.counts(),
        Counts {
            replayed: 5,
            live: 2
        }
    );

    // What it writes replays all seven calls.
    let third_time = Recording::read(written(&again).as_slice()).expect("read");
    assert_eq!(String::from_utf8_lossy(&written(&again)).lines().count(), 7);
    let model = Changing::default();
    let replaying = third_time.wrap(registry(&model, &Ticking::default()));
    assert_eq!(chat(&replaying, "hello, again").await.0, changed);
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tools_lasting_failure_is_recorded_and_a_passing_one_is_not() {
    let tool = Ticking::default();
    let recording = Recording::new();
    let recorded = recording.wrap(registry(&Changing::default(), &tool));
    let refused = tick(&recorded, json!({"fail": "refused"})).await;
    assert_eq!(refused, Err(ToolError::new("refused")));
    assert!(tick(&recorded, json!({"fail": "transient"})).await.is_err());
    assert_eq!(
        String::from_utf8_lossy(&written(&recording))
            .lines()
            .count(),
        1
    );

    let tool = Ticking::default();
    let again = Recording::read(written(&recording).as_slice()).expect("read");
    let replaying = again.wrap(registry(&Changing::default(), &tool));
    assert_eq!(tick(&replaying, json!({"fail": "refused"})).await, refused);
    assert!(
        tick(&replaying, json!({"fail": "transient"}))
            .await
            .is_err()
    );
    assert_eq!(
        tool.calls.load(Ordering::SeqCst),
        1,
        "only the transient one ran"
    );
}

#[test]
fn a_bad_recording_is_refused_at_its_line() {
    let good = r#"{"call":"tool","key":"k","tool":"ticks","result":{"ok":1}}"#;
    let text = format!("{good}\n\n{good}\n{{\"call\":\"tool\",\"key\":\"k\"}}\n");
    let error = Recording::read(text.as_bytes()).err().expect("refused");
    assert!(error.to_string().starts_with("line 4: "), "{error}");
    assert!(error.to_string().contains("missing field"), "{error}");

    let long = format!("{good}\n{}\n", " ".repeat(MAX_LINE_BYTES + 10));
    let error = Recording::read(long.as_bytes()).err().expect("refused");
    assert!(
        error.to_string().starts_with("line 2: longer than"),
        "{error}"
    );

    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let error = Recording::read(deep.as_bytes()).err().expect("refused");
    assert!(error.to_string().starts_with("line 1: "), "{error}");
}

#[tokio::test]
async fn replaying_only_a_call_not_recorded_fails_and_reaches_nothing() {
    let (model, tool) = (Changing::default(), Ticking::default());
    let recording = Recording::new();
    let recorded = recording.wrap(registry(&model, &tool));
    let hello = chat(&recorded, "hello").await;

    let (model, tool) = (Changing::default(), Ticking::default());
    let again = Recording::read(written(&recording).as_slice())
        .expect("read")
        .replay_only();
    let replaying = again.wrap(registry(&model, &tool));
    assert_eq!(chat(&replaying, "hello").await, hello);
    let missing = replaying
        .model(None)
        .expect("a default model")
        .chat(ask("not recorded"), &|_| {})
        .await;
    assert!(
        matches!(&missing, Err(crate::model::ModelError::Refused(message)) if message.contains("no recorded reply")),
        "{missing:?}"
    );
    let error = tick(&replaying, json!({})).await.expect_err("not recorded");
    assert!(error.message.contains("no recorded result"), "{error}");
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
    assert_eq!(tool.calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        again.counts(),
        Counts {
            replayed: 1,
            live: 0
        }
    );
}
