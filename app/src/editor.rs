//! The visual editor: a palette, the canvas, and an inspector with the
//! problems list, around one [`Editor`] state. Editing is for owners and
//! editors; viewers get the same canvas to pan, zoom, select and read.
//!
//! - [`model`]: the rules (ids, connections, copy/paste, undo history,
//!   Mermaid), plain functions over the document.
//! - [`layout`]: the layered auto-layout.
//! - [`state`]: the reactive state: a signal per node position.
//! - [`canvas`]: nodes, edges and the pointer gestures.
//! - [`palette`], [`inspector`], [`problems`]: the panels; [`config_form`]:
//!   a node's settings as a form generated from its kind's schema
//!   ([`condition`] checks a condition as it is typed);
//!   [`channels`]: the state channels as a form; [`rename`]: a channel
//!   renamed everywhere it is used.
//! - [`keys`]: shortcuts, the clipboard and the help overlay.
//! - [`persist`]: drafts in the browser, autosave, conflicts.
//! - [`history`]: the version history panel.
//! - [`minimap`], [`quick_add`], [`notes`], [`groups`]: the overview,
//!   double-click to add, sticky notes, frames around sets of nodes.
//! - [`kind_icon`]: a line icon per node kind.
//! - [`routing`]: where edges and their labels are drawn (loops apart);
//!   [`attr_keys`]: attribute names that hydrate without being written.
//! - [`node_menu`]: a node's context menu; [`resize`]: the view stays
//!   centred when the canvas changes size.

pub mod attr_keys;
pub mod canvas;
pub mod channel_schema;
pub mod channels;
pub mod condition;
pub mod config_form;
pub mod connect_menu;
pub mod edge_form;
pub mod edge_keys;
pub mod edit_announcer;
pub mod edit_words;
pub mod find_node;
pub mod flow_order;
pub mod gestures;
pub mod group_drop;
pub mod group_form;
pub mod group_room;
pub mod groups;
pub mod history;
pub mod idle;
pub mod inspector;
pub mod keyboard_nav;
pub mod keys;
pub mod kind_icon;
pub mod layout;
pub mod layout_memory;
pub mod minimap;
pub mod model;
pub mod node_keys;
pub mod node_menu;
pub mod node_names;
pub mod note_places;
pub mod notes;
pub mod palette;
pub mod palette_tip;
pub mod panels;
pub mod persist;
pub mod place;
pub mod pressed;
pub mod problem_announcer;
pub mod problems;
pub mod quick_add;
pub mod regions;
pub mod rejoin;
pub mod rename;
pub mod resize;
pub mod retention;
pub mod route_rename;
pub mod routing;
pub mod run_version;
pub mod save_key;
pub mod schema_edit;
pub mod splice;
pub mod start_framing;
pub mod state;
pub mod subgraph_source;
pub mod typing;
pub mod undo_notice;
pub mod view_memory;

use leptos::prelude::*;

use crate::catalog::get_catalog;

use self::canvas::Canvas;
use self::gestures::Gestures;
use self::inspector::Inspector;
use self::palette::Palette;
use self::panels::{InspectorToggle, PaletteToggle, Panels};
use self::persist::{Persistence, SaveState};
use self::problems::{ProblemList, problems};
use self::state::Editor;
use crate::live::RunView;

/// The editor, with `aside` (the share panel, details) under the inspector.
/// Whether the page was opened right after its graph was made (its address
/// carries [`heddle_wire::graphs::JUST_MADE`]); the mark is dropped from
/// the address, so a reload or a link copied is a plain visit.
#[cfg(feature = "hydrate")]
fn opened_just_made() -> bool {
    let location = window().location();
    let search = location.search().unwrap_or_default();
    let marked = search
        .trim_start_matches('?')
        .split('&')
        .any(|pair| pair == heddle_wire::graphs::JUST_MADE);
    if marked
        && let Ok(path) = location.pathname()
        && let Ok(history) = window().history()
    {
        let state = history.state().unwrap_or(wasm_bindgen::JsValue::NULL);
        let _ = history.replace_state_with_url(&state, "", Some(&path));
    }
    marked
}

