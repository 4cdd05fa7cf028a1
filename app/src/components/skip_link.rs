//! The first thing Tab reaches on every page: a link past the top bar to
//! what the page is for. Hidden until focused. On the editor it goes to
//! the canvas (the element marked `data-skip-target`), where the keyboard
//! builds; elsewhere to the page's main content.

use leptos::prelude::*;

/// "Skip to content", shown when focused.
#[component]
pub fn SkipLink() -> impl IntoView {
    let skip = move |event: leptos::ev::MouseEvent| {
        let marked = document()
            .query_selector("[data-skip-target]")
            .ok()
            .flatten()
            .is_some();
        event.prevent_default();
        super::focus_first(if marked {
            "[data-skip-target]"
        } else {
            "#content"
        });
    };
    view! {
        <a class="skip-link" href="#content" on:click=skip>"Skip to content"</a>
    }
}
