//! Where a `subgraph` node's child graph comes from, or an agent's
//! sub-agent's, and the way to it, so nested work is one click from its
//! node: a saved graph is picked from the caller's graphs by name and
//! opened from here; a graph embedded in the node is made a saved graph of
//! its own in one click (then opened and edited like any other, and run
//! from this node by its id).
//!
//! Access is the server's: the list holds only graphs the caller may see,
//! a run embeds a saved graph only for a user who may see it
//! (`server/src/runs/embed.rs`), and one the caller cannot see shows as
//! such, by id.

use heddle_engine::NodeId;
use heddle_engine::format::NodeSpec;
use leptos::prelude::*;
use serde_json::Value;

use super::state::Editor;
use crate::graphs::{GraphId, GraphSummary};

/// The field naming a saved graph.
const GRAPH_ID: &str = "graph_id";
/// The field holding an embedded graph.
const EMBEDDED: &str = "graph";

/// Where in a node's config a child graph is named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The config itself (a `subgraph` node).
    Config,
    /// An agent's `sub_agents[i]`.
    SubAgent(usize),
}

impl Slot {
    fn of(self, config: &Value) -> Option<&Value> {
        match self {
            Slot::Config => Some(config),
            Slot::SubAgent(i) => config.get("sub_agents")?.get(i),
        }
    }

    fn of_mut(self, config: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
        match self {
            Slot::Config => config.as_object_mut(),
            Slot::SubAgent(i) => config.get_mut("sub_agents")?.get_mut(i)?.as_object_mut(),
        }
    }

    /// The saved graph it names, if any.
    pub fn saved(self, config: &Value) -> Option<&str> {
        self.of(config)?
            .get(GRAPH_ID)
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
    }
}

