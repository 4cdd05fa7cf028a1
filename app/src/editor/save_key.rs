//! Ctrl+S (⌘S) saves now. The editor saves by itself a moment after each
//! change, yet a person used to the key presses it, and the browser's
//! "Save page as…" is never what they meant. It works from anywhere on
//! the editor's page, a field being typed in too: the field applies what
//! it holds first, as leaving it would.

use super::persist::Persistence;

pub fn install(persistence: Persistence) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::prelude::*;
        use wasm_bindgen::JsCast;
        let keys = window_event_listener(leptos::ev::keydown, move |event| {
            let command = event.ctrl_key() || event.meta_key();
            if !command
                || event.alt_key()
                || event.shift_key()
                || !event.key().eq_ignore_ascii_case("s")
            {
                return;
            }
            event.prevent_default();
            if let Some(field) = document()
                .active_element()
                .and_then(|active| active.dyn_into::<web_sys::HtmlElement>().ok())
            {
                super::typing::apply(&field);
            }
            persistence.save_now();
        });
        on_cleanup(move || keys.remove());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = persistence;
}
