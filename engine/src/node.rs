//! What a node is to the engine: the [`Node`] trait every kind's runtime
//! implements, what it is given ([`NodeInput`], [`NodeContext`]) and what it
//! returns ([`NodeOutput`], [`NodeError`]); and [`NodeKind`], the way a
//! library user adds kinds of their own next to the built-in ones.

mod child;
mod context;
mod hint;
mod kind;
mod output;

pub use child::{ChildFuture, ChildGraph, ChildOutcome, ChildRun, CompileChild};
pub use context::{CancelFlag, Emit, NodeContext};
pub use hint::{FieldHint, HINT_KEYWORD, KEY_HINT_KEYWORD};
pub use kind::{
    BuildContext, Built, ConfigIssue, DuplicateKind, FileAccess, NodeKind, Registry, SavedGraphs,
    parse_config,
};
pub use output::{NodeError, NodeOutput, SendTo};

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::state::State;

/// The future a node's execution is.
pub type NodeFuture<'a> = Pin<Box<dyn Future<Output = Result<NodeOutput, NodeError>> + Send + 'a>>;

/// A node's runtime: built once per compiled graph from the node's config,
/// then run any number of times, concurrently with other nodes of its step.
///
/// A node reads the state as it was at the start of its step and returns
/// an update; it never writes the state directly, so nodes of one step
/// cannot see each other's changes and the merge order is the engine's.
///
/// ```
/// use heddle_engine::node::{Node, NodeFuture, NodeInput, NodeOutput};
/// use serde_json::json;
///
/// /// Counts characters of the `text` channel into `length`.
/// struct Length;
///
/// impl Node for Length {
///     fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
///         let length = input.state.get("text").and_then(|t| t.as_str()).map_or(0, str::len);
///         Box::pin(async move { Ok(NodeOutput::update("length", json!(length))) })
///     }
/// }
/// ```
pub trait Node: Send + Sync + 'static {
    /// Runs the node once.
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a>;
}

/// What one execution of a node is given.
pub struct NodeInput<'a> {
    /// The state at the start of the step.
    pub state: &'a State,
    /// The item this instance was sent, when it was started by a fan-out
    /// (see [`SendTo`]); `None` for an ordinary activation.
    pub arg: Option<&'a Value>,
    /// Who and where the node is; events and cancellation.
    pub ctx: &'a NodeContext<'a>,
}
