//! The page for any URL that names nothing.

use leptos::prelude::*;

use crate::components::NotFoundView;
use crate::http_status::set_http_status;

/// "Page not found", served with a 404 status.
#[component]
pub fn NotFound() -> impl IntoView {
    set_http_status(404);
    view! {
        <NotFoundView
            title="Page not found"
            explanation="There is nothing at this address. It may have moved, or the link is mistyped."
        />
    }
}
