//! `script`: a small Rhai script that transforms the state. It reads the
//! state as `state` (and a fanned-out item as `item`) and returns a map,
//! the update: `#{ total: state.price * state.quantity }`. Scripts are
//! sandboxed: no files, no network, no modules; operations, nesting,
//! string, array and map sizes and run time are all limited (there is no
//! "unlimited"), and `print` goes to the run's events. Scripts run on the
//! registry's script pool ([`crate::run::WorkerPool`]), never on the async
//! runtime; a node timeout or a cancelled run stops them mid-loop.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rhai::{AST, Dynamic, Engine, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod to_json;

use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// The most operations a script may be allowed (`max_operations`).
pub const MAX_OPERATIONS: u64 = 100_000_000;
/// The longest a script may be allowed to run (`timeout_ms`), 30 s.
pub const MAX_TIMEOUT_MS: u64 = 30_000;

/// Settings of a `script` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    /// The script, in Rhai. It returns a map of channel updates.
    #[schemars(extend("x-heddle" = "script"))]
    pub source: String,
    /// The most operations one run of the script may take (1 to
    /// 100,000,000; there is no "unlimited").
    #[serde(default = "default_operations")]
    pub max_operations: u64,
    /// The longest one run of the script may take, in milliseconds (1 to
    /// 30,000).
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
    engine.set_max_operations(config.max_operations.clamp(1, MAX_OPERATIONS));
    engine.set_max_expr_depths(64, 32);
    engine.set_max_call_levels(32);
    engine.set_max_string_size(1 << 20);
    engine.set_max_array_size(100_000);
    engine.set_max_map_size(100_000);
    engine.disable_symbol("eval");
    engine
}

/// The limits' own problems, located at their fields.
fn check_limits(config: &ScriptConfig) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    if !(1..=MAX_OPERATIONS).contains(&config.max_operations) {
        issues.push(ConfigIssue::new(
            "max_operations",
            format!("must be 1 to {MAX_OPERATIONS} (scripts always have a limit)"),
        ));
    }
    if !(1..=MAX_TIMEOUT_MS).contains(&config.timeout_ms) {
        issues.push(ConfigIssue::new(
            "timeout_ms",
            format!("must be 1 to {MAX_TIMEOUT_MS} ms (scripts always have a limit)"),
        ));
    }
    issues
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: ScriptConfig = parse_config(config)?;
    Ok(Built::plain(Script {
        sandbox: Sandbox::build(config, cx, "")?,
    }))
}

struct Script {
    sandbox: Sandbox,
}

/// A compiled script with its limits, run on the registry's script pool:
/// the `script` kind's and the model hooks' (see `hooks`).
pub(super) struct Sandbox {
    compiled: Compiled,
    limits: crate::state::ValueLimits,
    #[cfg(feature = "runtime")]
    pool: Arc<crate::run::WorkerPool>,
}

