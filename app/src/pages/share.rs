//! `/share/:token`: opening a share link. The page says what the link
//! offers; the visitor's "Open" (a POST from this page) grants the link's
//! role and goes on to the graph, or to the run and step the link names.
//! Rendering the page grants nothing, so a link opened by another site
//! cannot give anyone a role behind their back. The log-in wall brings
//! anonymous visitors back here after. A revoked or expired link says so.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::components::ErrorView;
use crate::error::AppError;
use crate::http_status::set_http_status;
use crate::sharing::{AcceptShareLink, LinkPreview, preview_share_link};

/// `/share/:token`.
#[component]
pub fn SharePage() -> impl IntoView {
    let params = use_params_map();
    let token = move || params.read().get("token").unwrap_or_default();
    let preview = Resource::new(token, preview_share_link);
    view! {
        <Title text="Shared graph" />
        <section class="page page-centered">
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Suspense fallback=|| view! { <p class="loading">"Opening the shared graph…"</p> }>
                    {move || Suspend::new(async move {
                        match preview.await {
                            Ok(preview) => Ok(view! { <OpenLink token=token() preview /> }.into_any()),
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

/// What the link offers, and the button that accepts it.
#[component]
fn OpenLink(token: String, preview: LinkPreview) -> impl IntoView {
    let accept = ServerAction::<AcceptShareLink>::new();
    let failed = move || {
        accept
            .value()
            .get()
            .and_then(Result::err)
            .map(|error| error.to_string())
    };
    let owner = if preview.owner.is_empty() {
        "Someone".to_string()
    } else {
        preview.owner.clone()
    };
    view! {
        <div class="auth-card">
            <h1>{preview.graph_name.clone()}</h1>
            <p class="page-sub">{offer(&owner, preview.role)}</p>
            <ActionForm action=accept>
                <input type="hidden" name="token" value=token />
                <button class="button button-primary" type="submit" autofocus>
                    "Open the graph"
                </button>
            </ActionForm>
            {move || failed().map(|message| view! { <p class="form-error" role="alert">{message}</p> })}
        </div>
    }
}

/// What accepting the link lets the visitor do, in words.
fn offer(owner: &str, role: crate::access::Role) -> String {
    use crate::access::Role;
    match role {
        Role::Viewer => format!(
            "{owner} shared this graph with you as a viewer: you can open it, watch its runs, \
             replay them, export it and copy it."
        ),
        Role::Editor | Role::Owner => format!(
            "{owner} shared this graph with you as an editor: you can open, change and run it, \
             watch and replay its runs, export it and copy it."
        ),
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
