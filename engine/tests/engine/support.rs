//! Test node kinds and helpers to build and run graphs from JSON.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use heddle_engine::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeKind, NodeOutput,
    parse_config,
};
use heddle_engine::run::{Event, Run, RunError, RunOptions, RunOutput};
use heddle_engine::{CompiledGraph, GraphDocument, NodeId, Registry, RunId};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The built-in kinds plus the test kinds below.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(SleepKind).unwrap();
    registry.register(FlakyKind).unwrap();
    registry.register(GotoKind).unwrap();
    registry.register(HangKind).unwrap();
    registry.register(EmitKind).unwrap();
    registry
}

/// A document from JSON, with `format_version` and `name` filled in.
pub fn document(mut value: Value) -> GraphDocument {
    let object = value.as_object_mut().unwrap();
    object.entry("format_version").or_insert(json!(2));
    object.entry("name").or_insert(json!("test"));
    GraphDocument::from_value(value).unwrap()
}

/// Compiles a document, failing the test with the report if invalid.
pub fn compile(value: Value) -> Arc<CompiledGraph> {
    match heddle_engine::compile(&document(value), &registry()) {
        Ok(graph) => Arc::new(graph),
        Err(report) => panic!("graph does not compile:\n{report}"),
    }
}

/// Runs a graph and returns its result and every event.
pub async fn run(
    graph: &Arc<CompiledGraph>,
    input: Value,
) -> (Result<RunOutput, RunError>, Vec<Event>) {
    let run = Run::new(
        Arc::clone(graph),
        RunId::from("test-run"),
        input,
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let result = run.execute().await;
    let events = log.since(0).iter().map(|event| (**event).clone()).collect();
    (result, events)
}

/// The nodes that ran, step by step, as event payload names show them.
pub fn node_order(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.payload {
            heddle_engine::run::EventPayload::NodeSucceeded { node, .. } => Some(node.to_string()),
            _ => None,
        })
        .collect()
}

/// Channels for tests: `log` (append list), `count` (sum), `last` (replace).
pub fn channels() -> Value {
    json!({
        "log": {"type": "list", "reducer": "append"},
        "count": {"type": "integer", "reducer": "sum"},
        "last": {"type": "any"}
    })
}

/// `sleep`: waits `ms`, then writes `write`.
struct SleepKind;

#[derive(Deserialize)]
struct SleepConfig {
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    write: Map<String, Value>,
}

struct Sleep {
    ms: u64,
    write: Vec<(String, Value)>,
}

impl NodeKind for SleepKind {
    fn name(&self) -> &str {
        "sleep"
    }
    fn build(&self, config: &Value, _: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        let config: SleepConfig = parse_config(config)?;
        Ok(Built::plain(Sleep {
            ms: config.ms,
            write: config.write.into_iter().collect(),
        }))
    }
}

impl Node for Sleep {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        let item = input.arg.cloned();
        Box::pin(async move {
            if self.ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.ms)).await;
            }
            let mut output = NodeOutput::default();
            for (channel, value) in &self.write {
                let value = if value == "$item" {
                    item.clone().unwrap_or(Value::Null)
                } else {
                    value.clone()
                };
                output.update.push((channel.clone(), value));
            }
            Ok(output)
        })
    }
}

/// `flaky`: fails its first `failures` attempts (transient unless told
/// otherwise), then writes `count: 1`.
struct FlakyKind;

#[derive(Deserialize)]
struct FlakyConfig {
    failures: u32,
    #[serde(default = "yes")]
    transient: bool,
}

fn yes() -> bool {
    true
}

struct Flaky {
    failures: u32,
    transient: bool,
    attempts: AtomicU32,
}

impl NodeKind for FlakyKind {
    fn name(&self) -> &str {
        "flaky"
    }
    fn build(&self, config: &Value, _: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        let config: FlakyConfig = parse_config(config)?;
        Ok(Built::plain(Flaky {
            failures: config.failures,
            transient: config.transient,
            attempts: AtomicU32::new(0),
        }))
    }
}

impl Node for Flaky {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            if attempt <= self.failures {
                let message = format!("failure {attempt}");
                Err(if self.transient {
                    NodeError::transient(message)
                } else {
                    NodeError::permanent(message)
                })
            } else {
                Ok(NodeOutput::update("count", json!(1)))
            }
        })
    }
}

/// `goto`: jumps to `targets`, writing `count: 1`.
struct GotoKind;

#[derive(Deserialize)]
struct GotoConfig {
    targets: Vec<NodeId>,
}

struct Goto(Vec<NodeId>);

impl NodeKind for GotoKind {
    fn name(&self) -> &str {
        "goto"
    }
    fn build(&self, config: &Value, _: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        let config: GotoConfig = parse_config(config)?;
        Ok(Built::plain(Goto(config.targets)))
    }
}

impl Node for Goto {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        let output = NodeOutput {
            goto: self.0.clone(),
            ..NodeOutput::update("count", json!(1))
        };
        Box::pin(std::future::ready(Ok(output)))
    }
}

/// `hang`: never finishes; records that it started and that it was dropped.
pub struct HangKind;

pub static HANG_STARTED: AtomicBool = AtomicBool::new(false);
pub static HANG_DROPPED: AtomicBool = AtomicBool::new(false);

struct Hang;

struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        HANG_DROPPED.store(true, Ordering::SeqCst);
    }
}

impl NodeKind for HangKind {
    fn name(&self) -> &str {
        "hang"
    }
    fn build(&self, _: &Value, _: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        Ok(Built::plain(Hang))
    }
}

impl Node for Hang {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(async {
            let _flag = DropFlag;
            HANG_STARTED.store(true, Ordering::SeqCst);
            std::future::pending::<()>().await;
            Ok(NodeOutput::default())
        })
    }
}

/// `emit`: emits `count` custom `token` events.
struct EmitKind;

#[derive(Deserialize)]
struct EmitConfig {
    count: u32,
}

struct Emit(u32);

impl NodeKind for EmitKind {
    fn name(&self) -> &str {
        "emit"
    }
    fn build(&self, config: &Value, _: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        let config: EmitConfig = parse_config(config)?;
        Ok(Built::plain(Emit(config.count)))
    }
}

impl Node for Emit {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        for i in 0..self.0 {
            input.ctx.emit("token", json!({"text": format!("t{i}")}));
        }
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}
