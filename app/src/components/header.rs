//! The bar across the top of every page: the brand and, for a logged-in
//! user, the main navigation, their name, settings and log-out.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_router::components::A;

use crate::accounts::LogOut;
use crate::session::{refresh_session_user, use_session_user};

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
            <UserMenu />
        </header>
    }
}

/// The logged-in user's name, settings and log-out; nothing when nobody is
/// logged in (the log-in page is showing).
#[component]
fn UserMenu() -> impl IntoView {
    let log_out = ServerAction::<LogOut>::new();
    Effect::new(move |_| {
        if matches!(log_out.value().get(), Some(Ok(()))) {
            refresh_session_user();
        }
    });
    let user = use_session_user();
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let user = match user {
                    Some(resource) => resource.0.await.ok().flatten(),
                    None => None,
                };
                user.map(|user| {
                    view! {
                        <nav class="topnav" aria-label="Main">
                            <A href="/" exact=true>
                                "Graphs"
                            </A>
                        </nav>
                        <div class="usermenu">
                            <span class="usermenu-name" data-testid="username">{user.username}</span>
                            <A href="/settings" attr:class="usermenu-link">"Settings"</A>
                            <ActionForm action=log_out attr:class="inline-form">
                                <button class="button button-small" type="submit">"Log out"</button>
                            </ActionForm>
                        </div>
                    }
                })
            })}
        </Transition>
    }
}
