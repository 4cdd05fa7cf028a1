//! Sticky notes: text on the canvas for people (runs ignore it). Drag one
//! by its bar, type in it, delete it with its ✕ or the Delete key.

use heddle_engine::format::{Note, Position};
use leptos::ev;
use leptos::prelude::*;

use super::gestures::{Drag, Gestures};
use super::note_places::new_note_spot;
use super::place::Area;
use super::state::{Editor, Viewport};

/// A fresh note id: `note-1`, `note-2`, ...
pub fn new_note_id(notes: &[Note]) -> String {
    (1..)
        .map(|n| format!("note-{n}"))
        .find(|id| notes.iter().all(|note| &note.id != id))
        .unwrap_or_else(|| "note".into())
}

/// Adds an empty note in a `width` × `height` view: over the selected
/// node, else mid-view, never on a node (`note_places.rs`).
pub fn add_note_in_view(editor: Editor, (width, height): (f64, f64)) {
    let centre = editor
        .viewport
        .get_untracked()
        .to_world(width / 2.0, height / 2.0);
    let positions = editor.positions().get_untracked();
    let selected = editor
        .selected
        .with_untracked(|selected| match selected.len() {
            1 => selected
                .iter()
                .next()
                .and_then(|id| positions.get(id))
                .map(|at| at.get_untracked()),
            _ => None,
        });
    let taken: Vec<Position> = positions.values().map(|at| at.get_untracked()).collect();
    let spot = new_note_spot(&taken, &labels_drawn(editor), selected, centre);
    // Over a node near the top of the view, the note would be under the
    // floating toolbar, or above the view: the view moves down to show it.
    let view = editor.viewport.get_untracked();
    let top = spot.y * view.zoom + view.y;
    if top < CLEAR_OF_THE_TOOLBAR {
        editor.viewport.set(Viewport {
            y: view.y + CLEAR_OF_THE_TOOLBAR - top,
            ..view
        });
    }
    add_note(editor, spot);
}

/// The edges' labels drawn now (those in view), as areas of the canvas:
/// read from the page, where they lie as drawn at this zoom.
fn labels_drawn(editor: Editor) -> Vec<Area> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let page = document();
        let Some(canvas) = page.query_selector(".editor-canvas").ok().flatten() else {
            return Vec::new();
        };
        let origin = canvas.get_bounding_client_rect();
        let view = editor.viewport.get_untracked();
        let Ok(labels) = page.query_selector_all(".editor-edge-label") else {
            return Vec::new();
        };
        (0..labels.length())
            .filter_map(|at| labels.item(at))
            .filter_map(|label| label.dyn_into::<web_sys::Element>().ok())
            .map(|label| label.get_bounding_client_rect())
            // Hidden (zoomed far out, the routes go with the labels).
            .filter(|rect| rect.width() > 0.0 && rect.height() > 0.0)
            .map(|rect| {
                let corner = view.to_world(rect.left() - origin.left(), rect.top() - origin.top());
                Area {
                    x: corner.x,
                    y: corner.y,
                    width: rect.width() / view.zoom,
                    height: rect.height() / view.zoom,
                }
            })
            .collect()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = editor;
        Vec::new()
    }
}

/// Where the canvas is clear of its floating toolbar, from its top (px).
const CLEAR_OF_THE_TOOLBAR: f64 = 72.0;

