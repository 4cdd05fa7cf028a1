//! Tools models can call: the [`Tool`] trait, the [`Toolbox`] a graph's
//! tool nodes draw from, and the built-in tools (one file each).

mod calculator;
mod clock;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "mcp")]
pub mod mcp;

pub use calculator::Calculator;
pub use clock::Clock;
#[cfg(feature = "http")]
pub use http::{HttpRequest, is_internal};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::model::ToolSpec;

/// The future a tool call is.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// Why a tool call failed. The tools node turns it into a message the
/// model reads, not a failed run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

/// A tool.
pub trait Tool: Send + Sync + 'static {
    /// Its name, description and arguments' schema, as models see them.
    fn spec(&self) -> ToolSpec;

    /// Calls it with the arguments the model wrote.
    fn call(&self, arguments: Value) -> ToolFuture<'_>;
}

/// The tools available to a graph, by name.
#[derive(Clone, Default)]
pub struct Toolbox {
    tools: BTreeMap<String, Arc<dyn Tool>>,
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

    /// Every tool's spec, by name.
    pub fn specs(&self) -> Vec<crate::model::ToolSpec> {
        self.tools.values().map(|tool| tool.spec()).collect()
    }
}