impl Sandbox {
    /// Checks and compiles `config`'s script; issues are located under
    /// `path` (`hooks.before.script`).
    pub(super) fn build(
        config: ScriptConfig,
        cx: &BuildContext,
        path: &str,
    ) -> Result<Sandbox, Vec<ConfigIssue>> {
        let at = |field: &str| {
            if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            }
        };
        let compiled = Compiled::new(config).map_err(|issues| {
            issues
                .into_iter()
                .map(|issue| ConfigIssue::new(at(&issue.path), issue.message))
                .collect::<Vec<_>>()
        })?;
        Ok(Sandbox {
            compiled,
            limits: cx.registry.value_limits(),
            #[cfg(feature = "runtime")]
            pool: cx.registry.script_pool(),
        })
    }

    /// Runs the script with `inputs` as its constants; what it printed
    /// becomes `log` events of the node.
    pub(super) async fn eval(
        &self,
        ctx: &crate::node::NodeContext<'_>,
        inputs: Vec<(&'static str, Value)>,
    ) -> Result<Value, NodeError> {
        let (result, printed) = self.execute(ctx, inputs).await?;
        for line in printed {
            ctx.emit("log", json!({"text": line}));
        }
        result.map_err(NodeError::permanent)
    }

    /// On the script pool, never on the async runtime's threads; a node
    /// timeout or a cancelled run stops it.
    #[cfg(feature = "runtime")]
    async fn execute(
        &self,
        ctx: &crate::node::NodeContext<'_>,
        inputs: Vec<(&'static str, Value)>,
    ) -> Result<Evaluated, NodeError> {
        let cancelled = ctx.cancel.clone();
        self.compiled
            .evaluate_on(&self.pool, inputs, self.limits, move || {
                cancelled.is_cancelled()
            })
            .await
            .map_err(NodeError::permanent)
    }

    #[cfg(not(feature = "runtime"))]
    async fn execute(
        &self,
        _: &crate::node::NodeContext<'_>,
        inputs: Vec<(&'static str, Value)>,
    ) -> Result<Evaluated, NodeError> {
        Ok(self.compiled.evaluate_here(inputs, &self.limits))
    }
}

/// A compiled script and its limits, with no run to report to: what
/// [`Sandbox`] runs for a node, and what a scorer runs by itself.
#[derive(Clone)]
pub(crate) struct Compiled {
    ast: Arc<AST>,
    config: ScriptConfig,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Compiled {
    /// Checks the limits and compiles the source; problems at their fields
    /// (`source`, `max_operations`, `timeout_ms`).
    pub(crate) fn new(config: ScriptConfig) -> Result<Compiled, Vec<ConfigIssue>> {
        let issues = check_limits(&config);
        if !issues.is_empty() {
            return Err(issues);
        }
        let ast = engine(&config).compile(&config.source).map_err(|error| {
            vec![ConfigIssue::new(
                "source",
                format!("the script does not compile: {error}"),
            )]
        })?;
        Ok(Compiled {
            ast: Arc::new(ast),
            config,
        })
    }

    /// Runs it on the calling thread, to its end or its limits.
    fn evaluate_here(
        &self,
        inputs: Vec<(&'static str, Value)>,
        limits: &crate::state::ValueLimits,
    ) -> Evaluated {
        evaluate(&self.ast, &self.config, limits, inputs, || false)
    }

    /// Runs it on `pool`, never on the async runtime's threads, until its
    /// end, its limits, or `stop`.
    #[cfg(feature = "runtime")]
    async fn evaluate_on(
        &self,
        pool: &crate::run::WorkerPool,
        inputs: Vec<(&'static str, Value)>,
        limits: crate::state::ValueLimits,
        stop: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Result<Evaluated, String> {
        let (ast, config) = (Arc::clone(&self.ast), self.config.clone());
        pool.run(move |abort| {
            let abort = abort.clone();
            evaluate(&ast, &config, &limits, inputs, move || {
                abort.is_set() || stop()
            })
        })
        .await
        .map_err(|error| error.to_string())
    }

    /// Its result on the calling thread (what it printed is dropped).
    pub(crate) fn run_here(
        &self,
        inputs: Vec<(&'static str, Value)>,
        limits: &crate::state::ValueLimits,
    ) -> Result<Value, String> {
        self.evaluate_here(inputs, limits).0
    }

    /// Its result on `pool` (what it printed is dropped).
    #[cfg(feature = "runtime")]
    pub(crate) async fn run_on(
        &self,
        pool: &crate::run::WorkerPool,
        inputs: Vec<(&'static str, Value)>,
        limits: crate::state::ValueLimits,
    ) -> Result<Value, String> {
        self.evaluate_on(pool, inputs, limits, || false).await?.0
    }
}

/// The most one printed line (or an error) keeps, in bytes.
const MAX_PRINTED_LINE: usize = 4 << 10;
/// The most all of one run's printed lines keep, in bytes: they become
/// events of the run, stored for good.
const MAX_PRINTED_BYTES: usize = 64 << 10;

/// `text` cut to at most `max` bytes (on a character boundary), saying so.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// What one run of a script gave: its result, and the lines it printed.
type Evaluated = (Result<Value, String>, Vec<String>);

/// Runs a script to its end or its limits, on the calling thread (a
/// script-pool thread). `stop` is polled at every operation: a node
/// timeout or a cancelled run stops the script there.
fn evaluate(
    ast: &AST,
    config: &ScriptConfig,
    limits: &crate::state::ValueLimits,
    inputs: Vec<(&'static str, Value)>,
    stop: impl Fn() -> bool + Send + Sync + 'static,
) -> Evaluated {
    let mut engine = engine(config);
    let started = Instant::now();
    let limit = Duration::from_millis(config.timeout_ms.clamp(1, MAX_TIMEOUT_MS));
    engine.on_progress(move |_| {
        if stop() {
            Some(Dynamic::from("stopped"))
        } else {
            (started.elapsed() > limit).then(|| Dynamic::from("timed out"))
        }
    });
    let printed = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&printed);
    engine.on_print(move |text| {
        if let Ok(mut lines) = sink.lock()
            && lines.len() < 1000
        {
            let used: usize = lines.iter().map(String::len).sum();
            let room = MAX_PRINTED_BYTES.saturating_sub(used);
            if room > 0 {
                lines.push(clip(text, room.min(MAX_PRINTED_LINE)));
            }
        }
    });
    let result = (|| {
        let to_dynamic = |value: &Value| {
            rhai::serde::to_dynamic(value)
                .map_err(|error| format!("cannot pass the script its inputs: {error}"))
        };
        let mut scope = Scope::new();
        for (name, value) in &inputs {
            scope.push_constant(*name, to_dynamic(value)?);
        }
        let result = engine
            .eval_ast_with_scope::<Dynamic>(&mut scope, ast)
            .map_err(|error| match *error {
                rhai::EvalAltResult::ErrorTerminated(reason, _)
                    if reason.clone().into_string().is_ok_and(|r| r == "stopped") =>
                {
                    "the script was stopped (the node timed out or the run was cancelled)"
                        .to_string()
                }
                rhai::EvalAltResult::ErrorTerminated(..) => {
                    format!("the script ran longer than {} ms", config.timeout_ms)
                }
                rhai::EvalAltResult::ErrorTooManyOperations(..) => {
                    format!(
                        "the script took more than {} operations",
                        config.max_operations
                    )
                }
                other => clip(&format!("the script failed: {other}"), MAX_PRINTED_LINE),
            })?;
        // Converted and checked without recursion: a script can build a
        // value deeper than this thread's stack.
        to_json::to_json(result, limits)
    })();
    let lines = printed
        .lock()
        .map(|lines| lines.clone())
        .unwrap_or_default();
    (result, lines)
}

impl Script {
    async fn run_script(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let mut inputs = vec![("state", input.state.to_json())];
        if let Some(item) = input.arg {
            inputs.push(("item", item.clone()));
        }
        match self.sandbox.eval(input.ctx, inputs).await? {
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
        Box::pin(self.run_script(input))
    }
}
