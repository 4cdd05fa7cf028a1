//! Node kinds: how a node's config becomes its runtime. The built-in kinds
//! are a closed enum ([`crate::kinds::BuiltinKind`]); a library user adds
//! their own by implementing [`NodeKind`] and registering it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Node;
use crate::credentials::{Credentials, KeyedModels};
use crate::format::StateSchema;
use crate::ids::NodeId;
use crate::model::{ChatModel, OfflineModel, SharedModel};
use crate::tools::{Tool, Toolbox};

/// A problem in a node's config, located inside the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    /// Path inside the config, e.g. `routes[1].when`; empty for the whole.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The edit that removes it, when one is known (boxed: issues travel
    /// in `Result`s, and most have none).
    pub fix: Option<Box<crate::validate::Fix>>,
}

impl ConfigIssue {
    /// An issue at `path` in the config.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigIssue {
            path: path.into(),
            message: message.into(),
            fix: None,
        }
    }

    /// The issue, with the edit that removes it.
    pub fn with_fix(mut self, fix: crate::validate::Fix) -> Self {
        self.fix = Some(Box::new(fix));
        self
    }
}

/// What a kind is given to build a node.
pub struct BuildContext<'a> {
    /// The node being built.
    pub node: &'a NodeId,
    /// The graph's channels.
    pub state: &'a StateSchema,
    /// Every node id of the graph.
    pub nodes: &'a [NodeId],
    /// The kinds, models and tools available.
    pub registry: &'a Registry,
    /// Compiles a graph this node runs (a subgraph, a sub-agent) with the
    /// same registry.
    pub compile_child: &'a super::CompileChild<'a>,
}

