//! `script`: a small Rhai script that transforms the state. It reads the
//! state as `state` (and a fanned-out item as `item`) and returns a map,
//! the update: `#{ total: state.price * state.quantity }`. Scripts are
//! sandboxed: no files, no network, no modules; operations, nesting,
//! string, array and map sizes and run time are all limited, and `print`
//! goes to the run's events.

use std::time::{Duration, Instant};

use rhai::{AST, Dynamic, Engine, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::node::{
    Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput, parse_config,
};

/// Settings of a `script` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    /// The script, in Rhai. It returns a map of channel updates.
    pub source: String,
    /// The most operations one run of the script may take.
    #[serde(default = "default_operations")]
    pub max_operations: u64,
    /// The longest one run of the script may take.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_operations() -> u64 {
    1_000_000
}

fn default_timeout_ms() -> u64 {
    1_000
}

/// A sandboxed engine: Rhai's standard functions, nothing that reaches
/// outside, and hard limits.
fn engine(config: &ScriptConfig) -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(config.max_operations);
    engine.set_max_expr_depths(64, 32);
    engine.set_max_call_levels(32);
    engine.set_max_string_size(1 << 20);
    engine.set_max_array_size(100_000);
    engine.set_max_map_size(100_000);
    engine.disable_symbol("eval");
    engine
}

pub(super) fn build(config: &Value) -> Result<Built, Vec<ConfigIssue>> {
    let config: ScriptConfig = parse_config(config)?;
    let ast = engine(&config).compile(&config.source).map_err(|error| {
        vec![ConfigIssue::new(
            "source",
            format!("the script does not compile: {error}"),
        )]
    })?;
    Ok(Built::plain(Script { ast, config }))
}

struct Script {
    ast: AST,
    config: ScriptConfig,
}

impl Script {
    fn evaluate(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        let mut engine = engine(&self.config);
        let started = Instant::now();
        let limit = Duration::from_millis(self.config.timeout_ms);
        engine
            .on_progress(move |_| (started.elapsed() > limit).then(|| Dynamic::from("timed out")));
        // Printed lines become `log` events once the script is done.
        let printed = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = std::sync::Arc::clone(&printed);
        engine.on_print(move |text| {
            if let Ok(mut lines) = sink.lock()
                && lines.len() < 1000
            {
                lines.push(text.to_string());
            }
        });

        let to_dynamic = |value: &Value| {
            rhai::serde::to_dynamic(value)
                .map_err(|error| NodeError::permanent(format!("cannot pass the state: {error}")))
        };
        let mut scope = Scope::new();
        scope.push_constant("state", to_dynamic(&input.state.to_json())?);
        if let Some(item) = input.arg {
            scope.push_constant("item", to_dynamic(item)?);
        }
        let result = engine.eval_ast_with_scope::<Dynamic>(&mut scope, &self.ast);
        for line in printed
            .lock()
            .map(|lines| lines.clone())
            .unwrap_or_default()
        {
            input.ctx.emit("log", json!({"text": line}));
        }
        let result: Dynamic = result.map_err(|error| {
            let message = match *error {
                rhai::EvalAltResult::ErrorTerminated(..) => {
                    format!("the script ran longer than {} ms", self.config.timeout_ms)
                }
                rhai::EvalAltResult::ErrorTooManyOperations(..) => {
                    format!(
                        "the script took more than {} operations",
                        self.config.max_operations
                    )
                }
                other => format!("the script failed: {other}"),
            };
            NodeError::permanent(message)
        })?;
        let update: Value = rhai::serde::from_dynamic(&result).map_err(|error| {
            NodeError::permanent(format!("the script's result is not JSON: {error}"))
        })?;
        match update {
            Value::Object(fields) => Ok(NodeOutput {
                update: fields.into_iter().collect(),
                ..NodeOutput::default()
            }),
            Value::Null
            | Value::Array(_)
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_) => Err(NodeError::permanent(
                "the script must return a map of channel updates, e.g. #{ total: 3 }",
            )),
        }
    }
}

impl Node for Script {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.evaluate(&input)))
    }
}
