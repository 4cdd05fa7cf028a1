//! Keyboard shortcuts and the clipboard. Copy puts the selection on the
//! clipboard as graph JSON (so it pastes into another graph, another tab,
//! or a text editor); paste takes such JSON, or a whole exported graph.
//! Shortcuts and the clipboard belong to the canvas while it has the focus
//! (undo, redo and Escape to the page but its fields): a letter typed or
//! text copied in a panel or a dialog stays theirs.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::ev;
use leptos::prelude::*;

use super::gestures::Gestures;
use super::layout::layout;
use super::model;
use super::state::Editor;

/// Every shortcut, for the help overlay: (keys, what).
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Drag a kind from the palette", "place a node"),
    (
        "Enter or Space on a palette kind",
        "add it beside the selected node (or mid-view)",
    ),
    ("Tab, arrows (on a node)", "go from node to node"),
    ("Alt or Shift + arrows (on a node)", "move the node"),
    (
        "Enter (on a node)",
        "edit it in the inspector; Escape comes back to it",
    ),
    ("C (on a node)", "connect it to a node chosen from a list"),
    (
        "E (on a node), E again",
        "go to its edges, one after another; Delete removes the one reached",
    ),
    ("Drag from a node's right dot", "connect it to another node"),
    ("Drag the background / wheel", "pan"),
    ("Ctrl + wheel, or + and −", "zoom around the pointer"),
    ("Shift + drag", "select with a box"),
    ("Click, Shift + click", "select, add to the selection"),
    (
        "Delete or Backspace",
        "delete the selection (nodes, an edge, a note)",
    ),
    ("N, or the Note button", "add a sticky note"),
    ("Ctrl + Z", "undo"),
    ("Ctrl + Y, Ctrl + Shift + Z", "redo"),
    (
        "Ctrl + C, Ctrl + V",
        "copy, paste (also between graphs and tabs)",
    ),
    ("Ctrl + D", "duplicate the selection"),
    ("Ctrl + G", "group the selected nodes in a frame"),
    ("Ctrl + Shift + G", "ungroup the selected nodes"),
    ("Enter (on a collapsed group)", "expand it"),
    ("Ctrl + A", "select everything"),
    ("F", "fit the graph in view"),
    ("/", "find a node by name and go to it"),
    ("L", "lay the graph out left to right"),
    (
        "F6, Shift + F6",
        "go to the next (previous) panel: node kinds, canvas, inspector (when shown), run",
    ),
    (
        "Ctrl + Enter",
        "run the graph (as Run in the bar does), from a node's form too",
    ),
    (
        "Ctrl + S",
        "save now, a field being typed in too (the editor saves by itself a moment after each change)",
    ),
    ("?", "show or hide this help (anywhere but a text field)"),
    ("Escape", "clear the selection, close this help or a menu"),
];

/// Whether the event happens in a search box.
fn in_search(event: &web_sys::Event) -> bool {
    use wasm_bindgen::JsCast;
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| {
            element.tag_name() == "INPUT"
                && element
                    .get_attribute("type")
                    .is_some_and(|kind| kind.eq_ignore_ascii_case("search"))
        })
}

/// Whether the event happens while typing in a field (shortcuts then
/// belong to the field).
fn typing(event: &web_sys::Event) -> bool {
    use wasm_bindgen::JsCast;
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| match element.tag_name().as_str() {
            // A box to tick or a slider takes no text: Ctrl+Enter still runs.
            "INPUT" => !matches!(
                element
                    .get_attribute("type")
                    .unwrap_or_default()
                    .to_ascii_lowercase()
                    .as_str(),
                "checkbox" | "radio" | "button" | "submit" | "reset" | "range" | "color" | "file"
            ),
            "TEXTAREA" | "SELECT" => true,
            _ => element.has_attribute("contenteditable"),
        })
}