impl BuildContext<'_> {
    /// The model a node names, or an issue at `path` saying which exist.
    /// With a `credential`, the model authenticates with that secret; when
    /// the registry has no credentials (validation only), any name passes.
    pub fn model(
        &self,
        path: &str,
        name: Option<&str>,
        credential: Option<&str>,
    ) -> Result<SharedModel, ConfigIssue> {
        if let (Some(credential), Some(credentials)) = (credential, &self.registry.credentials) {
            let secret = credentials.get(credential).ok_or_else(|| {
                let known: Vec<&str> = credentials.names().collect();
                ConfigIssue::new(
                    "credential",
                    format!(
                        "no secret named `{credential}` is bound (yours: {}); save one under \
                         that name, or bind the graph's name to one of yours",
                        if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })?;
            let factory = self.registry.keyed_models.as_ref().ok_or_else(|| {
                ConfigIssue::new("credential", "this runner has no models that take a key")
            })?;
            return factory
                .model(name, secret)
                .map(|model| self.registry.gated(model))
                .map_err(|message| ConfigIssue::new(path, message));
        }
        let model = self
            .registry
            .model(name)
            .map(|model| self.registry.gated(model));
        model.ok_or_else(|| {
            ConfigIssue::new(
                path,
                format!(
                    "no model `{}` is configured (known: {})",
                    name.unwrap_or_default(),
                    self.registry.model_names().join(", ")
                ),
            )
        })
    }

    /// A channel that must exist and hold messages.
    pub fn check_messages_channel(
        &self,
        path: impl Into<String>,
        channel: &str,
    ) -> Option<ConfigIssue> {
        let path = path.into();
        match self.state.channels.get(channel) {
            None => Some(
                ConfigIssue::new(
                    path,
                    format!("`{channel}` is not a channel of this graph's state"),
                )
                .with_fix(crate::validate::Fix::AddChannel {
                    channel: channel.to_string(),
                    ty: crate::format::ChannelType::Messages,
                }),
            ),
            Some(spec) if spec.ty != crate::format::ChannelType::Messages => Some(
                ConfigIssue::new(path, format!("`{channel}` is not a `messages` channel")),
            ),
            Some(_) => None,
        }
    }

    /// The type of the channel `channel`, if the graph has it.
    pub fn channel_type(&self, channel: &str) -> Option<crate::format::ChannelType> {
        self.state.channels.get(channel).map(|spec| spec.ty)
    }

    /// Whether the graph has a node with this id.
    pub fn has_node(&self, id: &NodeId) -> bool {
        self.nodes.contains(id)
    }

    /// An issue if `channel` is not one of the graph's channels.
    ///
    /// The issue's fix creates the channel with type `ty`, what the node
    /// writes there.
    pub fn check_channel(
        &self,
        path: impl Into<String>,
        channel: &str,
        ty: crate::format::ChannelType,
    ) -> Option<ConfigIssue> {
        (!self.state.channels.contains_key(channel)).then(|| {
            ConfigIssue::new(
                path,
                format!("`{channel}` is not a channel of this graph's state"),
            )
            .with_fix(crate::validate::Fix::AddChannel {
                channel: channel.to_string(),
                ty,
            })
        })
    }
}

/// A node's runtime and what the graph needs to know about it.
pub struct Built {
    /// The runtime.
    pub node: Arc<dyn Node>,
    /// The routes the node can choose; each needs an out-edge with that
    /// route label.
    pub routes: Vec<String>,
    /// Whether the node waits for every node with an edge into it before
    /// running (a fan-in barrier).
    pub join: bool,
    /// Whether a branch ends at this node (the `end` kind).
    pub terminal: bool,
    /// Nodes this node can start besides its out-edges (a fan-out's
    /// target), so reachability checks see them.
    pub sends_to: Vec<NodeId>,
    /// Whether the node may choose none of its routes and then fails the
    /// run (a router with no `otherwise`, whose model may name no route):
    /// validation warns, offering to make one route the fallback.
    pub may_choose_none: bool,
    /// Whether its routes are its only ways on (a router, a condition, a
    /// human approval): an edge from it that carries no route nor
    /// condition is taken whatever it picks, besides the picked route's,
    /// which validation warns of. An agent's is false: its edge without a
    /// route is its way on when it hands off to no one.
    pub picks_its_way: bool,
}

impl Built {
    /// A plain node: no routes, no barrier, not an end.
    pub fn plain(node: impl Node) -> Self {
        Built {
            node: Arc::new(node),
            routes: Vec::new(),
            join: false,
            terminal: false,
            sends_to: Vec::new(),
            may_choose_none: false,
            picks_its_way: false,
        }
    }
}

/// A kind of node a library user adds.
///
/// ```
/// use heddle_engine::node::{BuildContext, Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeKind, NodeOutput, Registry};
/// use serde_json::{Value, json};
///
/// struct Clock;
/// impl Node for Clock {
///     fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
///         Box::pin(async { Ok(NodeOutput::update("now", json!("tea time"))) })
///     }
/// }
///
/// struct ClockKind;
/// impl NodeKind for ClockKind {
///     fn name(&self) -> &str { "clock" }
///     fn build(&self, _config: &Value, _cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
///         Ok(Built::plain(Clock))
///     }
/// }
///
/// let mut registry = Registry::new();
/// registry.register(ClockKind).unwrap();
/// ```
pub trait NodeKind: Send + Sync + 'static {
    /// The `kind` string of nodes of this kind.
    fn name(&self) -> &str;

    /// The current version of this kind's config.
    fn version(&self) -> u32 {
        1
    }

    /// Upgrades a config written for `from` (older than [`NodeKind::version`])
    /// by one version.
    fn migrate(&self, from: u32, config: Value) -> Result<Value, String> {
        let _ = config;
        Err(format!(
            "no migration from version {from} of kind `{}`",
            self.name()
        ))
    }

    /// The JSON Schema of the config, for editors.
    fn config_schema(&self) -> Option<schemars::Schema> {
        None
    }

    /// Checks the config and builds the runtime.
    fn build(&self, config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>>;
}

/// The kinds a graph may use (the built-in ones and any registered), and
/// the models and tools its nodes may call.
#[derive(Clone)]
pub struct Registry {
    custom: BTreeMap<String, Arc<dyn NodeKind>>,
    default_model: SharedModel,
    models: BTreeMap<String, SharedModel>,
    tools: Toolbox,
    /// The secrets nodes may name; `None`: not known here (validation).
    credentials: Option<Credentials>,
    keyed_models: Option<Arc<dyn KeyedModels>>,
    files: FileAccess,
    saved_graphs: SavedGraphs,
    prices: Arc<crate::usage::PriceTable>,
    /// How deep and large the values of its runs may be.
    value_limits: crate::state::ValueLimits,
    /// The most any graph may ask for.
    ceilings: crate::ceilings::Ceilings,
    #[cfg(feature = "runtime")]
    scripts: Option<Arc<crate::run::WorkerPool>>,
}

/// What a `subgraph` naming a saved graph (`graph_id`) without the graph
/// embedded means here. Only the Heddle server can read a saved graph (for
/// the user who starts the run, `server/src/runs/embed.rs`), and it embeds
/// it before the run compiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SavedGraphs {
    /// Such a node is a problem: nothing here can read the graph (the
    /// command line, a library user).
    #[default]
    Unread,
    /// Such a node is fine: the graph is embedded when a run starts
    /// (validation in the app and on its server, which cannot check the
    /// child's channels until then).
    EmbeddedAtRun,
}

