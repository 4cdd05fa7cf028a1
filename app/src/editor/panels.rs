//! The editor's two side panels, the node kinds and the inspector, and
//! their buttons on the canvas's toolbar.
//!
//! Both fold away for room, as this browser last left them. On a narrow
//! window (1180 px or less: a 1024 px laptop) the canvas comes first:
//! the node kinds are a rail of icons that opens over the canvas with the
//! focus in it (its search button, Tab, F6), and an inspector nobody has
//! folded or pinned
//! shows only while there is something to edit: a selection, or a problem
//! that stops the graph from running. The rule itself is CSS (the same
//! page on the server and in the browser, no flash as it hydrates); the
//! buttons ask the window which side of it they are on.

use leptos::prelude::*;

use super::layout_memory;
use super::state::Editor;

/// The width at or under which the editor is narrow; the same number as
/// the stylesheet's `@media (max-width: 1180px)`.
const NARROW: &str = "(max-width: 1180px)";

/// Whether the palette and the inspector are shown.
#[derive(Clone, Copy)]
pub struct Panels {
    pub palette: RwSignal<bool>,
    /// The inspector as a person set it with its button (`None`: never,
    /// so it follows the selection on a narrow window).
    pub inspector: RwSignal<Option<bool>>,
    /// Whether the window is narrow (known once hydrated).
    narrow: RwSignal<bool>,
}

impl Panels {
    /// The panels as this browser last left them, on any graph.
    pub fn remembered() -> Panels {
        let panels = Panels {
            palette: RwSignal::new(true),
            inspector: RwSignal::new(None),
            narrow: RwSignal::new(false),
        };
        layout_memory::remember_bool(panels.palette, |layout| &mut layout.palette);
        layout_memory::remember_choice(panels.inspector, |layout| &mut layout.inspector);
        #[cfg(feature = "hydrate")]
        {
            let measure = move || {
                let narrow = window()
                    .match_media(NARROW)
                    .ok()
                    .flatten()
                    .is_some_and(|query| query.matches());
                if panels.narrow.try_get_untracked() != Some(narrow) {
                    let _ = panels.narrow.try_set(narrow);
                }
            };
            Effect::new(move |_| measure());
            let listener = window_event_listener(leptos::ev::resize, move |_| measure());
            on_cleanup(move || listener.remove());
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = NARROW;
        panels
    }

    /// Whether nothing is selected and nothing stops the graph from
    /// running: on a narrow window an inspector left to itself goes.
    pub fn idle(editor: Editor) -> bool {
        Panels::nothing_selected(editor) && editor.errors.get() == 0
    }

    /// Whether no node and no edge is selected (tracked).
    fn nothing_selected(editor: Editor) -> bool {
        editor.selected.with(|selected| selected.is_empty())
            && editor.selected_edge.with(Option::is_none)
    }

    /// Shows the inspector folded away: as it is left to itself again (on
    /// a narrow window, while there is something to edit).
    pub fn show_inspector(self) {
        if self.inspector.get_untracked() == Some(false) {
            self.inspector.set(None);
        }
    }

    /// Whether the inspector is on screen.
    fn inspector_shown(self, editor: Editor) -> bool {
        self.inspector
            .get()
            .unwrap_or_else(|| !self.narrow.get() || !Panels::idle(editor))
    }
}

/// On a narrow window the open palette lies over the canvas's left edge,
/// and the canvas's tools and the run panel's tabs step aside for it
/// (`main.css`). A press on one of those would take the focus from the
/// palette, which would close, and they would step back under the pointer
/// before the press ended: the click would land on nothing (a Note
/// pressed added none). Such a press leaves the focus where it is, so the
/// click lands where it was aimed.
pub fn keep_palette_open(event: &leptos::ev::MouseEvent) {
    use wasm_bindgen::JsCast;
    let stepped_aside = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|target| {
            target
                .closest(".editor-toolbar, .run-panel-bar")
                .ok()
                .flatten()
        })
        .is_some();
    if !stepped_aside {
        return;
    }
    let narrow = window()
        .match_media(NARROW)
        .ok()
        .flatten()
        .is_some_and(|query| query.matches());
    let open = document()
        .query_selector(".editor > .palette:focus-within")
        .ok()
        .flatten()
        .is_some();
    if narrow && open {
        event.prevent_default();
    }
}

/// The toolbar's button that folds the node kinds away, or back.
#[component]
pub fn PaletteToggle(panels: Panels) -> impl IntoView {
    let shown = panels.palette;
    view! {
        <button class="tool" type="button" data-testid="toggle-palette" aria-label="Node kinds"
            title=move || if shown.get() { "Hide the node kinds" } else { "Show the node kinds" }
            aria-pressed=move || shown.get().to_string()
            on:click=move |_| shown.update(|shown| *shown = !*shown)>"◧"</button>
    }
}

/// The toolbar's button that folds the inspector away, or pins it open
/// (then it stays, selection or not, until folded again). While the
/// inspector is away with nothing selected, the button says what it would
/// show: the graph's settings (its limits, triggers, keys). Its name is
/// the same either way (a screen reader hears a button whose name changes
/// as another button), its state in `aria-pressed`.
#[component]
pub fn InspectorToggle(panels: Panels, editor: Editor) -> impl IntoView {
    let shown = move || panels.inspector_shown(editor);
    let offers_settings = move || !shown() && Panels::nothing_selected(editor);
    // The inspector hidden, its problems are counted on its button: a
    // tryout's 20 warnings were in no sight at 1024 (the inspector of a
    // graph that can run goes while nothing is selected).
    let hidden_problems = move || {
        let (errors, warnings) = (editor.errors.get(), editor.warnings.get());
        (!shown() && errors + warnings > 0).then_some((errors, warnings))
    };
    // Its name holds what it shows, in order ("Graph settings 1"), as a
    // voice control user says it.
    let name = move || match hidden_problems() {
        Some((errors, warnings)) => format!(
            "Graph settings {}: {}, and the inspector",
            errors + warnings,
            super::problems::counted(errors, warnings)
        ),
        None => "Graph settings and inspector".to_string(),
    };
    view! {
        <button class="tool" type="button" data-testid="toggle-inspector"
            aria-label=name
            title=move || if shown() { "Hide the inspector" } else { "Show the inspector" }
            aria-pressed=move || shown().to_string()
            on:click=move |_| {
                let now = untrack(|| panels.inspector_shown(editor));
                panels.inspector.set(Some(!now));
            }>
            "◨"
            {move || offers_settings().then(|| view! { <span class="tool-text">" Graph settings"</span> })}
            {move || hidden_problems().map(|(errors, warnings)| view! {
                // Drawn by the style sheet from `data-count`: the button's
                // name says it, and its text is what it names.
                <span class="tool-count" class:tool-count-errors={errors > 0} data-testid="hidden-problems"
                    data-count=errors + warnings aria-hidden="true"></span>
            })}
        </button>
    }
}