/// Whether the event is meant for the canvas: it has the focus (or
/// something in it does), or nothing has (after a click on the canvas, or
/// before any). A key pressed in the inspector, the run panel or a dialog
/// is theirs, and text copied there is their text.
fn on_canvas(event: &web_sys::Event) -> bool {
    use wasm_bindgen::JsCast;
    if typing(event) {
        return false;
    }
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .is_none_or(|element| {
            element.tag_name() == "BODY"
                || element.closest(".editor-canvas").ok().flatten().is_some()
        })
}

/// Whether the key was pressed on a button of the canvas's toolbar.
fn on_toolbar(event: &web_sys::Event) -> bool {
    within(event, ".editor-toolbar")
}

/// Whether a modal dialog (Share, Publish, ...) is open: its keys are its
/// own, and no shortcut reaches the editor behind it.
fn modal_open() -> bool {
    document()
        .query_selector("[aria-modal=true]")
        .ok()
        .flatten()
        .is_some()
}

/// Whether the key was pressed in a dialog or overlay (the help, Find, the
/// connect menu): Run and the panels are not reached from there.
fn in_inspector(event: &web_sys::Event) -> bool {
    within(event, ".inspector")
}

/// Whether the key was pressed in what `selector` finds.
fn within(event: &web_sys::Event, selector: &str) -> bool {
    use wasm_bindgen::JsCast;
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| element.closest(selector).ok().flatten().is_some())
}

/// Gives the focus to the one selected node on the canvas; whether there
/// was one to give it to.
fn back_to_the_node(editor: Editor) -> bool {
    let selected = editor.selected.get_untracked();
    let (Some(id), 1) = (selected.first(), selected.len()) else {
        return false;
    };
    super::connect_menu::focus_node(editor, id);
    true
}

fn in_dialog(event: &web_sys::Event) -> bool {
    within(event, "[role=dialog]")
}

/// Deletes the selected nodes (with their edges) or the selected edge. A
/// node deleted from the middle of a chain leaves its neighbours joined
/// (see [`super::rejoin`]).
pub fn delete_selection(editor: Editor) {
    let nodes = editor.selected.get_untracked();
    let edges: BTreeSet<_> = editor.selected_edge.get_untracked().into_iter().collect();
    let note = editor.selected_note.get_untracked();
    if nodes.is_empty() && edges.is_empty() && note.is_none() {
        return;
    }
    // Where the focus goes once they are gone: the node before them.
    let before = editor.edges.with_untracked(|edges| {
        edges
            .iter()
            .find(|edge| nodes.contains(&edge.to) && !nodes.contains(&edge.from))
            .map(|edge| edge.from.clone())
    });
    let said_before = editor.said.with_untracked(|(count, _)| *count);
    let revision_before = editor.revision.get_untracked();
    editor.change(|document| {
        let joining = super::rejoin::joining_edge(document, &nodes);
        model::remove(document, &nodes, &edges);
        document.edges.extend(joining);
        if let Some(note) = &note {
            document.notes.retain(|n| &n.id != note);
        }
    });
    if editor.revision.get_untracked() != revision_before {
        // What the deletion did, in the words a screen reader heard (a
        // rejoin included), seen too, with a way back.
        let words = editor
            .said
            .with_untracked(|(count, said)| (*count != said_before).then(|| said.clone()));
        super::undo_notice::offer(editor, words);
    }
    editor.selected_note.set(None);
    editor.selected.set(BTreeSet::new());
    editor.selected_edge.set(None);
    keep_focus(editor, before);
}

/// After an edit that may have taken the focused element away (a node
/// deleted, an undo drawing the nodes again), gives the focus to `prefer`
/// (else the one selected node, else the canvas) when it was lost to the
/// page: a keyboard or screen-reader user goes on from where they were,
/// not from the top of the page.
pub fn keep_focus(editor: Editor, prefer: Option<NodeId>) {
    request_animation_frame(move || {
        let page = document();
        let lost = match (page.active_element(), page.body()) {
            (Some(active), Some(body)) => active == *body,
            (None, _) => true,
            _ => false,
        };
        if !lost {
            return;
        }
        let selected = editor.selected.try_get_untracked().unwrap_or_default();
        let target = prefer
            .filter(|id| editor.view_of(id).is_some())
            .or_else(|| {
                (selected.len() == 1)
                    .then(|| selected.first().cloned())
                    .flatten()
            });
        match target {
            Some(id) => super::connect_menu::focus_node(editor, &id),
            None => crate::components::focus_first(".editor-canvas"),
        }
    });
}

