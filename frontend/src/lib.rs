//! The browser entry point: the wasm module's `hydrate` export, called by the
//! script the server puts in every page, takes over the server-rendered HTML.

// Leptos views are deeply nested types; the default limit is too low.
#![recursion_limit = "256"]

use wasm_bindgen::prelude::wasm_bindgen;

/// Hydrates the page: attaches the app's reactivity to the server's HTML.
#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(heddle_app::App);
}
