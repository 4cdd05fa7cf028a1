//! The built-in kinds by name: the closed enum, and what is known of each
//! without building one (its name, summary, palette group, version). The
//! registry and validation read this; building a node is `kinds`' own
//! [`BuiltinKind::build`].

use serde_json::Value;

crate::named_enum! {
    /// The palette's groups, in the order a new user looks for them; every
    /// kind is in one ([`BuiltinKind::group`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub enum KindGroup {
        Models = "Models",
        Tools = "Tools",
        People = "People",
        Flow = "Flow",
        State = "State",
    }
}

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
    pub fn group(self) -> KindGroup {
        match self {
            BuiltinKind::Start
            | BuiltinKind::End
            | BuiltinKind::Condition
            | BuiltinKind::Join
            | BuiltinKind::FanOut
            | BuiltinKind::Wait => KindGroup::Flow,
            BuiltinKind::Llm | BuiltinKind::Router | BuiltinKind::Agent | BuiltinKind::Memory => {
                KindGroup::Models
            }
            BuiltinKind::Tools | BuiltinKind::Subgraph => KindGroup::Tools,
            BuiltinKind::Ask | BuiltinKind::Human => KindGroup::People,
            BuiltinKind::Set | BuiltinKind::Script => KindGroup::State,
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
}