/// Whether graphs may name files (`subgraph.path`, `sub_agents[].path`)
/// that are read when they compile. A graph is untrusted content where it
/// is not the machine's own user's: the server refuses paths, the command
/// line and library users opt in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileAccess {
    /// Paths are a validation problem; nothing is read.
    #[default]
    Denied,
    /// Paths are read from the local file system.
    Allowed,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            custom: BTreeMap::new(),
            default_model: Arc::new(OfflineModel::new()),
            models: BTreeMap::new(),
            tools: Toolbox::builtin(),
            credentials: None,
            keyed_models: None,
            files: FileAccess::Denied,
            saved_graphs: SavedGraphs::Unread,
            prices: Arc::new(crate::usage::PriceTable::default()),
            value_limits: crate::state::ValueLimits::default(),
            ceilings: crate::ceilings::Ceilings::default(),
            #[cfg(feature = "runtime")]
            scripts: None,
        }
    }
}

/// Why a kind could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a node kind named `{0}` already exists")]
pub struct DuplicateKind(pub String);

impl Registry {
    /// The built-in kinds and tools, with the offline model as the default
    /// model.
    pub fn new() -> Self {
        Registry::default()
    }

    /// The model nodes use when they name none.
    pub fn with_default_model(mut self, model: impl ChatModel) -> Self {
        self.default_model = Arc::new(model);
        self
    }

    /// A model nodes can name (`"model": "name"`).
    pub fn with_model(mut self, name: impl Into<String>, model: impl ChatModel) -> Self {
        self.models.insert(name.into(), Arc::new(model));
        self
    }

    /// The secrets this registry's graphs may name (`"credential"`): a
    /// node naming one that is missing is a build error.
    pub fn with_credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// How a model is made from a node's model name and a secret.
    pub fn with_keyed_models(mut self, factory: impl KeyedModels) -> Self {
        self.keyed_models = Some(Arc::new(factory));
        self
    }

    /// Lets graphs name files to read when they compile (see
    /// [`FileAccess`]); for the command line and trusted library users.
    pub fn with_file_access(mut self, files: FileAccess) -> Self {
        self.files = files;
        self
    }

    /// Whether graphs may name files.
    pub fn file_access(&self) -> FileAccess {
        self.files
    }

    /// Says what a subgraph naming a saved graph means (see
    /// [`SavedGraphs`]).
    pub fn with_saved_graphs(mut self, saved: SavedGraphs) -> Self {
        self.saved_graphs = saved;
        self
    }

    /// What a subgraph naming a saved graph means here.
    pub fn saved_graphs(&self) -> SavedGraphs {
        self.saved_graphs
    }

    /// Runs `script` nodes on this pool of threads instead of the
    /// process-wide one ([`crate::run::WorkerPool::shared`]).
    #[cfg(feature = "runtime")]
    pub fn with_script_pool(mut self, pool: Arc<crate::run::WorkerPool>) -> Self {
        self.scripts = Some(pool);
        self
    }

    /// The threads `script` nodes run on.
    #[cfg(feature = "runtime")]
    pub fn script_pool(&self) -> Arc<crate::run::WorkerPool> {
        self.scripts
            .clone()
            .unwrap_or_else(crate::run::WorkerPool::shared)
    }

    /// Adds a tool nodes can bind.
    pub fn with_tool(mut self, tool: impl Tool) -> Self {
        self.tools.add(tool);
        self
    }

    /// How model calls are priced (the default table when not set).
    pub fn with_prices(mut self, prices: crate::usage::PriceTable) -> Self {
        self.prices = Arc::new(prices);
        self
    }

    /// The price table.
    pub fn prices(&self) -> Arc<crate::usage::PriceTable> {
        Arc::clone(&self.prices)
    }

    /// How deep and large the values of this registry's runs may be
    /// (inputs, node updates, script and tool results); the defaults when
    /// not set.
    pub fn with_value_limits(mut self, limits: crate::state::ValueLimits) -> Self {
        self.value_limits = limits;
        self
    }

    /// The limits on run values.
    pub fn value_limits(&self) -> crate::state::ValueLimits {
        self.value_limits
    }

    /// The most any graph compiled with this registry may ask for (see
    /// [`crate::ceilings`]).
    pub fn with_ceilings(mut self, ceilings: crate::ceilings::Ceilings) -> Self {
        self.ceilings = ceilings;
        self
    }

    /// The ceilings.
    pub fn ceilings(&self) -> &crate::ceilings::Ceilings {
        &self.ceilings
    }

    /// `model` as nodes get it: its calls wait their turn when the
    /// registry caps model calls in flight.
    fn gated(&self, model: SharedModel) -> SharedModel {
        #[cfg(feature = "runtime")]
        if let Some(gate) = &self.ceilings.model_calls {
            return gate.wrap(model);
        }
        model
    }

    /// Sets the server's policy for a tool (see [`crate::tools::ToolPolicy`]).
    pub fn with_tool_policy(
        mut self,
        name: impl Into<String>,
        policy: crate::tools::ToolPolicy,
    ) -> Self {
        self.tools.set_policy(name, policy);
        self
    }

