//! `/settings`: the logged-in user's secrets, API keys and password. A
//! secret's value is typed once and never shown again: the list holds
//! names only; so is an API key's.

mod api_keys;

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::accounts::{ChangePassword, MIN_PASSWORD_CHARS};
use crate::components::ErrorView;
use crate::components::LocalTime;
use crate::components::{FormError, action_error};
use crate::secrets::{DeleteSecret, SaveSecret, SecretSummary, list_secrets};

/// `/settings`.
#[component]
pub fn SettingsPage() -> impl IntoView {
    view! {
        <Title text="Settings" />
        <section class="page page-narrow">
            <div class="page-head">
                <div>
                    <h1>"Settings"</h1>
                    <p class="page-sub">"The credentials your graphs use, the keys that call them, and your password."</p>
                </div>
            </div>
            <Secrets />
            <api_keys::ApiKeys />
            <Password />
        </section>
    }
}

#[component]
fn Secrets() -> impl IntoView {
    let save = ServerAction::<SaveSecret>::new();
    let delete = ServerAction::<DeleteSecret>::new();
    let secrets = Resource::new(
        move || (save.version().get(), delete.version().get()),
        |_| list_secrets(),
    );
    // A saved value leaves the form at once: it is never shown again.
    let form = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        if matches!(save.value().get(), Some(Ok(())))
            && let Some(form) = form.get()
        {
            form.reset();
        }
    });
    view! {
        <section class="panel" aria-labelledby="secrets-title">
            <h2 id="secrets-title">"Secrets"</h2>
            <p class="page-sub">
                "Model keys and tool tokens, kept on the server. A graph names a secret (an llm node's "
                <code>"credential"</code>
                "), never its value: exports never hold one, and nobody you share a graph with "
                "can read yours. Runs you start use your secrets."
            </p>
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Transition fallback=|| view! { <ul class="secret-list" aria-busy="true"></ul> }>
                    {move || Suspend::new(async move {
                        secrets.await.map(|list| view! { <SecretList list delete /> })
                    })}
                </Transition>
            </ErrorBoundary>
            <ActionForm action=save node_ref=form attr:class="secret-form">
                <label class="field">
                    <span class="field-label">"Name"</span>
                    <input name="name" required maxlength="64" pattern="[A-Za-z0-9._-]+" placeholder="openai" />
                </label>
                <label class="field field-grow">
                    <span class="field-label">"Value"</span>
                    <input name="value" type="password" required autocomplete="off" placeholder="sk-…" />
                </label>
                <button class="button button-primary" type="submit" disabled=save.pending()>"Save secret"</button>
            </ActionForm>
            <FormError error=action_error(save.value(), save.version()) />
            <FormError error=action_error(delete.value(), delete.version()) />
        </section>
    }
}

#[component]
fn SecretList(list: Vec<SecretSummary>, delete: ServerAction<DeleteSecret>) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="empty-note">"No secrets yet. Graphs run on the server's model until you add one."</p> }
            .into_any();
    }
    view! {
        <ul class="secret-list">
            {list
                .into_iter()
                .map(|secret| {
                    view! {
                        <li class="secret-row">
                            <span class="mono secret-name">{secret.name.clone()}</span>
                            <span class="secret-value" aria-label="hidden value">"••••••••"</span>
                            <span class="graph-row-meta">"Updated " <LocalTime at=secret.updated_at.clone() /></span>
                            <ActionForm action=delete attr:class="inline-form">
                                <input type="hidden" name="name" value=secret.name />
                                <button class="button button-small" type="submit">"Delete"</button>
                            </ActionForm>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn Password() -> impl IntoView {
    let action = ServerAction::<ChangePassword>::new();
    let done = move || matches!(action.value().get(), Some(Ok(())));
    view! {
        <section class="panel" aria-labelledby="password-title">
            <h2 id="password-title">"Password"</h2>
            <p class="page-sub">"Changing it logs you out everywhere else."</p>
            <ActionForm action attr:class="auth-form">
                <label class="field">
                    <span class="field-label">"Current password"</span>
                    <input name="current" type="password" autocomplete="current-password" required />
                </label>
                <label class="field">
                    <span class="field-label">"New password"</span>
                    <input name="new" type="password" autocomplete="new-password" required minlength=MIN_PASSWORD_CHARS />
                </label>
                <FormError error=action_error(action.value(), action.version()) />
                {move || done().then(|| view! { <p class="notice" role="status">"Password changed."</p> })}
                <button class="button" type="submit" disabled=action.pending()>"Change password"</button>
            </ActionForm>
        </section>
    }
}
