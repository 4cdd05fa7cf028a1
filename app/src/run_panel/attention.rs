//! Where the person is at work: on the canvas, or in the run panel. A
//! conversation takes most of the stage (the chat's 60%), which leaves a
//! small window's canvas a strip; so while the person works on the graph
//! (a press or the focus on the canvas) the chat yields, down to its box to
//! type in and its last lines, and it takes its room back as soon as they
//! come back to it (a press or the focus in the panel) or a run starts or
//! pauses for them. A height the person dragged the panel to is theirs and
//! stays (`PanelGrip`): only the panel's own heights yield.

use leptos::prelude::*;

/// Whether the person is at work on the canvas rather than in the panel
/// `section`; false until they press or focus something on the canvas.
pub fn on_canvas(section: NodeRef<leptos::html::Section>) -> RwSignal<bool> {
    let on_canvas = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let attend = move |target: Option<web_sys::EventTarget>| {
            let Some(element) =
                target.and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            else {
                return;
            };
            let in_panel = section
                .get_untracked()
                .is_some_and(|panel| panel.contains(Some(&element)));
            let working = if in_panel {
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
        let pressed =
            window_event_listener(leptos::ev::pointerdown, move |event| attend(event.target()));
        let focused =
            window_event_listener(leptos::ev::focusin, move |event| attend(event.target()));
        on_cleanup(move || {
            pressed.remove();
            focused.remove();
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = section;
    on_canvas
}