#[component]
pub fn GraphEditor(
    editor: Editor,
    persistence: Persistence,
    graph_id: String,
    live: RwSignal<RunView>,
    /// What goes under the canvas (the run panel).
    #[prop(into)]
    dock: ViewFn,
    /// Starts a run that pauses before a node ("Run to here" in a node's
    /// menu); no such item without it.
    #[prop(default = None)]
    run_to: Option<Callback<heddle_engine::NodeId>>,
    /// The graph's published version, marked in the version history.
    #[prop(optional)]
    publication: Option<crate::publishing::Live>,
    children: Children,
) -> impl IntoView {
    let gestures = Gestures::new();
    let history_id = graph_id.clone();
    let version_graph_id = graph_id.clone();
    let help = RwSignal::new(false);
    // The server's tools and models: the pickers list them, and validation
    // knows exactly what the server runs with.
    let catalog = Resource::new(|| (), |_| get_catalog());
    let problems = problems(editor, catalog);
    Effect::new(move |_| {
        let (errors, all) = problems.with(|problems| {
            let errors = problems
                .iter()
                .filter(|problem| problem.severity == heddle_engine::validate::Severity::Error)
                .count();
            (errors, problems.len())
        });
        if editor.errors.get_untracked() != errors {
            editor.errors.set(errors);
        }
        if editor.warnings.get_untracked() != all - errors {
            editor.warnings.set(all - errors);
        }
    });
    keys::install(editor, gestures, help);
    resize::keep_centred(editor, gestures, graph_id.clone());
    #[cfg(feature = "hydrate")]
    view_memory::remember(editor, gestures, graph_id.clone());
    persistence.start();
    save_key::install(persistence);
    // A graph saved without positions is laid out when it opens. The view
    // is fitted to the canvas when the browser first reports its size
    // (`resize.rs`): asking for it here would lay the page out mid-hydration.
    let unplaced = editor.opened_unplaced;
    #[cfg(feature = "hydrate")]
    Effect::new(move |done: Option<()>| {
        if done.is_none() && unplaced && editor.can_edit {
            keys::lay_out(editor);
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = unplaced;
    // Where building starts takes the focus, not the page's top: an empty
    // graph's first step is to find a kind (the palette's search); a graph
    // just made from a template or an example is built on from its canvas.
    #[cfg(feature = "hydrate")]
    Effect::new(move |done: Option<()>| {
        if done.is_some() {
            return;
        }
        let just_made = opened_just_made();
        if editor.can_edit && editor.nodes.with_untracked(Vec::is_empty) {
            crate::components::focus_once_shown(".palette-search".into(), 120);
        } else if just_made {
            crate::components::focus_once_shown(".editor-canvas".into(), 120);
        }
    });

    // The side panels fold away for room (the canvas frames itself again).
    let panels = Panels::remembered();
    // Editing a node (Enter on it, a double click) shows a folded inspector.
    provide_context(panels);
    let palette_shown = move || editor.can_edit && panels.palette.get();
    view! {
        <div class="editor" class:read-only=!editor.can_edit
            on:mousedown=|event| panels::keep_palette_open(&event)
            class:inspector-auto=move || panels.inspector.get().is_none()
            class:inspector-idle=move || Panels::idle(editor)>
            {move || palette_shown().then(|| view! { <Palette editor gestures /> }.into_any())}
            <div class="editor-stage">
                <Toolbar editor gestures help graph_id panels />
                <ConflictBanner persistence />
                <div class="editor-viewport">
                    {view! { <Canvas editor gestures live problems /> }.into_any()}
                    <minimap::Minimap editor gestures />
                    <start_framing::StartFraming editor gestures />
                    <undo_notice::UndoNotice editor />
                    <keys::HelpOverlay shown=help />
                    <node_menu::NodeMenu editor open=gestures.menu run_to
                        duplicate=keys::duplicate_selection delete=keys::delete_selection />
                    <connect_menu::ConnectMenu editor from=gestures.connect />
                    <find_node::FindNode editor open=gestures.finding />
                    <run_version::RunVersion live persistence graph_id=version_graph_id />
                    <problem_announcer::ProblemAnnouncer editor problems />
                    <edit_announcer::EditAnnouncer editor />
                </div>
                {dock.run()}
            </div>
            <aside class="inspector" aria-label="Inspector" tabindex="-1" data-region-stop="" hidden=move || panels.inspector.get() == Some(false)>
                <Inspector editor gestures catalog problems />
                <ProblemList editor problems />
                <history::VersionHistory editor persistence graph_id=history_id can_edit=editor.can_edit live=publication />
                {children()}
            </aside>
        </div>
    }
    .into_any()
}

#[component]
fn Toolbar(
    editor: Editor,
    gestures: Gestures,
    help: RwSignal<bool>,
    graph_id: String,
    panels: Panels,
) -> impl IntoView {
    let zoom = move |factor: f64| {
        let (width, height) = gestures.size();
        editor
            .viewport
            .update(|v| *v = v.zoom_at(factor, width / 2.0, height / 2.0));
    };
    let mermaid = RwSignal::new(None::<String>);
    let percent = move || format!("{:.0}%", editor.viewport.get().zoom * 100.0);
    view! {
        <div class="editor-toolbar" role="toolbar" aria-label="Canvas tools">
            {editor.can_edit.then(|| view! {
                <PaletteToggle panels />
                <span class="tool-gap"></span>
                <button class="tool" type="button" title="Undo (Ctrl+Z)" aria-label="Undo" on:click=move |_| undo_notice::undo(editor)>"↶"</button>
                <button class="tool" type="button" title="Redo (Ctrl+Y)" aria-label="Redo" on:click=move |_| undo_notice::redo(editor)>"↷"</button>
                <span class="tool-gap"></span>
            })}
            <button class="tool" type="button" title="Zoom out" aria-label="Zoom out" on:click=move |_| zoom(1.0 / 1.2)>"−"</button>
            <span class="tool-zoom" data-testid="zoom">{percent}</span>
            <button class="tool" type="button" title="Zoom in" aria-label="Zoom in" on:click=move |_| zoom(1.2)>"+"</button>
            <button class="tool" type="button" title="Fit to view (F)" on:click=move |_| { let (w, h) = gestures.size(); editor.fit(w, h); }>"Fit"</button>
            <button class="tool" type="button" title="Find a node by name (/)" data-testid="find" aria-keyshortcuts="/" on:click=move |_| gestures.finding.set(true)>"Find"</button>
            {editor.can_edit.then(|| view! {
                <button class="tool" type="button" title="Lay out left to right (L)" on:click=move |_| keys::auto_layout(editor, gestures)>"Layout"</button>
                <button class="tool" type="button" title="Add a sticky note (N)" on:click=move |_| notes::add_note_in_view(editor, gestures.size())>"Note"</button>
            })}
            <span class="tool-gap tool-aside"></span>
            <a class="tool tool-aside" href=format!("/api/v1/graphs/{graph_id}/export") download title="Download the saved graph as JSON">"Export"</a>
            <button class="tool tool-aside" type="button" title="The graph as a Mermaid diagram" on:click=move |_| {
                mermaid.update(|text| *text = match text { Some(_) => None, None => Some(model::mermaid(&editor.document())) });
            }>"Mermaid"</button>
            <button class="tool" type="button" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts" on:click=move |_| help.update(|shown| *shown = !*shown)>"?"</button>
            <span class="tool-gap"></span>
            <InspectorToggle panels editor />
        </div>
        {move || mermaid.get().map(|text| view! {
            <div class="mermaid-panel">
                <div class="mermaid-head">
                    <strong>"Mermaid"</strong>
                    <button class="button button-small" type="button" on:click=move |_| mermaid.set(None)>"Close"</button>
                </div>
                <textarea class="mono" readonly rows="10" prop:value=text></textarea>
            </div>
        })}
    }
}

#[component]
fn ConflictBanner(persistence: Persistence) -> impl IntoView {
    move || match persistence.status.get() {
        SaveState::Conflict { theirs } => Some(view! {
            <div class="conflict" role="alert" data-testid="conflict">
                <p>
                    <strong>"Someone else saved this graph (version " {theirs} ") while you were editing."</strong>
                    " Your changes are kept here and in this browser; nothing was overwritten."
                </p>
                <div class="conflict-actions">
                    <button class="button" type="button" on:click=move |_| persistence.reload_theirs()>"Reload theirs"</button>
                    <button class="button button-primary" type="button" on:click=move |_| persistence.keep_mine_as_copy()>"Keep mine as a copy"</button>
                </div>
            </div>
        }),
        _ => None,
    }
}
