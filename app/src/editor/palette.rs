//! The palette: every node kind, grouped (models, tools, people, flow,
//! state), each with its icon and what it does in a line, and a search box
//! that finds kinds by name or by what they do. Drag a kind onto the canvas
//! to place it, or from the keyboard: Enter on a kind (or in the search,
//! for the first match) adds it beside the selected node, else mid-view,
//! never on top of another.

use heddle_engine::kinds::{BuiltinKind, KindGroup};
use leptos::ev;
use leptos::prelude::*;

use super::gestures::{Drag, Gestures};
use super::kind_icon::KindIcon;
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::palette_tip::{PaletteTip, Tip, tip_for};
use super::place::{matching, place_free};
use super::state::Editor;

#[component]
pub fn Palette(editor: Editor, gestures: Gestures) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let kinds = move || query.with(|query| matching(query));
    let place_first = move |event: ev::KeyboardEvent| {
        // Escape leaves the search for the canvas (a rail folds again): on
        // the node just added (the one selected), so the arrows, C and
        // Enter go on from it; else the canvas itself.
        if event.key() == "Escape" {
            query.set(String::new());
            let selected = editor.selected.get_untracked();
            match (selected.first(), selected.len()) {
                (Some(id), 1) => super::connect_menu::focus_node(editor, id),
                _ => {
                    if let Some(canvas) = gestures.canvas.get_untracked() {
                        let _ = canvas.focus();
                    }
                }
            }
            return;
        }
        // Ctrl+Enter is Run's, never an add.
        if event.key() != "Enter" || event.ctrl_key() || event.meta_key() || !editor.can_edit {
            return;
        }
        if let Some(kind) = kinds().first() {
            place_undragged(editor, gestures, kind.name());
            // The search is done: the next kind is typed afresh, the
            // focus staying here.
            query.set(String::new());
        }
    };
    let search = NodeRef::<leptos::html::Input>::new();
    let tip = RwSignal::new(None::<Tip>);
    // The kinds are one Tab stop (the one last focused, else the first
    // shown), the arrows going from kind to kind: 16 stops of their own
    // stood between the search and the canvas.
    let focused = RwSignal::new(None::<&'static str>);
    let roving = Memo::new(move |_| {
        let shown = kinds();
        focused
            .get()
            .filter(|kind| shown.iter().any(|shown| shown.name() == *kind))
            .or_else(|| shown.first().map(|kind| kind.name()))
    });
    let rove = Rove { focused, roving };
    view! {
        <aside class="palette" aria-label="Node kinds"
            // A mouse over a kind says what it does (palette_tip.rs); a
            // press, a scroll or the pointer gone takes the tip away.
            on:pointerover=move |event: ev::PointerEvent| {
                let next = (event.pointer_type() == "mouse")
                    .then(|| tip_for(event.target()))
                    .flatten();
                if tip.get_untracked() != next {
                    tip.set(next);
                }
            }
            on:pointerleave=move |_| tip.set(None)
            on:pointerdown=move |_| tip.set(None)
            on:scroll:capture=move |_| tip.set(None)>
            // The page's outline: the graph (h1), its panels (h2), the
            // kinds' groups (h3).
            <h2 class="visually-hidden">"Node kinds"</h2>
            // On a narrow window the kinds are a rail of icons: this opens
            // it, names and search, for the mouse (the keyboard opens it by
            // reaching the search, so the button is not a Tab stop).
            <button class="palette-open" type="button" tabindex="-1" aria-hidden="true"
                title="Show the node kinds' names, and search them"
                // Pressed, it does not take the focus itself: it gives it
                // to the search.
                on:mousedown=|event| event.prevent_default()
                on:click=move |_| {
                    if let Some(search) = search.get_untracked() {
                        let _ = search.focus();
                    }
                }>
                <svg viewBox="0 0 20 20" aria-hidden="true"><circle cx="8.5" cy="8.5" r="5.5"></circle><path d="M13 13l4.5 4.5"></path></svg>
            </button>
            <input
                node_ref=search
                class="palette-search"
                type="search"
                placeholder="Search nodes…"
                aria-label="Search node kinds"
                prop:value=move || query.get()
                on:input=move |event| query.set(event_target_value(&event))
                on:keydown=move |event: ev::KeyboardEvent| {
                    // Down from the search: to the kinds, the best match first.
                    if event.key() == "ArrowDown" {
                        event.prevent_default();
                        focus_kind(Step::First);
                        return;
                    }
                    place_first(event);
                }
            />
            {move || {
                let found = kinds();
                if query.with(|query| !query.trim().is_empty()) {
                    // A search: one list, best match first.
                    return view! { <div class="palette-list">{items(editor, gestures, rove, found)}</div> }.into_any();
                }
                KindGroup::ALL
                    .iter()
                    .map(|group| {
                        let members: Vec<BuiltinKind> =
                            found.iter().copied().filter(|kind| kind.group() == *group).collect();
                        view! {
                            <section class="palette-section" aria-label=group.as_str()>
                                <h3 class="palette-heading">{group.as_str()}</h3>
                                <div class="palette-list">{items(editor, gestures, rove, members)}</div>
                            </section>
                        }
                    })
                    .collect_view()
                    .into_any()
            }}
            {move || kinds().is_empty().then(|| view! { <p class="empty-note">"No kind matches."</p> })}
            <Ghost gestures />
            <PaletteTip tip />
        </aside>
    }
}

