//! `/share/:token`: opening a share link. The link's role is granted to
//! the logged-in visitor (the log-in wall brings anonymous visitors back
//! here after), who is then sent to the graph, or to the run and step the
//! link names. A revoked or expired link says so.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Redirect;
use leptos_router::hooks::use_params_map;

use crate::components::ErrorView;
use crate::error::AppError;
use crate::http_status::set_http_status;
use crate::sharing::accept_share_link;

/// `/share/:token`.
#[component]
pub fn SharePage() -> impl IntoView {
    let params = use_params_map();
    let token = move || params.read().get("token").unwrap_or_default();
    let accepted = Resource::new(token, accept_share_link);
    view! {
        <Title text="Shared graph" />
        <section class="page page-centered">
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Suspense fallback=|| view! { <p class="loading">"Opening the shared graph…"</p> }>
                    {move || Suspend::new(async move {
                        match accepted.await {
                            Ok(accepted) => Ok(view! { <Redirect path=accepted.target /> }.into_any()),
                            Err(error @ (AppError::Gone(_) | AppError::NotFound { .. })) => {
                                set_http_status(error.status_code());
                                Ok(view! { <LinkUnusable error /> }.into_any())
                            }
                            Err(error) => {
                                set_http_status(error.status_code());
                                Err(error)
                            }
                        }
                    })}
                </Suspense>
            </ErrorBoundary>
        </section>
    }
}

#[component]
fn LinkUnusable(error: AppError) -> impl IntoView {
    let title = match error {
        AppError::Gone(_) => "This share link no longer works",
        _ => "This share link does not exist",
    };
    let message = match error {
        AppError::NotFound { .. } => {
            "Check that the whole link was copied, or ask the graph's owner for a new one.".into()
        }
        other => {
            let mut text = other.to_string();
            if let Some(first) = text.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            format!("{text}.")
        }
    };
    view! {
        <div class="auth-card" role="alert">
            <h1>{title}</h1>
            <p class="page-sub share-problem">{message}</p>
            <a class="button" href="/">"Go to your graphs"</a>
        </div>
    }
}