/// Pastes a fragment, selecting what was pasted: with its top-left corner
/// at `at` (where the pointer is), else beside the originals.
/// Copies the selected nodes (and the edges between them) beside them,
/// the copies selected.
pub fn duplicate_selection(editor: Editor) {
    let fragment = model::copy(&editor.document(), &editor.selected.get_untracked());
    if !fragment.nodes.is_empty() {
        let text = serde_json::to_string(&fragment).unwrap_or_default();
        paste_text(editor, &text, None);
    }
}

fn paste_text(editor: Editor, text: &str, at: Option<Position>) -> bool {
    let Some(fragment) = model::read_fragment(text) else {
        return false;
    };
    let offset = at.map_or((40.0, 40.0), |at| model::offset_to(&fragment, at));
    let mut added = Vec::new();
    editor.change(|document| added = model::paste(document, &fragment, offset));
    editor.selected.set(added.into_iter().collect());
    true
}

/// Lays the graph out left to right, then fits it in view.
pub fn auto_layout(editor: Editor, gestures: Gestures) {
    lay_out(editor);
    let (width, height) = gestures.size();
    if width > 100.0 && height > 100.0 {
        editor.fit(width, height);
    }
}

/// Lays the graph out left to right (one undoable change); each note
/// goes with the node it is beside.
pub fn lay_out(editor: Editor) {
    editor.change(|document| {
        let positions = layout(document);
        let before: HashMap<NodeId, Position> = document
            .nodes
            .iter()
            .filter_map(|node| node.position.map(|at| (node.id.clone(), at)))
            .collect();
        for node in &mut document.nodes {
            node.position = positions.get(&node.id).copied();
        }
        super::note_places::carry(&mut document.notes, &before, &positions);
    });
}

/// Presses the graph bar's Run (so the shortcut does all it does: asks
/// for the inputs, goes to the chat); whether it was there. While a run
/// goes on the button is Stop, and a shortcut pressed twice never stops
/// what it started: it does nothing then.
fn press_run() -> bool {
    use wasm_bindgen::JsCast;
    document()
        .query_selector("[data-testid=run]")
        .ok()
        .flatten()
        .filter(|button| {
            button
                .text_content()
                .is_some_and(|text| text.trim() == "Run")
        })
        .and_then(|button| button.dyn_into::<web_sys::HtmlElement>().ok())
        .map(|button| button.click())
        .is_some()
}

/// Applies the field the focus is in, as leaving it does (fields apply
/// their text as they are left), the focus staying there.
fn apply_the_field_being_typed() {
    use wasm_bindgen::JsCast;
    let field = document()
        .active_element()
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok());
    super::gestures::commit_focused_field();
    if let Some(field) = field {
        let _ = field.focus();
    }
}

