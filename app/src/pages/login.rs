//! `/login`: log in, or on a fresh server create the owner account in one
//! step. `?next=/path` says where to go after.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::accounts::{AuthStatus, LogIn, MIN_PASSWORD_CHARS, SignUp, get_auth_status, safe_next};
use crate::components::{ErrorView, FormError, action_error_in};
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
                <FormError error=credential_error(action) />
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
                <FormError error=credential_error(action) />
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

/// What a log-in or sign-up form says went wrong: an error read from the
/// page's address (a form the browser posted itself) in the form's own
/// fixed words for its kind (`action_error_in`). Anyone can write that
/// address, and a link whose login page said "Heddle moved: log in at …"
/// in our alert would be a phishing page on our site.
pub fn credential_error<S>(action: ServerAction<S>) -> Signal<Option<String>>
where
    S: leptos::server_fn::ServerFn<Output = (), Error = AppError> + Clone + Send + Sync + 'static,
{
    action_error_in(action.value(), action.version(), said_by_address)
}

/// The fixed words for an error of `error`'s kind, none of its text.
fn said_by_address(error: &AppError) -> String {
    match error {
        AppError::Unauthorized(_) => "wrong username or password".into(),
        AppError::TooManyRequests(_) => {
            "too many log-in attempts; wait a minute, then try again".into()
        }
        AppError::Forbidden(_) => {
            "sign-up is closed on this server; ask a graph's owner for a share link".into()
        }
        AppError::InvalidInput(_) => format!(
            "that username or password cannot be used: a username is 1 to 64 letters, digits, \
             `-`, `_` or `.` and not taken yet, and a password has at least \
             {MIN_PASSWORD_CHARS} characters"
        ),
        _ => "that did not work; try again".into(),
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
