//! Finding a node by name: `/` (or the toolbar's Find) opens a box over
//! the canvas; typing lists the nodes whose label or id holds the text,
//! those starting with it first; Enter (or a click) goes to the chosen
//! one: the view moves to it, a collapsed group holding it opens, and it
//! is selected and focused (`connect_menu::focus_node`). Escape closes
//! it, the focus back on the canvas. For a graph too big to look through.

use heddle_engine::NodeId;
use leptos::ev;
use leptos::prelude::*;

use super::connect_menu::focus_node;
use super::state::Editor;

/// How many matches the list shows.
const SHOWN: usize = 8;

/// The nodes matching `query` (label or id, case aside), those whose label
/// or id starts with it first, then those holding it, then those holding
/// each of its words ("account 20" finds "Account step 20", which a
/// tryout looked for), each in the graph's order; `SHOWN` at most. Each:
/// id, label, kind.
pub fn matches(nodes: &[(NodeId, String, String)], query: &str) -> Vec<(NodeId, String, String)> {
    let query = query.trim().to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut found: Vec<(u8, &(NodeId, String, String))> = nodes
        .iter()
        .filter_map(|node| {
            let (label, id) = (node.1.to_lowercase(), node.0.as_str().to_lowercase());
            if label.starts_with(&query) || id.starts_with(&query) {
                Some((0, node))
            } else if label.contains(&query) || id.contains(&query) {
                Some((1, node))
            } else if words.len() > 1
                && words
                    .iter()
                    .all(|word| label.contains(word) || id.contains(word))
            {
                Some((2, node))
            } else {
                None
            }
        })
        .collect();
    // Stable: the graph's order within each kind of match.
    found.sort_by_key(|(tier, _)| *tier);
    found
        .into_iter()
        .take(SHOWN)
        .map(|(_, node)| node.clone())
        .collect()
}

/// The find box, while `open`.
#[component]
pub fn FindNode(editor: Editor, open: RwSignal<bool>) -> impl IntoView {
    move || {
        open.get().then(|| {
            let query = RwSignal::new(String::new());
            let chosen = RwSignal::new(0usize);
            let found = Memo::new(move |_| {
                let nodes: Vec<(NodeId, String, String)> = editor.nodes.with(|nodes| {
                    nodes
                        .iter()
                        .map(|node| {
                            node.spec.with(|spec| {
                                (spec.id.clone(), spec.label.clone(), spec.kind.clone())
                            })
                        })
                        .collect()
                });
                query.with(|query| matches(&nodes, query))
            });
            let input = NodeRef::<leptos::html::Input>::new();
            crate::components::focus_when_drawn(input);
            let close = move || {
                open.set(false);
                crate::components::focus_first(".editor-canvas");
            };
            let go = move |id: NodeId| {
                open.set(false);
                focus_node(editor, &id);
            };
            let on_key = move |event: ev::KeyboardEvent| {
                let count = found.with(Vec::len);
                match event.key().as_str() {
                    "Escape" => {
                        event.prevent_default();
                        event.stop_propagation();
                        close();
                    }
                    "ArrowDown" if count > 0 => {
                        event.prevent_default();
                        chosen.update(|at| *at = (*at + 1) % count);
                    }
                    "ArrowUp" if count > 0 => {
                        event.prevent_default();
                        chosen.update(|at| *at = (*at + count - 1) % count);
                    }
                    "Enter" => {
                        event.prevent_default();
                        let pick = found.with(|found| found.get(chosen.get_untracked()).cloned());
                        if let Some((id, _, _)) = pick {
                            go(id);
                        }
                    }
                    _ => {}
                }
            };
            let option_id = |i: usize| format!("find-node-{i}");
            view! {
                <div class="find-node" role="dialog" aria-label="Find a node" data-testid="find-node"
                    on:pointerdown=|event| event.stop_propagation()>
                    <div class="field">
                    <input
                        type="search"
                        node_ref=input
                        class="find-node-input"
                        placeholder="Find a node by name…"
                        aria-label="Find a node by name"
                        role="combobox"
                        aria-expanded=move || found.with(|found| (!found.is_empty()).to_string())
                        aria-controls="find-node-list"
                        aria-activedescendant=move || found.with(|found| (!found.is_empty()).then(|| option_id(chosen.get())))
                        data-testid="find-node-input"
                        prop:value=move || query.get()
                        on:input=move |event| {
                            query.set(event_target_value(&event));
                            chosen.set(0);
                        }
                        on:keydown=on_key
                        on:blur=move |_| {
                            // A click on a match lands before the blur is
                            // acted on; a blur elsewhere closes the box.
                            request_animation_frame(move || {
                                if open.try_get_untracked() == Some(true)
                                    && document().active_element().and_then(|e| e.closest(".find-node").ok().flatten()).is_none()
                                {
                                    let _ = open.try_set(false);
                                }
                            });
                        }
                    />
                    </div>
                    <ul id="find-node-list" class="find-node-list" role="listbox" aria-label="Matching nodes">
                        {move || {
                            let found = found.get();
                            if found.is_empty() {
                                return query.with(|query| (!query.trim().is_empty()).then(|| view! {
                                    <li class="empty-note" role="presentation">"No node has that name."</li>
                                })).into_any();
                            }
                            found.into_iter().enumerate().map(|(i, (id, label, kind))| {
                                let shown = if label.is_empty() { id.to_string() } else { label };
                                let target = id.clone();
                                view! {
                                    <li
                                        id=option_id(i)
                                        role="option"
                                        class="find-node-option"
                                        aria-selected=move || (chosen.get() == i).to_string()
                                        on:pointerdown=move |event| {
                                            event.prevent_default();
                                            go(target.clone());
                                        }
                                    >
                                        <span class="find-node-label">{shown}</span>
                                        <span class="find-node-kind mono">{format!("{kind} · {id}")}</span>
                                    </li>
                                }
                            }).collect_view().into_any()
                        }}
                    </ul>
                </div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, label: &str) -> (NodeId, String, String) {
        (NodeId::from(id), label.to_string(), "set".to_string())
    }

    #[test]
    fn matches_start_first_then_contain_in_the_graphs_order_and_are_few() {
        let nodes = vec![
            node("a", "Write the summary"),
            node("b", "Summarise"),
            node("sum_3", ""),
            node("c", "Fetch"),
        ];
        let ids = |query: &str| -> Vec<String> {
            matches(&nodes, query)
                .into_iter()
                .map(|(id, _, _)| id.to_string())
                .collect()
        };
        assert_eq!(ids("sum"), ["b", "sum_3", "a"]);
        assert_eq!(ids("  FETCH "), ["c"]);
        // Each word somewhere, in any order, after the whole text.
        assert_eq!(ids("write summary"), ["a"]);
        assert_eq!(ids("summary the"), ["a"]);
        assert!(ids("write fetch").is_empty());
        assert!(ids("").is_empty());
        assert!(ids("nothing").is_empty());
        let many: Vec<_> = (0..50).map(|i| node(&format!("n{i}"), "Step")).collect();
        assert_eq!(matches(&many, "step").len(), SHOWN);
    }
}
