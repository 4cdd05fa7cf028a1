//! The kinds to add right where the pointer is: a double-click on the
//! canvas's background, or a wire dropped on it (then the node added is
//! led to from the wire's node, as in n8n or Langflow). Type to narrow,
//! the arrows choose, Enter (or a click) places it; Escape or a press
//! elsewhere closes it.

use heddle_engine::format::Position;
use heddle_engine::kinds::BuiltinKind;
use leptos::ev;
use leptos::prelude::*;

use super::gestures::Gestures;
use super::model::{self, NODE_HEIGHT, NODE_WIDTH};
use super::place::{matching, place, place_after};
use super::state::Editor;

/// The kinds `query` lists, in the palette's order (models first), all of
/// them (the list scrolls; typing narrows it): after a wire, never a start
/// (nothing leads into one).
fn listed(query: &str, after_wire: bool) -> Vec<BuiltinKind> {
    matching(query)
        .into_iter()
        .filter(|kind| !(after_wire && *kind == BuiltinKind::Start))
        .collect()
}

/// The list's width on screen (`.quick-add` in the style, its padding
/// and border included).
const WIDTH: f64 = 280.0;

/// Where the list is drawn for the point `(x, y)` in a canvas of `size`:
/// under the point, or above it in the canvas's lower half, and left of
/// it by its right edge; never out of the canvas (a long list scrolls).
fn placed(x: f64, y: f64, (width, height): (f64, f64)) -> String {
    const MARGIN: f64 = 8.0;
    // Beside the point, not on it: the end of a wire dropped there shows.
    let left = (x + 12.0).min(width - WIDTH - MARGIN).max(MARGIN);
    if y > height / 2.0 {
        let bottom = (height - y).max(MARGIN);
        let room = (height - bottom - MARGIN).max(0.0);
        format!("left: {left}px; bottom: {bottom}px; max-height: {room}px")
    } else {
        let top = y.max(MARGIN);
        let room = (height - top - MARGIN).max(0.0);
        format!("left: {left}px; top: {top}px; max-height: {room}px")
    }
}

