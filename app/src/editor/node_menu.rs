//! A node's context menu (right-click): duplicate or delete it (with the
//! rest of the selection, when it is in it), set or clear its breakpoints,
//! "run to here" (the Run tab, set to pause before the node), and for a
//! subgraph naming a saved graph, open that graph. Breakpoints
//! are part of the graph, saved and undone like any edit; "run to here" is
//! one run's, and the page that hosts the editor says what it opens.

use heddle_engine::NodeId;
use leptos::prelude::*;

use super::state::Editor;

/// The menu open on a node, at a place on the canvas.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMenuAt {
    pub node: NodeId,
    pub x: f64,
    pub y: f64,
}

#[component]
pub fn NodeMenu(
    editor: Editor,
    open: RwSignal<Option<NodeMenuAt>>,
    run_to: Option<Callback<NodeId>>,
    /// What Ctrl+D and Delete do to the selection (the keys' own, passed
    /// in: the keys open this menu, so it does not reach back for them).
    duplicate: fn(Editor),
    delete: fn(Editor),
) -> impl IntoView {
    let close = move || open.set(None);
    move || {
        let at = open.get()?;
        let spec = editor.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .find(|node| node.id.get_value() == at.node)
                .map(|node| node.spec)
        })?;
        let node = at.node.clone();
        let toggle = move |after: bool| {
            let node = node.clone();
            move |_| {
                editor.change(|document| {
                    if let Some(spec) = document.nodes.iter_mut().find(|spec| spec.id == node) {
                        if after {
                            spec.interrupt_after = !spec.interrupt_after;
                        } else {
                            spec.interrupt_before = !spec.interrupt_before;
                        }
                    }
                });
                close();
            }
        };
        // A subgraph's saved graph opens from here, and each saved graph
        // an agent's sub-agents run.
        let nested: Vec<(String, crate::graphs::GraphId)> = spec.with_untracked(|spec| {
            use crate::editor::subgraph_source::Slot;
            use heddle_engine::kinds::BuiltinKind;
            let saved = |slot: Slot| {
                slot.saved(&spec.config)
                    .and_then(crate::graphs::GraphId::parse)
            };
            if spec.kind == BuiltinKind::Subgraph.name() {
                return saved(Slot::Config)
                    .map(|graph| ("Open its saved graph".to_string(), graph))
                    .into_iter()
                    .collect();
            }
            let subs = spec
                .config
                .get("sub_agents")
                .and_then(|subs| subs.as_array());
            // A menu, not a list: the first eight.
            subs.into_iter()
                .flatten()
                .enumerate()
                .take(8)
                .filter_map(|(i, sub)| {
                    let name = sub["name"].as_str().unwrap_or("sub-agent");
                    saved(Slot::SubAgent(i)).map(|graph| (format!("Open sub-agent {name}"), graph))
                })
                .collect()
        });
        // On the node pressed: with the selection it is in, else alone.
        let take = {
            let node = at.node.clone();
            move |act: fn(Editor)| {
                let node = node.clone();
                move |_| {
                    if !editor
                        .selected
                        .with_untracked(|selected| selected.contains(&node))
                    {
                        editor
                            .selected
                            .set(std::collections::BTreeSet::from([node.clone()]));
                        editor.selected_edge.set(None);
                    }
                    act(editor);
                    close();
                }
            }
        };
        let before = spec.with_untracked(|spec| spec.interrupt_before);
        let after = spec.with_untracked(|spec| spec.interrupt_after);
        let target = at.node.clone();
        Some(view! {
            <div class="node-menu" role="menu" data-testid="node-menu"
                style:left=format!("{}px", at.x) style:top=format!("{}px", at.y)
                on:pointerdown=|event| event.stop_propagation()>
                {editor.can_edit.then(|| view! {
                    <button type="button" role="menuitem" aria-keyshortcuts="Control+D"
                        on:click=take(duplicate)>"Duplicate"</button>
                    <button type="button" role="menuitem" aria-keyshortcuts="Delete"
                        on:click=take(delete)>"Delete"</button>
                    <button type="button" role="menuitemcheckbox" aria-checked=before.to_string() on:click=toggle(false)>
                        {if before { "✓ Pause before this node" } else { "Pause before this node" }}
                    </button>
                    <button type="button" role="menuitemcheckbox" aria-checked=after.to_string() on:click=toggle(true)>
                        {if after { "✓ Pause after this node" } else { "Pause after this node" }}
                    </button>
                })}
                {run_to.map(|run_to| view! {
                    <button type="button" role="menuitem" on:click=move |_| {
                        run_to.run(target.clone());
                        close();
                    }>"Run to here…"</button>
                })}
                {nested.into_iter().map(|(label, graph)| view! {
                    <a role="menuitem" href=graph.href() data-testid="node-menu-open-subgraph">{label}</a>
                }).collect_view()}
                <button type="button" role="menuitem" class="node-menu-close" on:click=move |_| close()>"Close"</button>
            </div>
        })
    }
}