/// Adds a kind without dragging it (Enter, Space, a click): beside the
/// selected node and joined after it (so a chain built this way runs left
/// to right), else mid-view, never on another node; the view follows it when it lands out of sight, taking
/// in the whole chain while that reads.
fn place_undragged(editor: Editor, gestures: Gestures, kind: &str) {
    let (width, height) = gestures.size();
    // What the palette, open over the canvas on a narrow window, hides
    // is not in view: "mid-view" and "in sight" are right of it.
    let left = covered_by_palette(gestures).clamp(0.0, width / 2.0);
    let center = editor
        .viewport
        .get_untracked()
        .to_world(left + (width - left) / 2.0, height / 2.0);
    place_free(editor, kind, center);
    let placed = editor
        .selected
        .with_untracked(|selected| selected.first().cloned());
    if let Some(id) = placed {
        editor.follow_added(&id, left, width, height);
    }
}

/// How much of the canvas's left the palette lies over (screen pixels):
/// none beside it on a wide window, its overhang while open over the
/// canvas on a narrow one (`main.css`).
fn covered_by_palette(gestures: Gestures) -> f64 {
    let Some(canvas) = gestures.canvas.get_untracked() else {
        return 0.0;
    };
    let Some(palette) = document()
        .query_selector(".editor > .palette")
        .ok()
        .flatten()
    else {
        return 0.0;
    };
    let covered =
        palette.get_bounding_client_rect().right() - canvas.get_bounding_client_rect().left();
    if covered.is_finite() {
        covered.max(0.0)
    } else {
        0.0
    }
}

/// The kinds' one Tab stop: the kind last focused, else the first shown.
#[derive(Clone, Copy)]
struct Rove {
    focused: RwSignal<Option<&'static str>>,
    roving: Memo<Option<&'static str>>,
}

/// Where an arrow key takes the focus among the kinds shown.
#[derive(Clone, Copy)]
enum Step {
    First,
    Last,
    Next,
    Previous,
}

/// Moves the focus among the palette's kinds, in the order drawn (the
/// groups one after the other); from the last, Down stays there.
fn focus_kind(step: Step) {
    use wasm_bindgen::JsCast;
    let Ok(items) = document().query_selector_all(".editor > .palette .palette-item") else {
        return;
    };
    let items: Vec<web_sys::HtmlElement> = (0..items.length())
        .filter_map(|i| items.item(i)?.dyn_into::<web_sys::HtmlElement>().ok())
        .collect();
    let active = document().active_element();
    let at = items.iter().position(|item| {
        active
            .as_ref()
            .is_some_and(|active| active == item.as_ref() as &web_sys::Element)
    });
    let next = match (step, at) {
        (Step::First, _) | (Step::Next | Step::Previous, None) => 0,
        (Step::Last, _) => items.len().saturating_sub(1),
        (Step::Next, Some(at)) => (at + 1).min(items.len().saturating_sub(1)),
        (Step::Previous, Some(at)) => at.saturating_sub(1),
    };
    if let Some(item) = items.get(next) {
        let _ = item.focus();
    }
}

