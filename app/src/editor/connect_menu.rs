//! Connecting two nodes from the keyboard: on a focused node, C opens a
//! list of the nodes it may lead to (those the engine's rules allow, by
//! label), Enter draws the edge, Escape closes; the focus goes back to the
//! node either way.

use heddle_engine::NodeId;
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
    request_animation_frame(move || crate::components::focus_first(&selector));
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
        let targets: Vec<(NodeId, String)> = document
            .nodes
            .iter()
            .filter(|node| node.id != source)
            .filter(|node| model::can_connect(&document, &source, &node.id).is_ok())
            .map(|node| {
                (
                    node.id.clone(),
                    format!("{} ({})", name(&node.id), node.kind),
                )
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
