//! Fits the graph to the canvas once the browser has laid it out, and
//! keeps it in view when the canvas changes size (the run panel
//! opening under it, the window resized): a view nobody has panned or
//! zoomed since it was framed is framed again the same way (whole after
//! Fit; as it opened, readable, otherwise); otherwise what is in the
//! middle stays in the middle, so the graph never slides off to one side
//! or under the minimap. While something is selected nothing moves but to
//! keep the selected node in view (when it was: one the person moved away
//! from is not gone back to): the canvas narrowing for the inspector
//! must not pull the graph away from under the pointer. Only its height
//! changing (the run panel) frames a framed view again, selection or not.
//! A graph opened
//! again in this browser opens where it was left (`view_memory`).

use super::gestures::Gestures;
use super::state::Editor;

/// Watches the canvas's size: fits again, or moves the view by half of
/// each change.
#[cfg(feature = "hydrate")]
pub fn keep_centred(editor: Editor, gestures: Gestures, graph_id: String) {
    use std::cell::Cell;
    use std::rc::Rc;

    use leptos::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    gestures.canvas.on_load(move |canvas| {
        // Nothing measured here: the canvas has just been made, and asking
        // its size would lay the page out in the middle of hydrating it. The
        // observer reports the first size on its own.
        let last: Rc<Cell<Option<(f64, f64)>>> = Rc::new(Cell::new(None));
        let resized = Closure::<dyn FnMut(js_sys::Array)>::new(move |_entries: js_sys::Array| {
            let (width, height) = gestures.measure();
            gestures.saw_size((width, height));
            let Some((was_width, was_height)) = last.replace(Some((width, height))) else {
                // The first size: the page was drawn at a guessed one
                // (`Viewport::GUESSED_CANVAS`); now the view is where it was
                // left on the last visit, or fits the real one, unless
                // someone has already moved it.
                if editor.still_framed() && width > 100.0 && height > 100.0 {
                    open_framed(editor, &graph_id, width, height);
                }
                return;
            };
            let (dx, dy) = ((width - was_width) / 2.0, (height - was_height) / 2.0);
            if dx.abs() < 0.5 && dy.abs() < 0.5 {
                return;
            }
            // Someone at work on a selection (the inspector opening beside
            // it, on a narrow window): what is drawn stays put, moved only
            // to keep the selected node whole in view.
            let selected = editor
                .selected
                .try_with_untracked(|selected| selected.first().cloned())
                .flatten();
            let edge = editor
                .selected_edge
                .try_with_untracked(Option::is_some)
                .unwrap_or(false);
            let framed = editor.still_framed() && width > 100.0 && height > 100.0;
            // Only the height changed (the run panel growing for a chat,
            // or giving room back): nothing moved beside the pointer, so a
            // framed view is framed again, selection or not, and the
            // graph stays whole rather than cut at the panel's edge.
            let taller_or_shorter = dx.abs() < 0.5 && editor.framed_yet();
            if framed && taller_or_shorter && (selected.is_some() || edge) {
                editor.reframe(width, height);
                return;
            }
            // The selected node kept in view only when it was in view: one
            // the person has moved away from (the minimap, a pan) is not
            // gone back to because the run panel opened.
            if let Some(id) = &selected
                && editor.shows(id, was_width, was_height)
            {
                editor.reveal(id, width, height);
                return;
            }
            if edge {
                return;
            }
            if framed {
                // The first size was too small to frame in (the page still
                // being laid out): this is the graph's opening.
                if editor.framed_yet() {
                    editor.reframe(width, height);
                } else {
                    open_framed(editor, &graph_id, width, height);
                }
                return;
            }
            let _ = editor.viewport.try_update(|view| {
                view.x += dx;
                view.y += dy;
            });
        });
        let Ok(observer) = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref()) else {
            return;
        };
        observer.observe(&canvas);
        // The callback lives as long as the observer; both go with the canvas.
        let held = StoredValue::new_local(Some((observer, resized)));
        on_cleanup(move || {
            if let Some(Some((observer, _))) = held.try_update_value(Option::take) {
                observer.disconnect();
            }
        });
    });
}

/// Opens the graph in a `width` × `height` canvas where it was left on
/// the last visit (`view_memory`), else framed as it opens.
#[cfg(feature = "hydrate")]
fn open_framed(editor: Editor, graph_id: &str, width: f64, height: f64) {
    let kept = super::view_memory::load().of(graph_id, (width, height));
    if !kept.is_some_and(|view| editor.reopen_at(view, width, height)) {
        editor.frame(width, height);
    }
}

/// On the server there is nothing to watch.
#[cfg(not(feature = "hydrate"))]
pub fn keep_centred(editor: Editor, gestures: Gestures, graph_id: String) {
    let _ = (editor, gestures, graph_id);
}