/// A palette row per kind: drag it onto the canvas, or focus it and press
/// Enter (or Space) to add it. A row is a button named by its text (the
/// kind and what it does), not a list item: a list may hold only items.
/// The rows are one Tab stop; the arrows, Home and End go among them.
fn items(editor: Editor, gestures: Gestures, rove: Rove, kinds: Vec<BuiltinKind>) -> impl IntoView {
    kinds
        .into_iter()
        .map(|kind| {
            view! {
                <div
                    class=format!("palette-item kind-{}", kind.name())
                    data-kind=kind.name()
                    tabindex=move || editor.can_edit.then(|| {
                        if rove.roving.get() == Some(kind.name()) { "0" } else { "-1" }
                    })
                    role=editor.can_edit.then_some("button")
                    on:focus=move |_| rove.focused.set(Some(kind.name()))
                    on:keydown=move |event: ev::KeyboardEvent| {
                        let step = match event.key().as_str() {
                            "ArrowDown" | "ArrowRight" => Some(Step::Next),
                            "ArrowUp" | "ArrowLeft" => Some(Step::Previous),
                            "Home" => Some(Step::First),
                            "End" => Some(Step::Last),
                            _ => None,
                        };
                        if let Some(step) = step {
                            event.prevent_default();
                            focus_kind(step);
                            return;
                        }
                        if editor.can_edit && matches!(event.key().as_str(), "Enter" | " ") {
                            event.prevent_default();
                            place_undragged(editor, gestures, kind.name());
                        }
                    }
                    on:pointerdown=move |event: ev::PointerEvent| {
                        if event.button() != 0 {
                            return;
                        }
                        event.prevent_default();
                        super::gestures::commit_focused_field();
                        gestures.drag.set_value(Drag::Place { kind: kind.name().to_string() });
                    }
                    // Pressed and released on the kind, not dragged off it
                    // (a drop elsewhere clicks no kind): added as Enter adds it.
                    on:click=move |_| {
                        if editor.can_edit {
                            place_undragged(editor, gestures, kind.name());
                        }
                    }
                >
                    <KindIcon kind=kind.name() />
                    <span class="palette-text">
                        <span class="palette-name">{kind.name()}</span>
                        <span class="palette-summary">{kind.summary()}</span>
                    </span>
                </div>
            }
        })
        .collect_view()
}

/// The kind following the pointer while it is dragged over the canvas.
#[component]
fn Ghost(gestures: Gestures) -> impl IntoView {
    move || {
        gestures.ghost.get().map(|(kind, x, y)| {
            let style = format!(
                "left: {}px; top: {}px",
                x - NODE_WIDTH / 2.0,
                y - NODE_HEIGHT / 2.0
            );
            view! { <div class="palette-ghost" style=style>{kind}</div> }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::matching;

    #[test]
    fn search_finds_kinds_by_name_and_purpose() {
        assert_eq!(matching("").len(), 16);
        let names: Vec<&str> = matching("model").iter().map(|k| k.name()).collect();
        assert!(
            names.contains(&"llm") && names.contains(&"router"),
            "{names:?}"
        );
        assert_eq!(matching("fan")[0].name(), "fan_out");
        assert!(matching("zzz").is_empty());
        // "wait" is a kind's name, and a word in join's summary: the name wins.
        assert_eq!(matching("wait")[0].name(), "wait");
        assert_eq!(
            matching("t")[0].name(),
            "tools",
            "a name starting with it first"
        );
    }
}