/// Adds an empty note at `at`, selects it and puts the focus in its text:
/// what is typed next is the note (it went nowhere, the focus left on the
/// button or the canvas).
fn add_note(editor: Editor, at: Position) {
    let mut added = None;
    editor.change(|document| {
        let id = new_note_id(&document.notes);
        added = Some(id.clone());
        document.notes.push(Note {
            id,
            text: String::new(),
            position: at,
        });
    });
    if let Some(id) = added {
        // The note is what is selected now: the inspector leaves the node
        // or group it was written about.
        editor.selected.set(Default::default());
        editor.selected_edge.set(None);
        editor.selected_note.set(Some(id.clone()));
        // Drawn by the next frame.
        #[cfg(feature = "hydrate")]
        request_animation_frame(move || {
            crate::components::focus_first(&format!(".sticky-note[data-note=\"{id}\"] textarea"));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = id;
    }
}

#[component]
pub fn Notes(editor: Editor, gestures: Gestures) -> impl IntoView {
    view! {
        <For
            each=move || editor.skeleton.with(|document| document.notes.iter().map(|note| note.id.clone()).collect::<Vec<_>>())
            key=|id| id.clone()
            let:id
        >
            <StickyNote editor gestures id />
        </For>
    }
}

#[component]
fn StickyNote(editor: Editor, gestures: Gestures, id: String) -> impl IntoView {
    let note = {
        let id = id.clone();
        Memo::new(move |_| {
            editor
                .skeleton
                .with(|document| document.notes.iter().find(|note| note.id == id).cloned())
        })
    };
    let transform = move || {
        note.with(|note| {
            note.as_ref()
                .map(|note| format!("translate({}px, {}px)", note.position.x, note.position.y))
                .unwrap_or_default()
        })
    };
    let selected = {
        let id = id.clone();
        move || {
            editor
                .selected_note
                .with(|selected| selected.as_deref() == Some(id.as_str()))
        }
    };
    let grab = {
        let id = id.clone();
        move |event: ev::PointerEvent| {
            event.stop_propagation();
            // What is half-typed in the inspector is applied before the
            // form it is in goes (the press does not reach the canvas,
            // which would do it).
            super::gestures::commit_focused_field();
            editor.selected.set(Default::default());
            editor.selected_edge.set(None);
            editor.selected_note.set(Some(id.clone()));
            if !editor.can_edit || event.button() != 0 {
                return;
            }
            let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64)
            else {
                return;
            };
            let Some(origin) = note.with_untracked(|note| note.as_ref().map(|note| note.position))
            else {
                return;
            };
            gestures.drag.set_value(Drag::MoveNote {
                id: id.clone(),
                from: editor.viewport.get_untracked().to_world(x, y),
                origin,
                before: std::sync::Arc::new(editor.document()),
            });
        }
    };
    let edit = {
        let id = id.clone();
        move |event: leptos::ev::Event| {
            let text = event_target_value(&event);
            editor.change(|document| {
                if let Some(note) = document.notes.iter_mut().find(|note| note.id == id) {
                    note.text = text;
                }
            });
        }
    };
    let remove = {
        let id = id.clone();
        move |_| {
            editor.change(|document| document.notes.retain(|note| note.id != id));
            editor.selected_note.set(None);
        }
    };
    view! {
        <div
            class="sticky-note"
            class:selected=selected
            data-note=id.clone()
            style:transform=transform
            on:pointerdown=|event: ev::PointerEvent| event.stop_propagation()
        >
            <div class="sticky-note-bar" on:pointerdown=grab>
                <span>"Note"</span>
                {editor.can_edit.then(|| view! {
                    <button type="button" class="sticky-note-close" aria-label="Delete note" on:click=remove>"✕"</button>
                })}
            </div>
            <textarea
                aria-label="Note text"
                placeholder="Write a note…"
                readonly=!editor.can_edit
                prop:value=move || note.with(|note| note.as_ref().map(|note| note.text.clone()).unwrap_or_default())
                on:change=edit
            ></textarea>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::format::{Note, Position};

    use super::new_note_id;

    #[test]
    fn note_ids_do_not_clash() {
        let note = |id: &str| Note {
            id: id.into(),
            text: String::new(),
            position: Position { x: 0.0, y: 0.0 },
        };
        assert_eq!(new_note_id(&[]), "note-1");
        assert_eq!(new_note_id(&[note("note-1"), note("note-3")]), "note-2");
    }
}