pub fn install(editor: Editor, gestures: Gestures, help: RwSignal<bool>) {
    let keys = window_event_listener(ev::keydown, move |event: ev::KeyboardEvent| {
        if modal_open() {
            return;
        }
        // Moving between the panels works from anywhere, a field too.
        if event.key() == "F6" && !event.ctrl_key() && !event.alt_key() && !in_dialog(&event) {
            if super::regions::go_to_region(event.shift_key()) {
                event.prevent_default();
            }
            return;
        }
        // Ctrl+Enter runs from a search box too (the palette's, where the
        // focus rests after adding nodes): what is typed there is a query,
        // not the graph's content.
        let command = event.ctrl_key() || event.meta_key();
        if command && event.key() == "Enter" && in_search(&event) && !in_dialog(&event) {
            if press_run() {
                event.prevent_default();
            }
            return;
        }
        // Ctrl+Enter in a node's form (its system prompt just written)
        // runs what it holds: the field applied first, as when it is left,
        // then Run. It did nothing there, as a tryout found.
        if command
            && event.key() == "Enter"
            && typing(&event)
            && in_inspector(&event)
            && !in_dialog(&event)
        {
            apply_the_field_being_typed();
            if press_run() {
                event.prevent_default();
            }
            return;
        }
        if typing(&event) {
            // Escape in a node's form: back to the node on the canvas (the
            // field applied as it is left); a second Escape clears the
            // selection there. A field's own Escape (a list of suggestions
            // closing) goes first.
            if event.key() == "Escape"
                && !event.default_prevented()
                && in_inspector(&event)
                && back_to_the_node(editor)
            {
                event.prevent_default();
            }
            // Escape in the run panel's fields (the chat's box, what it
            // holds kept): back to the canvas, on the node selected there.
            if event.key() == "Escape"
                && !event.default_prevented()
                && within(&event, ".run-panel")
                && !in_dialog(&event)
            {
                if !back_to_the_node(editor) {
                    crate::components::focus_first(".editor-canvas");
                }
                event.prevent_default();
            }
            return;
        }
        let key = event.key();
        if command && key == "Enter" {
            if !in_dialog(&event) && press_run() {
                event.prevent_default();
            }
            return;
        }
        // Undo, redo, Escape and the help (?) work from anywhere on the
        // page but a field (the palette's kinds, the toolbar, a run tab);
        // every other shortcut only while the canvas has the focus.
        let anywhere = key == "Escape"
            || (!command && key == "?")
            || (command && matches!(key.as_str(), "z" | "Z" | "y" | "Y"));
        // The view's own keys (find, fit) work from the canvas's toolbar
        // too: `/` right after pressing Fit finds a node. What edits the
        // graph (Delete, N, L) stays the canvas's.
        let viewing = !command && matches!(key.as_str(), "/" | "f" | "F") && on_toolbar(&event);
        if !anywhere && !viewing && !on_canvas(&event) {
            return;
        }
        let handled = match (command, key.as_str()) {
            (true, "z" | "Z") if event.shift_key() => {
                super::undo_notice::redo(editor);
                keep_focus(editor, None);
                true
            }
            (true, "z" | "Z") => {
                super::undo_notice::undo(editor);
                keep_focus(editor, None);
                true
            }
            (true, "y" | "Y") => {
                super::undo_notice::redo(editor);
                keep_focus(editor, None);
                true
            }
            (true, "d" | "D") => {
                duplicate_selection(editor);
                true
            }
            (true, "g" | "G") if editor.can_edit => {
                if event.shift_key() {
                    super::groups::ungroup_selection(editor);
                } else {
                    super::groups::frame_selection(editor);
                }
                true
            }
            (true, "a" | "A") => {
                let all = editor
                    .nodes
                    .with_untracked(|nodes| nodes.iter().map(|n| n.id.get_value()).collect());
                editor.selected.set(all);
                true
            }
            (false, "Delete" | "Backspace") => {
                delete_selection(editor);
                true
            }
            (false, "f" | "F") => {
                let (width, height) = gestures.size();
                editor.fit(width, height);
                true
            }
            (false, "n" | "N") if editor.can_edit => {
                super::notes::add_note_in_view(editor, gestures.size());
                true
            }
            (false, "/") => {
                gestures.finding.set(true);
                true
            }
            (false, "l" | "L") => {
                auto_layout(editor, gestures);
                true
            }
            (false, "?") => {
                help.update(|shown| *shown = !*shown);
                true
            }
            (false, "Escape") => {
                help.set(false);
                gestures.menu.set(None);
                // From the inspector's buttons (an Insert chip, a toggle),
                // as from its fields: back to the node. Clearing the
                // selection there took the form, and the focus with it,
                // to the page's body.
                let from_inspector = in_inspector(&event);
                if !(from_inspector && back_to_the_node(editor)) {
                    editor.selected.set(BTreeSet::new());
                    editor.selected_edge.set(None);
                    if from_inspector {
                        crate::components::focus_first(".editor-canvas");
                    }
                }
                true
            }
            _ => false,
        };
        if handled {
            event.prevent_default();
        }
    });
    let copying = window_event_listener(ev::copy, move |event: ev::ClipboardEvent| {
        if !on_canvas(&event) {
            return;
        }
        let fragment = model::copy(&editor.document(), &editor.selected.get_untracked());
        if fragment.nodes.is_empty() {
            return;
        }
        if let (Some(data), Ok(text)) = (
            event.clipboard_data(),
            serde_json::to_string_pretty(&fragment),
        ) {
            let _ = data.set_data("text/plain", &text);
            event.prevent_default();
        }
    });
    let pasting = window_event_listener(ev::paste, move |event: ev::ClipboardEvent| {
        if !on_canvas(&event) || !editor.can_edit {
            return;
        }
        let text = event
            .clipboard_data()
            .and_then(|data| data.get_data("text/plain").ok())
            .unwrap_or_default();
        let at = gestures.pointer_in_world(editor.viewport.get_untracked());
        if paste_text(editor, &text, at) {
            event.prevent_default();
        }
    });
    on_cleanup(move || {
        keys.remove();
        copying.remove();
        pasting.remove();
    });
}

