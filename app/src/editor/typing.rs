//! Typing in the inspector, before a field is left. A field applies its
//! text as it is left, and until then the graph has not changed: yet what
//! is typed is a change to the person typing it. So the bar says "Unsaved
//! changes" from the first key, and a node's text field that has rested a
//! second applies what it holds (it is then saved as any change is), the
//! field keeping the focus and the caret. Fields whose change does more
//! than set a value (a channel's name renames it everywhere) wait to be
//! left, as before.

#[cfg(feature = "hydrate")]
use leptos::prelude::*;

/// How long a node's field rests before what it holds is applied.
pub const REST_MS: u64 = 1000;

/// Follows typing anywhere in the inspector: `typing` is true from a key
/// in one of its fields until that field applies its text or is left.
#[cfg(feature = "hydrate")]
pub fn follow(typing: RwSignal<bool>) {
    use std::time::Duration;
    use wasm_bindgen::JsCast;
    let timer = StoredValue::new(None::<TimeoutHandle>);
    let typed = window_event_listener(leptos::ev::input, move |event| {
        let Some(field) = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::HtmlElement>().ok())
            .filter(|field| field.closest(".inspector").ok().flatten().is_some())
        else {
            return;
        };
        if !typing.get_untracked() {
            typing.set(true);
        }
        if let Some(handle) = timer.get_value() {
            handle.clear();
        }
        let rests = field.closest(".config-form").ok().flatten().is_some()
            && (field.tag_name() == "TEXTAREA" || field.get_attribute("type").is_none());
        if rests {
            let handle =
                set_timeout_with_handle(move || apply(&field), Duration::from_millis(REST_MS));
            timer.set_value(handle.ok());
        }
    });
    let applied = window_event_listener(leptos::ev::change, move |_| typing.set(false));
    let left = window_event_listener(leptos::ev::focusout, move |_| {
        if typing.get_untracked() {
            typing.set(false);
        }
    });
    on_cleanup(move || {
        typed.remove();
        applied.remove();
        left.remove();
        if let Some(handle) = timer.get_value() {
            handle.clear();
        }
    });
}

/// Applies what `field` holds as leaving it would (its `change`), if it
/// still has the focus: left meanwhile, it applied itself.
#[cfg(feature = "hydrate")]
pub fn apply(field: &web_sys::HtmlElement) {
    let focused = document()
        .active_element()
        .is_some_and(|active| field.is_same_node(Some(&active)));
    if !focused {
        return;
    }
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    if let Ok(change) = web_sys::Event::new_with_event_init_dict("change", &init) {
        let _ = field.dispatch_event(&change);
    }
}