#[component]
pub fn QuickAddBox(editor: Editor, gestures: Gestures) -> impl IntoView {
    let open = gestures.quick;
    let query = RwSignal::new(String::new());
    // The kind Enter places: the first listed until the arrows move.
    let active = RwSignal::new(0usize);
    // However it closed (a choice, Escape, a press elsewhere), it opens
    // again with nothing typed.
    Effect::new(move |_| {
        if open.with(Option::is_none) {
            query.set(String::new());
            active.set(0);
        }
    });
    let close = move || gestures.close_quick();
    let choose = move |kind: &str| {
        if let Some(spot) = open.get_untracked() {
            match spot.from {
                // The wire's end is the new node's input, on its left side.
                Some(from) => place_after(
                    editor,
                    kind,
                    Position {
                        x: spot.at.x.round(),
                        y: (spot.at.y - NODE_HEIGHT / 2.0).round(),
                    },
                    from,
                ),
                None => place(
                    editor,
                    kind,
                    Position {
                        x: (spot.at.x - NODE_WIDTH / 2.0).round(),
                        y: (spot.at.y - NODE_HEIGHT / 2.0).round(),
                    },
                ),
            }
        }
        close();
    };
    let input = NodeRef::<leptos::html::Input>::new();
    // Opened by a double-click or a drop: typing goes straight into the
    // search.
    Effect::new(move |_| {
        if let Some(input) = input.get() {
            let _ = input.focus();
        }
    });
    move || {
        open.get().map(|spot| {
            let after_wire = spot.from.is_some();
            let option_id = |at: usize| format!("quick-add-{at}");
            let style = placed(spot.x, spot.y, gestures.size());
            let keys = move |event: ev::KeyboardEvent| {
                let count = query.with_untracked(|q| listed(q, after_wire).len());
                match event.key().as_str() {
                    "Enter" => {
                        event.prevent_default();
                        let kind = query
                            .with_untracked(|q| listed(q, after_wire))
                            .get(active.get_untracked())
                            .copied();
                        if let Some(kind) = kind {
                            choose(kind.name());
                        }
                    }
                    "ArrowDown" | "ArrowUp" if count > 0 => {
                        event.prevent_default();
                        let step = if event.key() == "ArrowDown" { 1 } else { count - 1 };
                        active.update(|at| *at = (*at + step) % count);
                        let id = option_id(active.get_untracked());
                        if let Some(option) = document().get_element_by_id(&id) {
                            let options = web_sys::ScrollIntoViewOptions::new();
                            options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                            option.scroll_into_view_with_scroll_into_view_options(&options);
                        }
                    }
                    "Escape" => {
                        event.prevent_default();
                        event.stop_propagation();
                        close();
                        // The keys go on from the canvas, not from nowhere.
                        if let Some(canvas) = gestures.canvas.get_untracked() {
                            let _ = canvas.focus();
                        }
                    }
                    _ => {}
                }
            };
            // After a node that chooses its way on, the route the new node
            // will be on, as the edge will take it.
            let heading = match &spot.from {
                Some(from) => {
                    let name = editor.name_of(from.as_str());
                    let nobody = heddle_engine::NodeId::from("");
                    match model::branch(&editor.document(), from, &nobody) {
                        model::Branch::Route(route) => format!("Add after “{name}” on {route}"),
                        _ => format!("Add after “{name}”"),
                    }
                }
                None => "Add a node".to_string(),
            };
            view! {
                <div
                    class="quick-add"
                    style=style
                    on:pointerdown=|event| event.stop_propagation()
                >
                    <input
                        node_ref=input
                        type="search"
                        placeholder=format!("{heading}…")
                        aria-label=heading
                        role="combobox"
                        aria-expanded="true"
                        aria-controls="quick-add-kinds"
                        aria-autocomplete="list"
                        aria-activedescendant=move || option_id(active.get())
                        prop:value=move || query.get()
                        on:input=move |event| {
                            query.set(event_target_value(&event));
                            active.set(0);
                        }
                        on:keydown=keys
                    />
                    <ul id="quick-add-kinds" role="listbox" aria-label="Node kinds">
                        {move || {
                            query.with(|q| listed(q, after_wire)).into_iter().enumerate().map(|(at, kind)| {
                                view! {
                                    <li
                                        id=option_id(at)
                                        role="option"
                                        aria-selected=move || (active.get() == at).to_string()
                                        class:active=move || active.get() == at
                                        on:click=move |_| choose(kind.name())
                                        on:pointerenter=move |_| active.set(at)
                                    >
                                        <strong>{kind.name()}</strong>
                                        <span>{kind.summary()}</span>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_opens_toward_the_canvas_middle_and_stays_inside() {
        let canvas = (1000.0, 600.0);
        assert_eq!(
            placed(100.0, 100.0, canvas),
            "left: 112px; top: 100px; max-height: 492px"
        );
        assert_eq!(
            placed(990.0, 590.0, canvas),
            "left: 712px; bottom: 10px; max-height: 582px"
        );
        // A canvas smaller than the list: its left edge shows.
        assert!(placed(50.0, 50.0, (200.0, 100.0)).starts_with("left: 8px;"));
        assert!(placed(f64::NAN, f64::NAN, canvas).contains("max-height"));
    }

    #[test]
    fn after_a_wire_a_start_is_never_offered() {
        assert!(listed("start", false).contains(&BuiltinKind::Start));
        assert!(!listed("start", true).contains(&BuiltinKind::Start));
        assert!(!listed("", true).contains(&BuiltinKind::Start));
        assert_eq!(listed("", true).len(), BuiltinKind::ALL.len() - 1);
        assert_eq!(listed("llm", true).first(), Some(&BuiltinKind::Llm));
        // Nothing typed: the models first, as the palette lists them.
        assert_eq!(
            listed("", true)[..4],
            [
                BuiltinKind::Llm,
                BuiltinKind::Router,
                BuiltinKind::Agent,
                BuiltinKind::Memory
            ]
        );
    }
}
