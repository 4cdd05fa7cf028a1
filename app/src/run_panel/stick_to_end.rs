//! A conversation read to its end stays read to its end when its box
//! changes size: the chat yielding to the canvas, the panel dragged
//! shorter, the window resized. A box scrolled up to read something older
//! is left where it is.

use leptos::prelude::*;

/// Keeps `list` scrolled to its end across its size changes while it was
/// at its end before them.
pub fn stick_to_end(list: NodeRef<leptos::html::Ol>) {
    #[cfg(feature = "hydrate")]
    list.on_load(move |element| {
        use std::cell::Cell;
        use std::rc::Rc;

        use wasm_bindgen::JsCast;
        use wasm_bindgen::closure::Closure;

        let element: web_sys::Element = element.into();
        let at_end = |element: &web_sys::Element| {
            element.scroll_top() + element.client_height() >= element.scroll_height() - 4
        };
        // Where it stood at the last scroll (its own, or one of ours).
        let was_at_end = Rc::new(Cell::new(true));
        let scrolled = {
            let (element, was_at_end) = (element.clone(), Rc::clone(&was_at_end));
            Closure::<dyn FnMut()>::new(move || was_at_end.set(at_end(&element)))
        };
        let _ =
            element.add_event_listener_with_callback("scroll", scrolled.as_ref().unchecked_ref());
        let resized = {
            let element = element.clone();
            Closure::<dyn FnMut(js_sys::Array)>::new(move |_entries: js_sys::Array| {
                if was_at_end.get() && !at_end(&element) {
                    element.set_scroll_top(element.scroll_height());
                }
            })
        };
        let Ok(observer) = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref()) else {
            return;
        };
        observer.observe(&element);
        // The closures live as long as the list; both go with it.
        let held = StoredValue::new_local(Some((observer, resized, scrolled, element)));
        on_cleanup(move || {
            if let Some(Some((observer, _, scrolled, element))) =
                held.try_update_value(Option::take)
            {
                observer.disconnect();
                let _ = element.remove_event_listener_with_callback(
                    "scroll",
                    scrolled.as_ref().unchecked_ref(),
                );
            }
        });
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = list;
}
