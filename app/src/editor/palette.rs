//! The palette: every node kind, grouped, with a search box. Drag a kind
//! onto the canvas to place it (or press Enter in the search to place the
//! first match in the middle of the view).

use heddle_engine::kinds::BuiltinKind;
use leptos::ev;
use leptos::prelude::*;

use super::canvas::{Drag, Gestures, place};
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::state::Editor;

/// The kinds matching `query` (name or summary), in palette order.
pub fn matching(query: &str) -> Vec<BuiltinKind> {
    let query = query.trim().to_lowercase();
    BuiltinKind::ALL
        .into_iter()
        .filter(|kind| {
            query.is_empty()
                || kind.name().contains(&query)
                || kind.summary().to_lowercase().contains(&query)
        })
        .collect()
}

#[component]
pub fn Palette(editor: Editor, gestures: Gestures) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let kinds = move || query.with(|query| matching(query));
    let place_first = move |event: ev::KeyboardEvent| {
        if event.key() != "Enter" {
            return;
        }
        if let Some(kind) = kinds().first() {
            let (width, height) = gestures.size();
            let center = editor
                .viewport
                .get_untracked()
                .to_world(width / 2.0, height / 2.0);
            place(
                editor,
                kind.name(),
                heddle_engine::format::Position {
                    x: (center.x - NODE_WIDTH / 2.0).round(),
                    y: (center.y - NODE_HEIGHT / 2.0).round(),
                },
            );
        }
    };
    view! {
        <aside class="palette" aria-label="Node kinds">
            <input
                class="palette-search"
                type="search"
                placeholder="Search nodes…"
                aria-label="Search node kinds"
                prop:value=move || query.get()
                on:input=move |event| query.set(event_target_value(&event))
                on:keydown=place_first
            />
            <ul class="palette-list">
                <For each=kinds key=|kind| kind.name() let:kind>
                    <li
                        class=format!("palette-item kind-{}", kind.name())
                        data-kind=kind.name()
                        title=kind.summary()
                        on:pointerdown=move |event: ev::PointerEvent| {
                            if event.button() != 0 {
                                return;
                            }
                            event.prevent_default();
                            gestures.drag.set_value(Drag::Place { kind: kind.name().to_string() });
                        }
                    >
                        <span class="palette-dot" aria-hidden="true"></span>
                        <span class="palette-name">{kind.name()}</span>
                        <span class="palette-group">{kind.group()}</span>
                    </li>
                </For>
            </ul>
            {move || kinds().is_empty().then(|| view! { <p class="empty-note">"No kind matches."</p> })}
            <Ghost gestures />
        </aside>
    }
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
    }
}
