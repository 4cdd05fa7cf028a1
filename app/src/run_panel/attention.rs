//! Where the person is at work: on the canvas, or in the run panel. A
//! conversation takes most of the stage (the chat's 60%), which leaves a
//! small window's canvas a strip; so while the person works on the graph
//! (a press or the focus on the canvas) the chat yields, down to its box to
//! type in and its last lines, and it takes its room back as soon as they
//! come back to it (a press let go or the focus in the panel) or a run
//! starts or pauses for them. A height the person dragged the panel to is theirs and
//! stays (`PanelGrip`): only the panel's own heights yield.

use leptos::prelude::*;

/// Whether the person is at work on the canvas rather than in the panel
/// `section`; false until they press or focus something on the canvas.
pub fn on_canvas(section: NodeRef<leptos::html::Section>) -> RwSignal<bool> {
    let on_canvas = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let within_panel = move |node: &web_sys::Node| {
            section
                .get_untracked()
                .is_some_and(|panel| panel.contains(Some(node)))
        };
        let attend = move |target: Option<web_sys::EventTarget>| {
            let Some(element) =
                target.and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            else {
                return;
            };
            let working = if within_panel(&element) {
                false
            } else if element.closest(".editor-viewport").ok().flatten().is_some() {
                true
            } else {
                // Elsewhere (the inspector, the page's header): as it was.
                return;
            };
            if on_canvas.try_get_untracked() == Some(working) {
                return;
            }
            let _ = on_canvas.try_set(working);
        };
        // A press in a yielding panel takes its room back only as it is
        // let go: grown at the press, the panel moved its tabs from under
        // the pointer, and the click that was to open one opened none.
        let held_in_panel = StoredValue::new(false);
        let in_panel = move |target: Option<web_sys::EventTarget>| {
            target
                .and_then(|target| target.dyn_into::<web_sys::Node>().ok())
                .is_some_and(|node| within_panel(&node))
        };
        let pressed = window_event_listener(leptos::ev::pointerdown, move |event| {
            if in_panel(event.target()) {
                held_in_panel.set_value(true);
            } else {
                attend(event.target());
            }
        });
        let let_go = move || {
            if held_in_panel.try_get_value() == Some(true) {
                held_in_panel.set_value(false);
                // After the click this release makes has reached its target.
                set_timeout(
                    move || {
                        if on_canvas.try_get_untracked() == Some(true) {
                            let _ = on_canvas.try_set(false);
                        }
                    },
                    std::time::Duration::ZERO,
                );
            }
        };
        let released = window_event_listener(leptos::ev::pointerup, move |_| let_go());
        let cancelled = window_event_listener(leptos::ev::pointercancel, move |_| let_go());
        // The focus a press in the panel gives waits for its release too;
        // the focus brought there by the keyboard counts at once.
        let focused = window_event_listener(leptos::ev::focusin, move |event| {
            if !held_in_panel.try_get_value().unwrap_or(false) {
                attend(event.target());
            }
        });
        on_cleanup(move || {
            pressed.remove();
            released.remove();
            cancelled.remove();
            focused.remove();
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = section;
    on_canvas
}
