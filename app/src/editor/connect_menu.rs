//! Connecting two nodes from the keyboard: on a focused node, C opens a
//! list of the nodes it may lead to (those the engine's rules allow, by
//! label), Enter draws the edge, Escape closes; the focus goes back to the
//! node either way.

use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::prelude::*;

use super::model;
use super::node_menu::NodeMenuAt;
use super::state::Editor;

/// Focuses the node `id` on the canvas, moving the view to it when it is
/// out of sight. A big graph draws only the nodes near the view
/// (`canvas/culling.rs`): one not drawn is selected first (the selection
/// is always drawn) and focused once it is; one in a collapsed group opens
/// its group.
pub fn focus_node(editor: Editor, id: &NodeId) {
    // A node in a collapsed group is shown: its group opens.
    super::groups::reveal(editor, id);
    let selector = format!(
        ".canvas-node[data-node=\"{}\"]",
        id.as_str().replace('"', "")
    );
    if let Some(canvas) = document().query_selector(".editor-canvas").ok().flatten() {
        let rect = canvas.get_bounding_client_rect();
        editor.reveal(id, rect.width(), rect.height());
    }
    if document()
        .query_selector(&selector)
        .ok()
        .flatten()
        .is_some()
    {
        crate::components::focus_first(&selector);
        return;
    }
    editor.selected_edge.set(None);
    editor
        .selected
        .set(std::collections::BTreeSet::from([id.clone()]));
    crate::components::focus_once_shown(selector, DRAWN_WITHIN);
}

/// How many frames a node asked for may take to be drawn: its group
/// opening, then the nodes near the view arriving a few a frame on a big
/// graph (`canvas/culling.rs`), more under load.
const DRAWN_WITHIN: u32 = 60;

/// The nodes `source` may lead to, the likeliest first, so that the one
/// chosen when the list opens is the one usually meant: nodes nothing
/// leads to yet before those already reached, then those to its right
/// before those behind it, then the nearest.
fn likely_first(document: &heddle_engine::GraphDocument, source: &NodeId) -> Vec<NodeId> {
    let from = document
        .nodes
        .iter()
        .find(|node| &node.id == source)
        .and_then(|node| node.position)
        .unwrap_or(Position { x: 0.0, y: 0.0 });
    let mut targets: Vec<(bool, bool, f64, usize, NodeId)> = document
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| &node.id != source)
        .filter(|(_, node)| model::can_connect(document, source, &node.id).is_ok())
        .map(|(at, node)| {
            let reached = document.edges.iter().any(|edge| edge.to == node.id);
            let to = node.position.unwrap_or(from);
            let behind = to.x < from.x;
            let distance = (to.x - from.x).hypot(to.y - from.y);
            (reached, behind, distance, at, node.id.clone())
        })
        .collect();
    targets.sort_by(|a, b| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    targets.into_iter().map(|(.., id)| id).collect()
}

#[component]
pub fn ConnectMenu(editor: Editor, from: RwSignal<Option<NodeMenuAt>>) -> impl IntoView {
    move || {
        let NodeMenuAt { node: source, x, y } = from.get()?;
        let document = editor.document();
        let name = |id: &NodeId| {
            editor
                .label_of(id.as_str())
                .unwrap_or_else(|| id.to_string())
        };
        let targets: Vec<(NodeId, String)> = likely_first(&document, &source)
            .into_iter()
            .filter_map(|id| {
                let kind = &document.nodes.iter().find(|node| node.id == id)?.kind;
                let text = format!("{} ({kind})", name(&id));
                Some((id, text))
            })
            .collect();
        let title = format!("Connect “{}” to", name(&source));
        let heading = title.clone();
        let chosen = RwSignal::new(
            targets
                .first()
                .map(|(id, _)| id.to_string())
                .unwrap_or_default(),
        );
        let error = RwSignal::new(None::<String>);
        let list = NodeRef::<leptos::html::Select>::new();
        crate::components::focus_when_drawn(list);
        let close = {
            let source = source.clone();
            move || {
                from.set(None);
                let source = source.clone();
                request_animation_frame(move || focus_node(editor, &source));
            }
        };
        let connect = {
            let (source, close) = (source.clone(), close.clone());
            move |event: leptos::ev::SubmitEvent| {
                event.prevent_default();
                let target = NodeId::from(chosen.get_untracked().as_str());
                let mut made = Err(String::new());
                editor.change(|document| made = model::connect(document, &source, &target));
                match made {
                    Ok(edge) => {
                        editor.selected_edge.set(Some(edge));
                        close();
                    }
                    Err(reason) => error.set(Some(reason)),
                }
            }
        };
        let size = targets.len().clamp(2, 8).to_string();
        let none = targets.is_empty();
        Some(view! {
            <form class="connect-menu" role="dialog" aria-label=title data-testid="connect-menu"
                style:left=format!("{}px", x.max(8.0)) style:top=format!("{}px", y.max(8.0))
                on:submit=connect
                on:pointerdown=|event| event.stop_propagation()
                on:keydown={
                    let close = close.clone();
                    move |event: leptos::ev::KeyboardEvent| {
                        if event.key() == "Escape" {
                            event.prevent_default();
                            event.stop_propagation();
                            close();
                        }
                    }
                }>
                <label class="field-label" for="connect-target">{heading}</label>
                {if none {
                    view! { <p class="empty-note">"No node can follow this one."</p> }.into_any()
                } else {
                    view! {
                        <select id="connect-target" size=size node_ref=list data-testid="connect-target"
                            on:change=move |event| chosen.set(event_target_value(&event))
                            on:keydown=move |event: leptos::ev::KeyboardEvent| {
                                // Enter in the list connects.
                                if event.key() == "Enter" {
                                    event.prevent_default();
                                    if let Some(form) = event_target::<web_sys::HtmlSelectElement>(&event).form() {
                                        let _ = form.request_submit();
                                    }
                                }
                            }>
                            {targets.into_iter().enumerate().map(|(index, (id, text))| view! {
                                <option value=id.to_string() selected=index == 0>{text}</option>
                            }).collect_view()}
                        </select>
                    }.into_any()
                }}
                {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
                <div class="connect-actions">
                    <button type="button" class="button button-small" on:click={
                        let close = close.clone();
                        move |_| close()
                    }>"Cancel"</button>
                    <button type="submit" class="button button-small button-primary" disabled=none>"Connect"</button>
                </div>
            </form>
        })
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::{GraphDocument, NodeId};
    use serde_json::json;

    use super::likely_first;

    #[test]
    fn the_node_usually_meant_comes_first() {
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "g",
            "nodes": [
                {"id": "start", "kind": "start", "position": {"x": 0, "y": 0}},
                {"id": "far", "kind": "set", "position": {"x": 900, "y": 0}},
                {"id": "behind", "kind": "set", "position": {"x": -300, "y": 0}},
                {"id": "near", "kind": "set", "position": {"x": 260, "y": 40}},
                {"id": "taken", "kind": "set", "position": {"x": 200, "y": 0}},
                {"id": "other", "kind": "start", "position": {"x": 100, "y": 0}}
            ],
            "edges": [{"id": "e", "from": "far", "to": "taken"}]
        }))
        .unwrap();
        let order: Vec<NodeId> = likely_first(&document, &"start".into());
        let names: Vec<&str> = order.iter().map(NodeId::as_str).collect();
        // A start is never a target; "taken" is reached already.
        assert_eq!(names, ["near", "far", "behind", "taken"]);
    }
}
