//! Embedding the saved graphs a run's `subgraph` nodes and agents'
//! sub-agents name by `graph_id`, before the run compiles. A graph is untrusted content, so this is where
//! a run could reach further than its starter may: each saved graph is
//! loaded only through the access check for the user who starts the run
//! (at least a viewer of it), a graph that includes itself is refused, and
//! the whole run after embedding stays within a budget of nodes and bytes
//! (six graphs each embedding the next five times would otherwise expand
//! to thousands of copies from a few hundred bytes).
//!
//! Which version of each saved subgraph is embedded follows the run
//! ([`Versions`]): the newest (a draft) when run from the editor, the
//! published one when the parent runs its published version (keys,
//! webhooks, schedules, widgets), so a draft edit of a subgraph never
//! changes production; the versions are pinned in the run's record.

use std::collections::HashMap;

use heddle_store::access::{Allowed, require};
use heddle_store::db::Db;
use heddle_store::graphs;
use heddle_store::runs::EmbeddedGraph;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::error::AppError;
use heddle_wire::graphs::GraphId;
use serde_json::Value;

/// The most nodes a run may have with every saved subgraph embedded.
pub const MAX_NODES: usize = 2_000;
/// The most bytes a run's graph may have with every saved subgraph
/// embedded (4 MiB).
pub const MAX_BYTES: usize = 4 << 20;
/// How deep saved subgraphs may nest.
pub const MAX_DEPTH: usize = 8;

/// Which version of each saved subgraph a run embeds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Versions {
    /// Each one's newest: a run from the editor, of what is on screen.
    #[default]
    Newest,
    /// Each one's published version: a run of the parent's published
    /// version. A subgraph with none published stops the run from starting.
    Published,
    /// The versions a queued run was recorded with (the newest for those a
    /// record from before pinning does not name).
    Pinned(HashMap<GraphId, i64>),
}

impl Versions {
    /// The versions a queued run was recorded with.
    pub fn pinned(embeds: &[EmbeddedGraph]) -> Versions {
        Versions::Pinned(
            embeds
                .iter()
                .filter_map(|embed| Some((embed.graph.clone(), embed.version?)))
                .collect(),
        )
    }
}

/// A run's graph with its saved subgraphs embedded.
#[derive(Debug)]
pub struct Embedded {
    /// The document to compile.
    pub document: Value,
    /// Every saved graph it embeds (each once) and its version: recorded
    /// with the run, to run the same versions and to check the starter's
    /// access again when the run starts later (queued, recovered).
    pub graphs: Vec<EmbeddedGraph>,
}

/// Embeds, for `starter`, the saved subgraphs of `document` (the graph
/// `root`'s stored JSON), in the versions `versions` says.
pub async fn embed(
    db: &Db,
    starter: &User,
    root: &GraphId,
    document: &str,
    versions: &Versions,
) -> Result<Embedded, AppError> {
    let mut document: Value =
        serde_json::from_str(document).map_err(|error| AppError::InvalidGraph {
            message: error.to_string(),
            problems: Vec::new(),
        })?;
    let mut walk = Walk {
        db,
        starter,
        versions,
        loaded: HashMap::new(),
        order: Vec::new(),
        nodes: node_count(&document),
        bytes: document.to_string().len(),
    };
    let mut stack = vec![root.to_string()];
    walk.embed_in(&mut document, &mut stack).await?;
    Ok(Embedded {
        document,
        graphs: walk.order,
    })
}

/// Checks again that `starter` may still see every graph a run embeds
/// (and edit `root`, which it runs): the run starts only if so.
pub async fn recheck(
    db: &Db,
    starter: &User,
    root: &str,
    embedded: &[EmbeddedGraph],
) -> Result<(), AppError> {
    require(db, Some(starter), root, Role::Editor).await?;
    for embed in embedded {
        let graph = embed.graph.as_str();
        require(db, Some(starter), graph, Role::Viewer)
            .await
            .map_err(|_| unreachable_graph("a subgraph", graph))?;
    }
    Ok(())
}

struct Walk<'a> {
    db: &'a Db,
    starter: &'a User,
    versions: &'a Versions,
    /// Each saved graph once, as loaded (not yet embedded).
    loaded: HashMap<String, Value>,
    order: Vec<EmbeddedGraph>,
    nodes: usize,
    bytes: usize,
}

