//! The built-in node kinds, one file each, listed in one closed enum so the
//! compiler makes every `match` handle a new kind.
//!
//! The model, tool, agent, router, memory, human, script and subgraph kinds
//! come later and build on the same [`crate::node::Node`] trait.

mod agent;
mod ask;
mod builtin;
mod child_pause;
mod condition;
mod end;
mod fan_out;
mod hooks;
mod human;
mod join;
mod llm;
mod memory;
mod router;
pub(crate) mod script;
mod set;
mod start;
pub use start::sample_input;
mod structured;
mod subgraph;
mod template;
mod tools;
mod wait;

pub use agent::{AgentConfig, DONE_ROUTE, Handoff};
pub use ask::AskConfig;
pub use builtin::{BuiltinKind, KindGroup};
pub use child_pause::PAUSED_CHILD;
pub use condition::{Branch, ConditionConfig};
pub use end::EndConfig;
pub use fan_out::FanOutConfig;
pub use hooks::{HookCode, ModelHooks};
pub use human::HumanConfig;
pub use join::JoinConfig;
pub use llm::LlmConfig;
pub use memory::MemoryConfig;
pub use router::{ROUTE_EVENT, RouteTaken};
pub use router::{RouteChoice, RouterConfig};
pub use script::ScriptConfig;
pub use set::{Assignment, SetConfig};
pub use start::StartConfig;
pub use subgraph::{MAX_DEPTH, SubgraphConfig};
pub use template::rename_in_template;
pub use tools::ToolsConfig;
pub use wait::WaitConfig;

use serde_json::Value;

use crate::node::{BuildContext, Built, ConfigIssue, NodeInput};

impl BuiltinKind {
    /// Checks the config and builds the runtime.
    pub fn build(self, config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
        match self {
            BuiltinKind::Start => start::build(config, cx),
            BuiltinKind::End => end::build(config),
            BuiltinKind::Set => set::build(config, cx),
            BuiltinKind::Condition => condition::build(config),
            BuiltinKind::Join => join::build(config),
            BuiltinKind::FanOut => fan_out::build(config, cx),
            BuiltinKind::Ask => ask::build(config, cx),
            BuiltinKind::Wait => wait::build(config),
            BuiltinKind::Llm => llm::build(config, cx),
            BuiltinKind::Tools => tools::build(config, cx),
            BuiltinKind::Router => router::build(config, cx),
            BuiltinKind::Agent => agent::build(config, cx),
            BuiltinKind::Memory => memory::build(config, cx),
            BuiltinKind::Subgraph => subgraph::build(config, cx),
            BuiltinKind::Human => human::build(config, cx),
            BuiltinKind::Script => script::build(config, cx),
        }
    }

    /// The JSON Schema of the kind's config, for the editor's inspector.
    pub fn config_schema(self) -> Value {
        let schema = match self {
            BuiltinKind::Start => schemars::schema_for!(StartConfig),
            BuiltinKind::End => schemars::schema_for!(EndConfig),
            BuiltinKind::Set => schemars::schema_for!(SetConfig),
            BuiltinKind::Condition => schemars::schema_for!(ConditionConfig),
            BuiltinKind::Join => schemars::schema_for!(JoinConfig),
            BuiltinKind::FanOut => schemars::schema_for!(FanOutConfig),
            BuiltinKind::Ask => schemars::schema_for!(AskConfig),
            BuiltinKind::Wait => schemars::schema_for!(WaitConfig),
            BuiltinKind::Llm => schemars::schema_for!(LlmConfig),
            BuiltinKind::Tools => schemars::schema_for!(ToolsConfig),
            BuiltinKind::Router => schemars::schema_for!(RouterConfig),
            BuiltinKind::Agent => schemars::schema_for!(AgentConfig),
            BuiltinKind::Memory => schemars::schema_for!(MemoryConfig),
            BuiltinKind::Subgraph => schemars::schema_for!(SubgraphConfig),
            BuiltinKind::Human => schemars::schema_for!(HumanConfig),
            BuiltinKind::Script => schemars::schema_for!(ScriptConfig),
        };
        serde_json::to_value(schema).unwrap_or(Value::Null)
    }
}

/// The channel a model node reads and writes its conversation in, unless
/// its config names another (every kind that reads a conversation).
fn messages_channel() -> String {
    "messages".into()
}

/// Names an expression inside a node sees: the state's channels, and
/// `item`, the fanned-out item, when the node was started by a fan-out.
pub(crate) fn scope<'a>(input: &'a NodeInput<'a>) -> impl Fn(&str) -> Option<Value> + 'a {
    move |name: &str| match (name, input.arg) {
        ("item", Some(item)) => Some(item.clone()),
        _ => input.state.get(name).cloned(),
    }
}
