//! What a group's frame and its collapsed card share: the button that
//! collapses or expands it, and how the group is named.

use heddle_engine::format::Group;
use leptos::prelude::*;

use crate::editor::groups::set_collapsed;
use crate::editor::state::Editor;

/// A group's name as drawn ("Group" when it has none) and its size
/// ("3 nodes").
pub(super) fn names(group: &Group) -> (String, String) {
    let label = if group.label.is_empty() {
        "Group".to_string()
    } else {
        group.label.clone()
    };
    let count = match group.nodes.len() {
        1 => "1 node".to_string(),
        n => format!("{n} nodes"),
    };
    (label, count)
}

/// Collapses group `id` (`collapse`), or expands it, then runs `after`
/// when it was pressed from the keyboard (to move the focus on). Its
/// press is its own: it neither selects nor drags the group, nor, by the
/// pointer, selects what was under it.
#[component]
pub(super) fn GroupToggle(
    editor: Editor,
    id: String,
    label: String,
    collapse: bool,
    #[prop(optional)] after: Option<Callback<()>>,
) -> impl IntoView {
    let (name, glyph, testid, class) = if collapse {
        (
            format!("Collapse {label}"),
            "▾",
            "group-collapse",
            "canvas-group-toggle",
        )
    } else {
        (
            format!("Expand {label}"),
            "▸",
            "group-expand",
            "canvas-group-toggle canvas-group-expand",
        )
    };
    let click = move |event: leptos::ev::MouseEvent| {
        // A click by the pointer has a count; by Enter or Space, none.
        let by_keyboard = event.detail() == 0;
        // By the pointer, the canvas keeps the focus (the button may go
        // with the card), so its keys still work.
        let canvas = (!by_keyboard)
            .then(|| {
                use wasm_bindgen::JsCast;
                event
                    .current_target()
                    .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
                    .and_then(|button| button.closest(".editor-canvas").ok().flatten())
                    .and_then(|canvas| canvas.dyn_into::<web_sys::HtmlElement>().ok())
            })
            .flatten();
        set_collapsed(editor, &id, collapse);
        if let Some(canvas) = canvas {
            let _ = canvas.focus();
        } else if let Some(after) = after {
            after.run(());
        }
    };
    view! {
        <button
            class=class
            type="button"
            aria-label=name.clone()
            title=name
            data-testid=testid
            on:pointerdown=|event| event.stop_propagation()
            on:click=click
        >
            {glyph}
        </button>
    }
}
