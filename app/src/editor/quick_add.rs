//! Double-click the canvas's background to search the kinds right there:
//! type, then Enter (or click) places the first match where you clicked.

use heddle_engine::format::Position;
use leptos::ev;
use leptos::prelude::*;

use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::place::matching;
use super::place::place;
use super::state::Editor;

/// Where the quick-add box is open: the world point and the screen point
/// (relative to the canvas).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuickAdd {
    pub at: Position,
    pub x: f64,
    pub y: f64,
}

#[component]
pub fn QuickAddBox(editor: Editor, open: RwSignal<Option<QuickAdd>>) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let choose = move |kind: &str| {
        if let Some(spot) = open.get_untracked() {
            place(
                editor,
                kind,
                Position {
                    x: (spot.at.x - NODE_WIDTH / 2.0).round(),
                    y: (spot.at.y - NODE_HEIGHT / 2.0).round(),
                },
            );
        }
        open.set(None);
        query.set(String::new());
    };
    let input = NodeRef::<leptos::html::Input>::new();
    // Opened by a double-click: typing goes straight into the search.
    Effect::new(move |_| {
        if let Some(input) = input.get() {
            let _ = input.focus();
        }
    });
    move || {
        open.get().map(|spot| {
            let style = format!("left: {}px; top: {}px", spot.x, spot.y);
            let keys = move |event: ev::KeyboardEvent| match event.key().as_str() {
                "Enter" => {
                    if let Some(kind) = query.with_untracked(|q| matching(q)).first() {
                        choose(kind.name());
                    }
                }
                "Escape" => open.set(None),
                _ => {}
            };
            view! {
                <div class="quick-add" style=style on:pointerdown=|event| event.stop_propagation()>
                    <input
                        node_ref=input
                        type="search"
                        placeholder="Add a node…"
                        aria-label="Add a node"
                        prop:value=move || query.get()
                        on:input=move |event| query.set(event_target_value(&event))
                        on:keydown=keys
                    />
                    <ul>
                        {move || {
                            query.with(|q| matching(q)).into_iter().take(6).map(|kind| {
                                view! {
                                    <li>
                                        <button type="button" on:click=move |_| choose(kind.name())>
                                            <strong>{kind.name()}</strong>
                                            <span>{kind.summary()}</span>
                                        </button>
                                    </li>
                                }
                            }).collect_view()
                        }}
                    </ul>
                </div>
            }
        })
    }
}
