//! A node's context menu (right-click): duplicate or delete it (with the
//! rest of the selection, when it is in it), group the selection it is in,
//! set or clear its breakpoints,
//! "run to here" (the Run tab, set to pause before the node), and for a
//! subgraph naming a saved graph, open that graph. Breakpoints
//! are part of the graph, saved and undone like any edit; "run to here" is
//! one run's, and the page that hosts the editor says what it opens. The
//! menu is moved up or left to stay whole inside the canvas and window.

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
        // The selection the node is in, grouped (Ctrl+G) from here too;
        // not when it is a group already (pressing a member selects it).
        let selected = editor.selected.with_untracked(|selected| {
            let a_group = editor.skeleton.with_untracked(|document| {
                document.groups.iter().any(|group| {
                    group.nodes.len() == selected.len()
                        && group.nodes.iter().all(|node| selected.contains(node))
                })
            });
            if selected.contains(&at.node) && !a_group {
                selected.len()
            } else {
                0
            }
        });
        let grouping = (editor.can_edit && selected >= 2).then(|| {
            view! {
                <button type="button" role="menuitem" aria-keyshortcuts="Control+G" on:click=move |_| {
                    super::groups::frame_selection(editor);
                    close();
                }>{format!("Group the {selected} selected")}</button>
            }
        });
        let menu = NodeRef::<leptos::html::Div>::new();
        Effect::new(move |_| {
            if let Some(menu) = menu.get() {
                keep_inside(&menu);
            }
        });
        let before = spec.with_untracked(|spec| spec.interrupt_before);
        let after = spec.with_untracked(|spec| spec.interrupt_after);
        // What each item acts on, said: the selection the node is in (of
        // two or more) for Duplicate and Delete, this node alone for its
        // pauses.
        let many = editor.selected.with_untracked(|selected| {
            (selected.contains(&at.node) && selected.len() >= 2).then_some(selected.len())
        });
        let (duplicate_text, delete_text) = match many {
            Some(count) => (
                format!("Duplicate the {count} selected"),
                format!("Delete the {count} selected"),
            ),
            None => ("Duplicate".to_string(), "Delete".to_string()),
        };
        let name = editor.name_of(at.node.as_str());
        let pause =
            |at: &str, on: bool| format!("{}Pause {at} “{name}”", if on { "✓ " } else { "" });
        let (pause_before, pause_after) = (pause("before", before), pause("after", after));
        let target = at.node.clone();
        Some(view! {
            <div class="node-menu" role="menu" data-testid="node-menu" node_ref=menu
                style:left=format!("{}px", at.x) style:top=format!("{}px", at.y)
                on:pointerdown=|event| event.stop_propagation()>
                {editor.can_edit.then(|| view! {
                    <button type="button" role="menuitem" aria-keyshortcuts="Control+D"
                        on:click=take(duplicate)>{duplicate_text}</button>
                    <button type="button" role="menuitem" aria-keyshortcuts="Delete"
                        on:click=take(delete)>{delete_text}</button>
                    {grouping}
                    <button type="button" role="menuitemcheckbox" aria-checked=before.to_string() on:click=toggle(false)>
                        {pause_before}
                    </button>
                    <button type="button" role="menuitemcheckbox" aria-checked=after.to_string() on:click=toggle(true)>
                        {pause_after}
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

/// Moves the menu, once drawn, up and left by what of it would fall past
/// the bottom or right of what holds it (the canvas) or of the window: a
/// node near the canvas's foot opens it whole.
fn keep_inside(menu: &web_sys::HtmlDivElement) {
    use wasm_bindgen::JsCast;
    const MARGIN: f64 = 8.0;
    let rect = menu.get_bounding_client_rect();
    let (mut bottom, mut right) = window()
        .inner_height()
        .ok()
        .zip(window().inner_width().ok())
        .and_then(|(height, width)| height.as_f64().zip(width.as_f64()))
        .unwrap_or((f64::INFINITY, f64::INFINITY));
    let holder = menu
        .offset_parent()
        .and_then(|parent| parent.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(holder) = &holder {
        let held = holder.get_bounding_client_rect();
        bottom = bottom.min(held.bottom());
        right = right.min(held.right());
    }
    let style = web_sys::HtmlElement::style(menu);
    let over_y = rect.bottom() + MARGIN - bottom;
    if over_y > 0.0 {
        let top = (f64::from(menu.offset_top()) - over_y).max(MARGIN);
        let _ = style.set_property("top", &format!("{top}px"));
    }
    let over_x = rect.right() + MARGIN - right;
    if over_x > 0.0 {
        let left = (f64::from(menu.offset_left()) - over_x).max(MARGIN);
        let _ = style.set_property("left", &format!("{left}px"));
    }
}