/// The list of shortcuts, over the canvas.
#[component]
pub fn HelpOverlay(shown: RwSignal<bool>) -> impl IntoView {
    // A modal dialog: the focus goes into it (onto its list, so the arrows
    // and Page Down scroll it), stays in it, and goes back where it was (a
    // node, the canvas) when it closes (Escape, Close, a click beside it).
    // The node that had the focus, by its id (an element is not `Send`,
    // and the server renders this too).
    let returns_to = StoredValue::new(None::<String>);
    let close = move || {
        shown.set(false);
        // Still drawn (not deleted meanwhile, not culled), else the canvas.
        let back = returns_to
            .try_get_value()
            .flatten()
            .map(|id| format!(".canvas-node[data-node=\"{id}\"]"))
            .filter(|node| document().query_selector(node).ok().flatten().is_some());
        crate::components::focus_first(back.as_deref().unwrap_or(".editor-canvas"));
    };
    let on_key = move |event: ev::KeyboardEvent| match event.key().as_str() {
        "Escape" | "?" => {
            event.prevent_default();
            event.stop_propagation();
            close();
        }
        "Tab" => {
            // Close is the one stop: the focus never leaves for the page.
            event.prevent_default();
            crate::components::focus_first(".help-card .help-close");
        }
        _ => {}
    };
    move || {
        shown.get().then(|| {
            #[cfg(feature = "hydrate")]
            returns_to.set_value(
                document()
                    .active_element()
                    .filter(|element| element.class_list().contains("canvas-node"))
                    .and_then(|element| element.get_attribute("data-node")),
            );
            let card = NodeRef::<leptos::html::Div>::new();
            crate::components::focus_when_drawn(card);
            view! {
                <div class="help-overlay" role="dialog" aria-modal="true" aria-labelledby="help-title"
                    on:click=move |_| close() on:keydown=on_key>
                    <div class="help-card" tabindex="-1" node_ref=card data-testid="help"
                        on:click=|event| event.stop_propagation()>
                        <header class="help-head">
                            <h2 id="help-title">"Keyboard and mouse"</h2>
                            <button class="button help-close" type="button" on:click=move |_| close()>"Close"</button>
                        </header>
                        <dl class="help-list">
                            {SHORTCUTS
                                .iter()
                                .map(|(keys, what)| view! { <dt>{*keys}</dt><dd>{*what}</dd> })
                                .collect_view()}
                        </dl>
                    </div>
                </div>
            }
        })
    }
}
