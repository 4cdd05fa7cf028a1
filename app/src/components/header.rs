//! The bar across the top of every page: the brand and the main navigation.

use leptos::prelude::*;
use leptos_router::components::A;

/// The top bar.
#[component]
pub fn Header() -> impl IntoView {
    view! {
        <header class="topbar">
            <A href="/" attr:class="brand">
                <svg class="brand-mark" viewBox="0 0 24 24" aria-hidden="true">
                    <circle cx="5" cy="6" r="2.5" />
                    <circle cx="5" cy="18" r="2.5" />
                    <circle cx="19" cy="12" r="2.5" />
                    <path d="M7.5 6 C13 6 13 12 16.5 12 M7.5 18 C13 18 13 12 16.5 12" />
                </svg>
                <span>"Heddle"</span>
            </A>
            <nav class="topnav" aria-label="Main">
                <A href="/" exact=true>
                    "Graphs"
                </A>
            </nav>
        </header>
    }
}