impl Walk<'_> {
    fn embed_in<'s>(
        &'s mut self,
        document: &'s mut Value,
        stack: &'s mut Vec<String>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), AppError>> + Send + 's>> {
        Box::pin(async move {
            let Some(nodes) = document.get_mut("nodes").and_then(Value::as_array_mut) else {
                return Ok(());
            };
            for node in nodes {
                let node_id = node["id"].as_str().unwrap_or_default().to_string();
                for (what, slot) in saved_graph_slots(node, &node_id) {
                    let Some(id) = slot["graph_id"].as_str().map(str::to_string) else {
                        continue;
                    };
                    if stack.contains(&id) {
                        return Err(AppError::InvalidInput(format!(
                            "{what} names graph `{id}`, which includes the graph it is in: a \
                             graph may not include itself"
                        )));
                    }
                    if stack.len() > MAX_DEPTH {
                        return Err(AppError::InvalidInput(format!(
                            "saved subgraphs nest more than {MAX_DEPTH} deep at {what}"
                        )));
                    }
                    let mut child = self.load(&what, &id).await?;
                    self.nodes += node_count(&child);
                    self.bytes += child.to_string().len();
                    if self.nodes > MAX_NODES || self.bytes > MAX_BYTES {
                        return Err(AppError::TooLarge(format!(
                            "with its saved subgraphs embedded the run would have {} nodes and \
                             {} bytes (at {what}); the limit is {MAX_NODES} nodes and \
                             {MAX_BYTES} bytes",
                            self.nodes, self.bytes
                        )));
                    }
                    stack.push(id);
                    self.embed_in(&mut child, stack).await?;
                    stack.pop();
                    slot["graph"] = child;
                }
            }
            Ok(())
        })
    }

    /// A saved graph's document, loaded once, through the access check;
    /// `what` names the place that asks for it in errors.
    async fn load(&mut self, what: &str, id: &str) -> Result<Value, AppError> {
        if let Some(document) = self.loaded.get(id) {
            return Ok(document.clone());
        }
        // Missing, hidden and malformed ids answer alike: nothing about
        // graphs the starter cannot see is revealed.
        let allowed: Allowed = require(self.db, Some(self.starter), id, Role::Viewer)
            .await
            .map_err(|error| match error {
                AppError::NotFound { .. } | AppError::Gone(_) | AppError::Forbidden(_) => {
                    unreachable_graph(what, id)
                }
                other => other,
            })?;
        let pinned = match self.versions {
            Versions::Newest => None,
            Versions::Published => Some(
                heddle_store::publishing::publication(self.db, &allowed)
                    .await?
                    .ok_or_else(|| {
                        AppError::InvalidInput(format!(
                            "{what} names graph `{id}`, which has no \
                             published version: a published graph runs only published \
                             subgraphs (so a draft never reaches production); publish it"
                        ))
                    })?
                    .version,
            ),
            Versions::Pinned(versions) => versions.get(allowed.graph()).copied(),
        };
        let (version, text) = match pinned {
            Some(version) => (version, graphs::version(self.db, &allowed, version).await?),
            None => {
                let detail = graphs::get(self.db, &allowed).await?;
                (detail.version, detail.document)
            }
        };
        let document: Value = serde_json::from_str(&text).map_err(|error| {
            tracing::error!(graph = id, %error, "a stored graph does not read back");
            AppError::Internal
        })?;
        self.loaded.insert(id.to_string(), document.clone());
        self.order.push(EmbeddedGraph {
            graph: allowed.graph().clone(),
            version: Some(version),
        });
        Ok(document)
    }
}

fn unreachable_graph(what: &str, id: &str) -> AppError {
    AppError::InvalidInput(format!(
        "{what} names graph `{id}`, which does not exist or which you cannot open"
    ))
}

/// The places in `node` that may name a saved graph and do not embed one
/// yet (a `subgraph` node's config, each of an agent's sub-agents), each
/// with how errors name it.
fn saved_graph_slots<'n>(node: &'n mut Value, node_id: &str) -> Vec<(String, &'n mut Value)> {
    let kind = node["kind"].as_str().unwrap_or_default().to_string();
    // `get_mut`, never `node["config"]` as a place: indexing a value that
    // is not an object to write into it panics, and a graph is untrusted.
    let Some(config) = node.get_mut("config") else {
        return Vec::new();
    };
    let mut slots = Vec::new();
    match kind.as_str() {
        "subgraph" => slots.push((format!("subgraph node `{node_id}`"), config)),
        "agent" => {
            if let Some(subs) = config.get_mut("sub_agents").and_then(Value::as_array_mut) {
                for sub in subs {
                    let name = sub["name"].as_str().unwrap_or_default().to_string();
                    slots.push((format!("sub-agent `{name}` of agent node `{node_id}`"), sub));
                }
            }
        }
        _ => {}
    }
    slots.retain(|(_, slot)| slot["graph"].is_null());
    slots
}

fn node_count(document: &Value) -> usize {
    document
        .get("nodes")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}
