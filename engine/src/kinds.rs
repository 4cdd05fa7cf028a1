//! The built-in node kinds, one file each, listed in one closed enum so the
//! compiler makes every `match` handle a new kind.
//!
//! The model, tool, agent, router, memory, human, script and subgraph kinds
//! come later and build on the same [`crate::node::Node`] trait.

mod agent;
mod ask;
mod condition;
mod end;
mod fan_out;
mod hooks;
mod human;
mod join;
mod llm;
mod memory;
mod router;
mod script;
mod set;
mod start;
mod subgraph;
mod template;
mod tools;
mod wait;

pub use agent::{AgentConfig, DONE_ROUTE, Handoff};
pub use ask::AskConfig;
pub use condition::{Branch, ConditionConfig};
pub use end::EndConfig;
pub use fan_out::FanOutConfig;
pub use hooks::{HookCode, ModelHooks};
pub use human::HumanConfig;
pub use join::JoinConfig;
pub use llm::LlmConfig;
pub use memory::MemoryConfig;
pub use router::{RouteChoice, RouterConfig};
pub use script::ScriptConfig;
pub use set::{Assignment, SetConfig};
pub use start::StartConfig;
pub use subgraph::SubgraphConfig;
pub use template::rename_in_template;
pub use tools::ToolsConfig;
pub use wait::WaitConfig;

use serde_json::Value;

use crate::node::{BuildContext, Built, ConfigIssue, NodeInput};

/// The kinds every graph can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinKind {
    /// Where a run begins; declares the input channels.
    Start,
    /// Where a branch ends.
    End,
    /// Writes values, expressions or templates into channels.
    Set,
    /// Chooses a route by the first condition that holds.
    Condition,
    /// Waits for every node with an edge into it, then continues.
    Join,
    /// Starts one instance of a node per item of a list, all in parallel.
    FanOut,
    /// Pauses the run for a person's answer.
    Ask,
    /// Waits a while before the branch goes on.
    Wait,
    /// One call to a chat model.
    Llm,
    /// Runs the tool calls the model asked for.
    Tools,
    /// The model picks a route.
    Router,
    /// The ReAct loop: model, tools, model, ... in one node.
    Agent,
    /// Trims (and optionally summarizes) a conversation.
    Memory,
    /// Runs another graph as one node.
    Subgraph,
    /// A person approves (or edits, or rejects) tool calls.
    Human,
    /// A sandboxed Rhai script transforms the state.
    Script,
}

impl BuiltinKind {
    /// Every built-in kind.
    pub const ALL: [BuiltinKind; 16] = [
        BuiltinKind::Start,
        BuiltinKind::End,
        BuiltinKind::Set,
        BuiltinKind::Condition,
        BuiltinKind::Join,
        BuiltinKind::FanOut,
        BuiltinKind::Ask,
        BuiltinKind::Wait,
        BuiltinKind::Llm,
        BuiltinKind::Tools,
        BuiltinKind::Router,
        BuiltinKind::Agent,
        BuiltinKind::Memory,
        BuiltinKind::Subgraph,
        BuiltinKind::Human,
        BuiltinKind::Script,
    ];

    /// The kind's `kind` string.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinKind::Start => "start",
            BuiltinKind::End => "end",
            BuiltinKind::Set => "set",
            BuiltinKind::Condition => "condition",
            BuiltinKind::Join => "join",
            BuiltinKind::FanOut => "fan_out",
            BuiltinKind::Ask => "ask",
            BuiltinKind::Wait => "wait",
            BuiltinKind::Llm => "llm",
            BuiltinKind::Tools => "tools",
            BuiltinKind::Router => "router",
            BuiltinKind::Agent => "agent",
            BuiltinKind::Memory => "memory",
            BuiltinKind::Subgraph => "subgraph",
            BuiltinKind::Human => "human",
            BuiltinKind::Script => "script",
        }
    }

    /// What the kind does, in one line (the editor's palette and docs).
    pub fn summary(self) -> &'static str {
        match self {
            BuiltinKind::Start => "Where a run begins; declares the input channels.",
            BuiltinKind::End => "Where a branch ends.",
            BuiltinKind::Set => "Writes values, expressions or templates into channels.",
            BuiltinKind::Condition => "Chooses a route by the first condition that holds.",
            BuiltinKind::Join => "Waits for every node with an edge into it, then continues.",
            BuiltinKind::FanOut => "Starts one instance of a node per item of a list, in parallel.",
            BuiltinKind::Ask => "Pauses the run for a person's answer.",
            BuiltinKind::Wait => "Waits a while before the branch goes on.",
            BuiltinKind::Llm => "One call to a chat model.",
            BuiltinKind::Tools => "Runs the tool calls the model asked for.",
            BuiltinKind::Router => "The model picks a route.",
            BuiltinKind::Agent => "The ReAct loop: model, tools, model, ... in one node.",
            BuiltinKind::Memory => "Trims (and optionally summarizes) a conversation.",
            BuiltinKind::Subgraph => "Runs another graph as one node.",
            BuiltinKind::Human => "A person approves, edits or rejects tool calls.",
            BuiltinKind::Script => "A sandboxed Rhai script transforms the state.",
        }
    }

    /// The palette group the kind is listed under.
    pub fn group(self) -> &'static str {
        match self {
            BuiltinKind::Start
            | BuiltinKind::End
            | BuiltinKind::Condition
            | BuiltinKind::Join
            | BuiltinKind::FanOut
            | BuiltinKind::Wait => "Flow",
            BuiltinKind::Llm | BuiltinKind::Router | BuiltinKind::Agent | BuiltinKind::Memory => {
                "Models"
            }
            BuiltinKind::Tools | BuiltinKind::Subgraph => "Tools",
            BuiltinKind::Ask | BuiltinKind::Human => "People",
            BuiltinKind::Set | BuiltinKind::Script => "State",
        }
    }

    /// The kind named `name`, if it is built in.
    pub fn from_name(name: &str) -> Option<Self> {
        BuiltinKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// The current version of the kind's config.
    pub fn version(self) -> u32 {
        match self {
            BuiltinKind::Start
            | BuiltinKind::End
            | BuiltinKind::Set
            | BuiltinKind::Condition
            | BuiltinKind::Join
            | BuiltinKind::FanOut
            | BuiltinKind::Ask
            | BuiltinKind::Wait
            | BuiltinKind::Llm
            | BuiltinKind::Tools
            | BuiltinKind::Router
            | BuiltinKind::Agent
            | BuiltinKind::Memory
            | BuiltinKind::Subgraph
            | BuiltinKind::Human
            | BuiltinKind::Script => 1,
        }
    }

    /// Upgrades a config from version `from` by one version. No built-in
    /// kind has had a second version yet.
    pub fn migrate(self, from: u32, _config: Value) -> Result<Value, String> {
        Err(format!(
            "no migration from version {from} of kind `{}`",
            self.name()
        ))
    }

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
