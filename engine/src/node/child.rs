//! Graphs a node runs inside its own step: a subgraph's child, an agent's
//! sub-agents. The executor runs nodes and these nodes run graphs, so the
//! recursion is real; it goes through the two types here rather than
//! through the modules. A kind is handed a compiler when it is built
//! ([`CompileChild`], in its `BuildContext`) and holds what it compiled as
//! a [`ChildGraph`], which the executor knows how to run. The kinds depend
//! on neither the compiler nor the executor.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::format::GraphDocument;
use crate::ids::RunId;
use crate::run::Event;
use crate::usage::Meter;

/// How a child graph's run ended.
#[derive(Debug, Clone)]
pub struct ChildOutcome {
    /// Its final state (at a pause, the state as it stood).
    pub state: Value,
    /// Where it paused to wait for a person, when it did rather than
    /// reaching its end: hand it back, with the answer, to go on.
    pub paused: Option<Box<crate::run::Checkpoint>>,
}

impl ChildOutcome {
    /// Whether it stopped to wait for input rather than reaching its end.
    pub fn interrupted(&self) -> bool {
        self.paused.is_some()
    }
}

/// A child's run, ending in its outcome or why it failed.
pub type ChildFuture<'a> = Pin<Box<dyn Future<Output = Result<ChildOutcome, String>> + Send + 'a>>;

/// Where a child graph runs: inside a node's execution of an enclosing
/// run (see `NodeContext::run_child`).
pub struct ChildRun<'a> {
    /// Hears each of the child's events as it happens.
    pub on_event: &'a (dyn Fn(&Event) + Send + Sync),
    /// The enclosing run's meter: the child's model calls count against
    /// its budget (`None`: the child's own limits only).
    pub meter: Option<Arc<Meter>>,
    /// To go on from where the child paused, with a person's answer,
    /// rather than start it.
    pub resume: Option<(crate::run::Checkpoint, Value)>,
}

/// A compiled graph a node can run.
pub trait ChildGraph: Send + Sync {
    /// Runs the graph from `input` to its end as run `run_id`, inside
    /// `within`.
    fn run<'a>(
        self: Arc<Self>,
        run_id: RunId,
        input: Value,
        within: ChildRun<'a>,
    ) -> ChildFuture<'a>;
}

/// Compiles a child graph with the registry the parent is compiled with;
/// on failure, the child's problems in words.
pub type CompileChild<'a> = dyn Fn(&GraphDocument) -> Result<Arc<dyn ChildGraph>, Vec<String>> + 'a;
