//! Tools models can call: the [`Tool`] trait, the [`Toolbox`] a graph's
//! tool nodes draw from (with the server's policy per tool and the state
//! every run shares), and the built-in tools (one file each).

mod calculator;
mod call;
mod clock;
#[cfg(feature = "runtime")]
mod gate;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
mod policy;

pub use calculator::Calculator;
pub use call::BoundTool;
pub(crate) use call::Called;
pub use clock::Clock;
#[cfg(feature = "runtime")]
pub use gate::ToolGates;
#[cfg(feature = "http")]
pub use http::{HttpRequest, is_internal};
pub use policy::{BreakerPolicy, BreakerState, EffectivePolicy, ToolPolicy};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::model::ToolSpec;

/// The future a tool call is.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// Why a tool call failed, or that it paused. The tools node turns a
/// failure into a message the model reads, not a failed run; a pause (a
/// sub-agent that asks a person) pauses the agent that called it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong, for the model and for people.
    pub message: String,
    /// Whether trying again may succeed (a timeout, a 5xx, a dropped
    /// connection); a tool policy's `retry_on: transient` retries only these.
    pub transient: bool,
    /// Not a failure: the call paused for a person, asking this (a node's
    /// pause payload, with where the paused child stands). Never retried
    /// and never counted by a breaker.
    pub paused: Option<Box<Value>>,
}

impl ToolError {
    /// A failure that trying again will not fix (bad arguments, a refusal).
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            transient: false,
            paused: None,
        }
    }

    /// A failure worth trying again: a timeout, a 5xx, a dropped connection.
    pub fn transient(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            transient: true,
            paused: None,
        }
    }

    /// The call paused for a person, asking `asked`.
    pub fn paused(asked: Value) -> Self {
        ToolError {
            message: "paused for a person".to_string(),
            transient: false,
            paused: Some(Box::new(asked)),
        }
    }
}

/// A tool.
pub trait Tool: Send + Sync + 'static {
    /// Its name, description and arguments' schema, as models see them.
    fn spec(&self) -> ToolSpec;

    /// Calls it with the arguments the model wrote.
    fn call(&self, arguments: Value) -> ToolFuture<'_>;

    /// Calls it from inside a node's execution. Most tools do not care
    /// where they run (this is [`Tool::call`]); one that runs a graph (an
    /// agent's sub-agent) runs it inside the node's run.
    fn call_within<'a>(
        &'a self,
        arguments: Value,
        _node: &'a crate::node::NodeContext<'_>,
    ) -> ToolFuture<'a> {
        self.call(arguments)
    }
}

/// The tools available to a graph, by name, with the server's policy for
/// each. Clones share the tools' gates (calls in flight, breakers).
#[derive(Clone, Default)]
pub struct Toolbox {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    policies: BTreeMap<String, ToolPolicy>,
    #[cfg(feature = "runtime")]
    gates: ToolGates,
}

impl Toolbox {
    /// No tools.
    pub fn empty() -> Self {
        Toolbox::default()
    }

    /// The built-in tools: `calculator`, `current_time`, and with the
    /// `http` feature `http_request` (internal addresses refused).
    pub fn builtin() -> Self {
        let mut toolbox = Toolbox::default();
        toolbox.add(Calculator);
        toolbox.add(Clock);
        #[cfg(feature = "http")]
        toolbox.add(HttpRequest::default());
        toolbox
    }

    /// Adds (or replaces) a tool.
    pub fn add(&mut self, tool: impl Tool) {
        let tool: Arc<dyn Tool> = Arc::new(tool);
        self.tools.insert(tool.spec().name, tool);
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Every tool's name.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Sets the server's policy for a tool: a floor the graphs' own
    /// policies cannot lower (see [`EffectivePolicy::combine`]).
    pub fn set_policy(&mut self, name: impl Into<String>, policy: ToolPolicy) {
        self.policies.insert(name.into(), policy);
    }

    /// The server's policy for a tool.
    pub fn policy(&self, name: &str) -> Option<&ToolPolicy> {
        self.policies.get(name)
    }

    /// `tool` bound under `policy` (the node's, put over the server's).
    pub fn bind(
        &self,
        name: &str,
        tool: Arc<dyn Tool>,
        default_timeout_ms: u64,
        policy: Option<&ToolPolicy>,
    ) -> BoundTool {
        BoundTool {
            name: name.to_string(),
            tool,
            policy: EffectivePolicy::combine(default_timeout_ms, policy, self.policy(name)),
            #[cfg(feature = "runtime")]
            gate: self.gates.gate(name),
        }
    }

    /// Every tool passed through `f` (under the same name and policy).
    #[cfg(feature = "runtime")]
    pub(crate) fn map_tools(&mut self, f: &dyn Fn(Arc<dyn Tool>) -> Arc<dyn Tool>) {
        for tool in self.tools.values_mut() {
            *tool = f(Arc::clone(tool));
        }
    }

    /// Every tool's spec, by name.
    pub fn specs(&self) -> Vec<crate::model::ToolSpec> {
        self.tools.values().map(|tool| tool.spec()).collect()
    }
}
