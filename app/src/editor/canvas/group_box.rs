//! A collapsed group: one card, drawn where its top-left node is, standing
//! for all its nodes. Edges to any of them end at it (`groups::Folds`), a
//! run's progress inside shows on it (running while any of its nodes runs,
//! failed if one failed), pressing it selects its nodes and drags them
//! together, and its button, Enter or a double click expands it.

use std::collections::HashMap;

use heddle_engine::NodeId;
use heddle_engine::format::{Group, Position};
use leptos::ev;
use leptos::prelude::*;

use crate::editor::groups::{Folds, set_collapsed};
use crate::editor::keyboard_nav::Direction;
use crate::editor::state::Editor;
use crate::live::RunView;

use super::Selection;
use super::group_toggle::{GroupToggle, names};

/// The card standing for collapsed `group`.
#[component]
pub(super) fn GroupBox(
    editor: Editor,
    selection: Selection,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    folds: Memo<Folds>,
    live: RwSignal<RunView>,
    group: Group,
) -> impl IntoView {
    let id = group.id.clone();
    let members = StoredValue::new(group.nodes.clone());
    let anchor = Memo::new(move |_| {
        members.with_value(|members| {
            let first = members.first()?;
            folds.with(|folds| Some(folds.drawn_at(first).clone()))
        })
    });
    let transform = move || {
        let at = anchor.get()?;
        let p = positions.with(|map| map.get(&at).copied())?.get();
        Some(format!("translate({}px, {}px)", p.x, p.y))
    };
    // What the run did inside: the most telling state of its nodes.
    let state = move || {
        live.with(|view| {
            members.with_value(|members| {
                let states: Vec<&str> = members
                    .iter()
                    .map(|id| view.state_of(id.as_str()))
                    .collect();
                summary(&states)
            })
        })
    };
    let selected = move || {
        selection.nodes.with(|selected| {
            members.with_value(|members| {
                !members.is_empty() && members.iter().all(|id| selected.contains(id))
            })
        })
    };
    let (label, count) = names(&group);
    let aria_label = {
        let (label, count) = (label.clone(), count.clone());
        move || {
            let mut name = format!("{label}, collapsed group of {count}");
            let state = state();
            if state != "idle" {
                name.push_str(", ");
                name.push_str(state);
            }
            if selected() {
                name.push_str(", selected");
            }
            name
        }
    };
    // The focus goes to the node the card stood at.
    let focus_anchor = move || {
        if let Some(anchor) = anchor.get_untracked() {
            crate::editor::connect_menu::focus_node(editor, &anchor);
        }
    };
    let expand = {
        let id = id.clone();
        move || {
            set_collapsed(editor, &id, false);
            focus_anchor();
        }
    };
    let select = move || {
        let all: std::collections::BTreeSet<NodeId> =
            members.with_value(|members| members.iter().cloned().collect());
        if editor.selected.with_untracked(|selected| *selected != all) {
            editor.selected.set(all);
            editor.selected_edge.set(None);
            editor.selected_note.set(None);
        }
    };
    let on_key = {
        let expand = expand.clone();
        move |event: ev::KeyboardEvent| {
            if event.ctrl_key() || event.meta_key() {
                return;
            }
            let key = event.key();
            if matches!(key.as_str(), "Enter" | " ") {
                event.prevent_default();
                expand();
            } else if let Some(direction) = Direction::of_key(&key) {
                event.prevent_default();
                event.stop_propagation();
                if let Some(anchor) = anchor.get_untracked() {
                    crate::editor::node_keys::go(editor, &anchor, direction);
                }
            }
        }
    };
    view! {
        <div
            class=format!("canvas-node canvas-group-box tint-{}", group.color.name())
            class:selected=selected
            data-group=id
            data-state=state
            data-testid="group-box"
            style:transform=transform
            tabindex="0"
            role="group"
            aria-roledescription="collapsed group"
            aria-label=aria_label
            title="Double-click or press Enter to expand"
            on:focus=move |_| select()
            on:keydown=on_key
            on:dblclick=move |event| {
                event.stop_propagation();
                expand();
            }
        >
            <span class="port port-in" aria-hidden="true"></span>
            <span class="canvas-node-label">{label.clone()}</span>
            <span class="canvas-node-kind">{count}</span>
            <GroupToggle editor id=id.clone() label=label.clone() collapse=false after=Callback::new(move |()| focus_anchor()) />
            <span class="port port-out-static" aria-hidden="true"></span>
        </div>
    }
}

/// The state a collapsed group shows for its nodes' states: running while
/// any runs (or waits, or retries), else failed if any failed, paused if
/// any is, succeeded if any did; idle when none ran.
fn summary(states: &[&str]) -> &'static str {
    const ORDER: [&str; 7] = [
        "running",
        "retrying",
        "waiting",
        "failed",
        "interrupted",
        "succeeded",
        "skipped",
    ];
    ORDER
        .into_iter()
        .find(|state| states.contains(state))
        .unwrap_or("idle")
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_collapsed_group_shows_the_most_telling_state_of_its_nodes() {
        assert_eq!(summary(&["succeeded", "running", "failed"]), "running");
        assert_eq!(summary(&["succeeded", "failed", "idle"]), "failed");
        assert_eq!(summary(&["succeeded", "idle"]), "succeeded");
        assert_eq!(summary(&["idle", "idle"]), "idle");
        assert_eq!(summary(&[]), "idle");
    }
}
