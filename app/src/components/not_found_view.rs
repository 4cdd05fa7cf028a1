//! The body of every "not found" page: a big 404, what is missing, and
//! the way back; also of "gone" pages (410: access that has ended).

use leptos::prelude::*;
use leptos_meta::Title;

/// A centred "not found" message with a link to the graphs.
#[component]
pub fn NotFoundView(
    title: &'static str,
    #[prop(into)] explanation: String,
    /// The status shown big.
    #[prop(default = "404")]
    code: &'static str,
) -> impl IntoView {
    view! {
        <Title text=title />
        <section class="page page-centered">
            <div class="empty-state" data-status=code>
                <p class="empty-code">{code}</p>
                <h1>{title}</h1>
                <p>{explanation}</p>
                <a class="button button-primary" href="/">
                    "Go to your graphs"
                </a>
            </div>
        </section>
    }
}
