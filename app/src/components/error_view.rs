//! What an error boundary shows: the errors in words, and a way out.

use leptos::prelude::*;

/// The fallback of the app's error boundaries.
#[component]
pub fn ErrorView(errors: ArcRwSignal<Errors>) -> impl IntoView {
    let messages = move || {
        errors
            .get()
            .into_iter()
            .map(|(_, error)| view! { <li>{error.to_string()}</li> })
            .collect_view()
    };
    view! {
        <div class="notice notice-error" role="alert">
            <h2>"Something went wrong"</h2>
            <ul class="notice-list">{messages}</ul>
            <p class="notice-hint">
                "Try again in a moment, or go back to " <a href="/">"your graphs"</a> "."
            </p>
        </div>
    }
}
