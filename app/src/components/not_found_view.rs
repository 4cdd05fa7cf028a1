//! The body of every "not found" page: a big 404, what is missing, and
//! the way back.

use leptos::prelude::*;
use leptos_meta::Title;

/// A centred "not found" message with a link to the graphs.
#[component]
pub fn NotFoundView(title: &'static str, explanation: &'static str) -> impl IntoView {
    view! {
        <Title text=title />
        <section class="page page-centered">
            <div class="empty-state">
                <p class="empty-code">"404"</p>
                <h1>{title}</h1>
                <p>{explanation}</p>
                <a class="button button-primary" href="/">
                    "Go to your graphs"
                </a>
            </div>
        </section>
    }
}
