//! The page for any URL that names nothing.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::http_status::set_http_status;

/// "Page not found", served with a 404 status.
#[component]
pub fn NotFound() -> impl IntoView {
    set_http_status(404);
    view! {
        <Title text="Page not found" />
        <section class="page page-centered">
            <div class="empty-state">
                <p class="empty-code">"404"</p>
                <h1>"Page not found"</h1>
                <p>"There is nothing at this address. It may have moved, or the link is mistyped."</p>
                <a class="button button-primary" href="/">
                    "Go to your graphs"
                </a>
            </div>
        </section>
    }
}