    /// The model named `name` (`None`: the default; `"offline"`: the
    /// offline model unless one is registered under that name).
    pub fn model(&self, name: Option<&str>) -> Option<SharedModel> {
        match name {
            None | Some("") | Some("default") => Some(Arc::clone(&self.default_model)),
            Some(name) => self.models.get(name).cloned().or_else(|| {
                (name == "offline").then(|| Arc::new(OfflineModel::new()) as SharedModel)
            }),
        }
    }

    /// The model named `name` as a node's calls get it: waiting its turn
    /// when the registry caps model calls in flight (a judging scorer's
    /// calls take their turns too).
    pub fn gated_model(&self, name: Option<&str>) -> Option<SharedModel> {
        self.model(name).map(|model| self.gated(model))
    }

    /// The names of the models nodes can name.
    pub fn model_names(&self) -> Vec<String> {
        let mut names: Vec<String> = vec!["default".into(), "offline".into()];
        names.extend(self.models.keys().cloned());
        names.dedup();
        names
    }

    /// The same registry with every model and tool it hands out passed
    /// through `model` and `tool` (the default, the named ones, the
    /// offline one, those made with a node's credential, the toolbox's
    /// tools): how [`crate::recording`] sees every call.
    #[cfg(feature = "runtime")]
    pub(crate) fn map_calls(
        mut self,
        model: Arc<dyn Fn(SharedModel) -> SharedModel + Send + Sync>,
        tool: &dyn Fn(Arc<dyn crate::tools::Tool>) -> Arc<dyn crate::tools::Tool>,
    ) -> Self {
        self.default_model = model(Arc::clone(&self.default_model));
        if !self.models.contains_key("offline") {
            self.models
                .insert("offline".into(), Arc::new(OfflineModel::new()));
        }
        for entry in self.models.values_mut() {
            *entry = model(Arc::clone(entry));
        }
        self.keyed_models = self
            .keyed_models
            .take()
            .map(|inner| Arc::new(MappedKeyedModels { inner, model }) as Arc<dyn KeyedModels>);
        self.tools.map_tools(tool);
        self
    }

    /// The tools nodes can bind.
    pub fn tools(&self) -> &Toolbox {
        &self.tools
    }

    /// Adds a kind; its name must not be taken by a built-in or another kind.
    pub fn register(&mut self, kind: impl NodeKind) -> Result<(), DuplicateKind> {
        let name = kind.name().to_string();
        if crate::kinds::BuiltinKind::from_name(&name).is_some() || self.custom.contains_key(&name)
        {
            return Err(DuplicateKind(name));
        }
        self.custom.insert(name, Arc::new(kind));
        Ok(())
    }

    pub(crate) fn custom(&self, name: &str) -> Option<&Arc<dyn NodeKind>> {
        self.custom.get(name)
    }

    /// Every kind's name, built-in ones first.
    pub fn kind_names(&self) -> Vec<String> {
        crate::kinds::BuiltinKind::ALL
            .iter()
            .map(|kind| kind.name().to_string())
            .chain(self.custom.keys().cloned())
            .collect()
    }
}

/// Reads a config into its type, locating the first problem inside it.
pub fn parse_config<T: DeserializeOwned>(config: &Value) -> Result<T, Vec<ConfigIssue>> {
    serde_path_to_error::deserialize(config).map_err(|error| {
        let path = error.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = error.into_inner().to_string();
        // A field left out is a field to fill in: said so, and placed at
        // the field (the form shows it there), not at the whole config.
        if let Some(field) = missing_field(&message) {
            let at = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            return vec![ConfigIssue::new(
                at,
                format!("set `{field}`: it is required"),
            )];
        }
        vec![ConfigIssue::new(path, message)]
    })
}

/// The field serde says is missing (“missing field `routes`”), if that is
/// what it says.
fn missing_field(message: &str) -> Option<&str> {
    let field = message.strip_prefix("missing field `")?;
    let field = &field[..field.find('`')?];
    (!field.is_empty()).then_some(field)
}

/// Models made with a credential, each passed through a mapping
/// ([`Registry::map_calls`]).
#[cfg(feature = "runtime")]
struct MappedKeyedModels {
    inner: Arc<dyn KeyedModels>,
    model: Arc<dyn Fn(SharedModel) -> SharedModel + Send + Sync>,
}

#[cfg(feature = "runtime")]
impl KeyedModels for MappedKeyedModels {
    fn model(
        &self,
        name: Option<&str>,
        key: &crate::credentials::Secret,
    ) -> Result<SharedModel, String> {
        self.inner.model(name, key).map(|made| (self.model)(made))
    }
}
