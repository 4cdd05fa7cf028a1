//! `/login`: log in, or on a fresh server create the owner account in one
//! step. `?next=/path` says where to go after.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::accounts::{AuthStatus, LogIn, MIN_PASSWORD_CHARS, SignUp, get_auth_status, safe_next};
use crate::components::{ErrorView, FormError, action_error};
use crate::error::AppError;
use crate::session::refresh_session_user;

/// `/login`.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let next = move || safe_next(query.read().get("next").as_deref());
    let status = Resource::new(|| (), |_| get_auth_status());

    view! {
        <Title text="Log in" />
        <section class="page page-centered">
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Suspense fallback=|| view! { <div class="auth-card skeleton"></div> }>
                    {move || Suspend::new(async move {
                        status
                            .await
                            .map(|status| {
                                let next = next();
                                if status.needs_setup {
                                    view! { <SetupForm next /> }.into_any()
                                } else {
                                    view! { <LoginForm next status /> }.into_any()
                                }
                            })
                    })}
                </Suspense>
            </ErrorBoundary>
        </section>
    }
}

/// A fresh server: the first visitor becomes the owner.
#[component]
fn SetupForm(next: String) -> impl IntoView {
    let action = ServerAction::<SignUp>::new();
    refresh_after(action.value());
    view! {
        <div class="auth-card">
            <h1>"Welcome to Heddle"</h1>
            <p class="page-sub">
                "Nobody has an account on this server yet. Create the owner account: "
                "it owns every graph made so far and can share them with teammates."
            </p>
            <ActionForm action attr:class="auth-form">
                <input type="hidden" name="next" value=next />
                <CredentialFields new_password=true />
                <FormError error=action_error(action.value()) />
                <button class="button button-primary" type="submit" disabled=action.pending()>
                    "Create the owner account"
                </button>
            </ActionForm>
        </div>
    }
}

#[component]
fn LoginForm(next: String, status: AuthStatus) -> impl IntoView {
    let action = ServerAction::<LogIn>::new();
    refresh_after(action.value());
    let signup_href = format!("/signup?next={}", crate::accounts::encode_component(&next));
    view! {
        <div class="auth-card">
            <h1>"Log in to Heddle"</h1>
            {status.user.map(|user| view! {
                <p class="notice notice-hint">
                    "You are logged in as " <strong>{user.username}</strong> ". "
                    <a href="/">"Go to your graphs"</a>
                </p>
            })}
            <ActionForm action attr:class="auth-form">
                <input type="hidden" name="next" value=next />
                <CredentialFields new_password=false />
                <FormError error=action_error(action.value()) />
                <button class="button button-primary" type="submit" disabled=action.pending()>
                    "Log in"
                </button>
            </ActionForm>
            {status.signup_open.then(|| view! {
                <p class="auth-switch">"New here? " <a href=signup_href>"Create an account"</a></p>
            })}
        </div>
    }
}

/// Username and password inputs.
#[component]
pub fn CredentialFields(new_password: bool) -> impl IntoView {
    let (autocomplete, hint) = if new_password {
        (
            "new-password",
            Some(format!("At least {MIN_PASSWORD_CHARS} characters.")),
        )
    } else {
        ("current-password", None)
    };
    view! {
        <label class="field">
            <span class="field-label">"Username"</span>
            <input name="username" autocomplete="username" required maxlength="64" autofocus />
        </label>
        <label class="field">
            <span class="field-label">"Password"</span>
            <input
                name="password"
                type="password"
                autocomplete=autocomplete
                required
                minlength=if new_password { MIN_PASSWORD_CHARS } else { 1 }
            />
            {hint.map(|hint| view! { <span class="field-hint">{hint}</span> })}
        </label>
    }
}

/// After a successful log-in or sign-up, the header learns who it is.
fn refresh_after(value: MappedSignal<Option<Result<(), AppError>>>) {
    Effect::new(move |_| {
        if matches!(value.get(), Some(Ok(()))) {
            refresh_session_user();
        }
    });
}
