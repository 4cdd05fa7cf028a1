//! `/signup`: make an account. `?invite=<share token>` lets it through
//! when sign-up is closed; `?next=` says where to go after.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::login::{CredentialFields, credential_error};
use crate::accounts::{SignUp, encode_component, safe_next};
use crate::components::FormError;
use crate::error::AppError;
use crate::session::refresh_session_user;

/// `/signup`.
#[component]
pub fn SignupPage() -> impl IntoView {
    let query = use_query_map();
    let next = move || safe_next(query.read().get("next").as_deref());
    let invite = move || query.read().get("invite").unwrap_or_default();
    let action = ServerAction::<SignUp>::new();
    let value = action.value();
    Effect::new(move |_| {
        if matches!(value.get(), Some(Ok::<(), AppError>(()))) {
            refresh_session_user();
        }
    });
    let login_href = move || format!("/login?next={}", encode_component(&next()));

    view! {
        <Title text="Create an account" />
        <section class="page page-centered">
            <div class="auth-card">
                <h1>"Create your Heddle account"</h1>
                <p class="page-sub">"Build agent graphs, run them, and share them with your team."</p>
                <ActionForm action attr:class="auth-form">
                    <input type="hidden" name="next" value=next />
                    {move || {
                        let invite = invite();
                        (!invite.is_empty())
                            .then(|| view! { <input type="hidden" name="invite" value=invite /> })
                    }}
                    <CredentialFields new_password=true />
                    <FormError error=credential_error(action) />
                    <button class="button button-primary" type="submit" disabled=action.pending()>
                        "Create account"
                    </button>
                </ActionForm>
                <p class="auth-switch">"Have an account? " <a href=login_href>"Log in"</a></p>
            </div>
        </section>
    }
}