/// An agent's sub-agents, each with where its graph comes from.
#[component]
pub fn SubAgentSources(editor: Editor, spec: RwSignal<NodeSpec>) -> impl IntoView {
    let names = Memo::new(move |_| {
        spec.with(|spec| {
            spec.config
                .get("sub_agents")
                .and_then(Value::as_array)
                .map(|subs| {
                    subs.iter()
                        .map(|sub| sub["name"].as_str().unwrap_or_default().to_string())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    move || {
        let names = names.get();
        if names.is_empty() {
            return None;
        }
        let rows = names
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let name = if name.is_empty() {
                    format!("Sub-agent {}", i + 1)
                } else {
                    name
                };
                let slot = Slot::SubAgent(i);
                view! {
                    <div class="sub-agent-source" data-testid="sub-agent-source">
                        <span class="sub-agent-name mono">{name}</span>
                        {SubgraphSource(SubgraphSourceProps { editor, spec, slot })}
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <section class="sub-agent-sources" aria-label="Where the sub-agents' graphs come from">
                <h3 class="field-label">"Sub-agents' graphs"</h3>
                {rows}
            </section>
        })
    }
}

#[component]
pub fn SubgraphSource(
    editor: Editor,
    spec: RwSignal<NodeSpec>,
    #[prop(default = Slot::Config)] slot: Slot,
) -> impl IntoView {
    let node = spec.with_untracked(|spec| spec.id.clone());
    let whose = match slot {
        Slot::Config => "this node",
        Slot::SubAgent(_) => "this sub-agent",
    };
    let graphs = RwSignal::new(None::<Result<Vec<GraphSummary>, String>>);
    let error = RwSignal::new(None::<String>);
    // Read once the form is in the browser (never while drawing on the
    // server).
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            let listed = crate::graphs::list_graphs()
                .await
                .map_err(|error| error.to_string());
            let _ = graphs.try_set(Some(listed));
        });
    });
    let saved = Memo::new(move |_| spec.with(|spec| slot.saved(&spec.config).map(str::to_string)));
    let embedded = Memo::new(move |_| {
        spec.with(|spec| {
            slot.of(&spec.config)?
                .get(EMBEDDED)
                .filter(|graph| graph.is_object())
                .map(|graph| graph["nodes"].as_array().map_or(0, Vec::len))
        })
    });
    let name_of = move |id: &str| {
        graphs.with(|graphs| {
            graphs
                .as_ref()
                .and_then(|listed| listed.as_ref().ok())
                .and_then(|list| list.iter().find(|graph| graph.id.as_str() == id))
                .map(|graph| graph.name.clone())
        })
    };
    let pick = {
        let node = node.clone();
        move |event: leptos::ev::Event| {
            let picked = event_target_value(&event);
            set_saved(editor, &node, slot, (!picked.is_empty()).then_some(picked));
        }
    };
    let make_saved = {
        let node = node.clone();
        move |_| {
            let Some(graph) = spec.with_untracked(|spec| {
                slot.of(&spec.config)
                    .and_then(|at| at.get(EMBEDDED))
                    .cloned()
            }) else {
                return;
            };
            let node = node.clone();
            leptos::task::spawn_local(async move {
                match crate::graphs::import_graph(graph).await {
                    Ok(saved) => {
                        // The form may have closed meanwhile.
                        let _ = error.try_set(None);
                        set_saved(editor, &node, slot, Some(saved.id.as_str().to_string()));
                        // Listed, so it is named.
                        if let Ok(list) = crate::graphs::list_graphs().await {
                            let _ = graphs.try_set(Some(Ok(list)));
                        }
                    }
                    Err(failure) => {
                        let _ = error.try_set(Some(failure.to_string()));
                    }
                }
            });
        }
    };
    let read_only = !editor.can_edit;
    view! {
        <div class="subgraph-source" data-testid="subgraph-source">
            {move || match (saved.get(), embedded.get()) {
                (Some(id), _) => {
                    let href = GraphId::parse(&id).map(|graph| graph.href());
                    let name = name_of(&id);
                    let shown = name.clone().unwrap_or_else(|| format!("graph {id}"));
                    view! {
                        <p class="field-hint">
                            "Runs the saved graph "
                            {match href {
                                Some(href) => view! {
                                    <a href=href data-testid="open-subgraph" title="Open it (it runs its newest version from here, its published one in production)">{shown}</a>
                                }.into_any(),
                                None => view! { <code>{shown}</code> }.into_any(),
                            }}
                            "."
                            {(graphs.with(|g| g.as_ref().is_some_and(Result::is_ok)) && name.is_none())
                                .then_some(" You cannot open it: it is not yours and not shared with you.")}
                        </p>
                    }.into_any()
                }
                (None, Some(nodes)) => view! {
                    <p class="field-hint">
                        {format!("Runs the graph embedded in {whose} ({nodes} nodes). ")}
                        {(!read_only).then(|| view! {
                            <button type="button" class="button button-small" data-testid="make-subgraph-saved" on:click=make_saved.clone()>
                                "Make it a saved graph"
                            </button>
                        })}
                    </p>
                }.into_any(),
                (None, None) => view! {
                    <p class="field-hint">{format!("Pick the saved graph {whose} runs.")}</p>
                }.into_any(),
            }}
            {(!read_only).then(|| view! {
                <label class="field">
                    <span class="field-label">"Saved graph"</span>
                    <select data-testid="subgraph-pick" aria-label=format!("The saved graph {whose} runs") on:change=pick.clone()>
                        <option value="" selected=move || saved.get().is_none()>
                            {move || if embedded.get().is_some() { "The embedded graph" } else { "None" }}
                        </option>
                        {move || graphs.with(|graphs| match graphs {
                            Some(Ok(list)) => list
                                .iter()
                                .map(|graph| {
                                    let id = graph.id.as_str().to_string();
                                    let chosen = id.clone();
                                    let label = format!("{} ({} nodes)", graph.name, graph.node_count);
                                    view! {
                                        <option value=id selected=move || saved.get().as_deref() == Some(chosen.as_str())>{label}</option>
                                    }
                                })
                                .collect_view()
                                .into_any(),
                            _ => ().into_any(),
                        })}
                    </select>
                </label>
            })}
            {move || graphs.with(|graphs| match graphs {
                Some(Err(why)) => Some(format!("Your graphs cannot be listed: {why}")),
                _ => None,
            }).or_else(|| error.get()).map(|why| view! { <p class="inline-error" role="alert">{why}</p> })}
        </div>
    }
}

/// Points `slot` of node `id` at saved graph `graph_id` (dropping an
/// embedded graph: it is the saved one now), or at none.
fn set_saved(editor: Editor, id: &NodeId, slot: Slot, graph_id: Option<String>) {
    editor.change(|document| {
        let Some(node) = document.nodes.iter_mut().find(|node| &node.id == id) else {
            return;
        };
        let Some(config) = slot.of_mut(&mut node.config) else {
            return;
        };
        match graph_id {
            Some(graph_id) => {
                config.remove(EMBEDDED);
                config.insert(GRAPH_ID.into(), Value::String(graph_id));
            }
            None => {
                config.remove(GRAPH_ID);
            }
        }
    });
}
