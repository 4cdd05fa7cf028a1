//! The API keys section of `/settings`: make a key for chosen graphs (its
//! secret shown once, with a Copy button and a ready-to-run example), see
//! when each key was last used, and revoke one.

use leptos::prelude::*;

use crate::api_keys::{
    ApiKeySummary, CreateApiKey, CreatedApiKey, KeyScope, NewApiKey, RevokeApiKey, list_api_keys,
};
use crate::components::{CopyButton, ErrorView, FormError, action_error, page_origin};
use crate::components::{LocalTime, timestamp};
use crate::graphs::{GraphId, GraphSummary, list_graphs};

/// How long a new key may last, as offered.
const EXPIRIES: &[(&str, Option<u32>)] = &[
    ("Never", None),
    ("7 days", Some(7)),
    ("30 days", Some(30)),
    ("90 days", Some(90)),
    ("1 year", Some(365)),
];

#[component]
pub fn ApiKeys() -> impl IntoView {
    let create = ServerAction::<CreateApiKey>::new();
    let revoke = ServerAction::<RevokeApiKey>::new();
    let keys = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| list_api_keys(),
    );
    let graphs = Resource::new(|| (), |_| list_graphs());
    let name = RwSignal::new(String::new());
    let scope = RwSignal::new(KeyScope::Run);
    let expiry = RwSignal::new(0usize);
    let chosen = RwSignal::new(Vec::<GraphId>::new());
    let shown = RwSignal::new(None::<CreatedApiKey>);
    Effect::new(move |_| {
        if let Some(Ok(created)) = create.value().get() {
            shown.set(Some(created));
            name.set(String::new());
            chosen.set(Vec::new());
        }
    });
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        create.dispatch(CreateApiKey {
            request: NewApiKey {
                name: name.get_untracked(),
                scope: scope.get_untracked(),
                graphs: chosen.get_untracked(),
                expires_in_days: EXPIRIES
                    .get(expiry.get_untracked())
                    .and_then(|(_, days)| *days),
            },
        });
    };
    view! {
        <section class="panel" aria-labelledby="keys-title">
            <h2 id="keys-title">"API keys"</h2>
            <p class="page-sub">
                "Let scripts and other services run your published graphs: "
                <code>"POST /api/v1/graphs/{id}/invoke"</code>
                ", or any OpenAI client pointed at this server's "<code>"/v1"</code>
                ". A key works only on the graphs you pick, runs their published version, and is shown once."
            </p>
            {move || shown.get().map(|created| view! { <NewKey created shown /> })}
            <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                <Transition fallback=|| view! { <ul class="key-list" aria-busy="true"></ul> }>
                    {move || Suspend::new(async move {
                        keys.await.map(|list| view! { <KeyList list revoke /> })
                    })}
                </Transition>
            </ErrorBoundary>
            <h3 class="subhead">"New key"</h3>
            <form class="key-form" on:submit=submit>
                <label class="field">
                    <span class="field-label">"Name"</span>
                    <input
                        name="key-name"
                        required
                        maxlength="64"
                        placeholder="support site"
                        prop:value=move || name.get()
                        on:input=move |event| name.set(event_target_value(&event))
                    />
                </label>
                <fieldset class="field key-graphs">
                    <legend class="field-label">"Graphs it may run"</legend>
                    <Transition fallback=|| view! { <p class="loading">"Loading graphs…"</p> }>
                        {move || Suspend::new(async move {
                            let runnable: Vec<GraphSummary> = graphs
                                .await
                                .unwrap_or_default()
                                .into_iter()
                                .filter(|graph| graph.role.can_edit())
                                .collect();
                            view! { <GraphChoices runnable chosen /> }
                        })}
                    </Transition>
                </fieldset>
                <div class="key-form-row">
                    <label class="field">
                        <span class="field-label">"Access"</span>
                        <select
                            name="key-scope"
                            on:change=move |event| {
                                scope.set(if event_target_value(&event) == "read" { KeyScope::Read } else { KeyScope::Run });
                            }
                        >
                            <option value="run" selected=move || scope.get() == KeyScope::Run>
                                "Run only"
                            </option>
                            <option value="read" selected=move || scope.get() == KeyScope::Read>
                                "Run and read"
                            </option>
                        </select>
                        <span class="field-hint">{move || scope.get().describe()}</span>
                    </label>
                    <label class="field">
                        <span class="field-label">"Expires"</span>
                        <select
                            name="key-expiry"
                            on:change=move |event| {
                                expiry.set(event_target_value(&event).parse().unwrap_or(0));
                            }
                        >
                            {EXPIRIES
                                .iter()
                                .enumerate()
                                .map(|(index, (label, _))| view! { <option value=index.to_string()>{*label}</option> })
                                .collect_view()}
                        </select>
                    </label>
                </div>
                <button
                    class="button button-primary"
                    type="submit"
                    disabled=move || create.pending().get() || chosen.with(Vec::is_empty)
                >
                    "Create key"
                </button>
            </form>
            <FormError error=action_error(create.value(), create.version()) />
            <FormError error=action_error(revoke.value(), revoke.version()) />
        </section>
    }
}

/// A checkbox per graph the user can run.
#[component]
fn GraphChoices(runnable: Vec<GraphSummary>, chosen: RwSignal<Vec<GraphId>>) -> impl IntoView {
    if runnable.is_empty() {
        return view! { <p class="empty-note">"You have no graphs you can run yet."</p> }
            .into_any();
    }
    runnable
        .into_iter()
        .map(|graph| {
            let id = graph.id.clone();
            let checked = {
                let id = id.clone();
                move || chosen.with(|chosen| chosen.contains(&id))
            };
            view! {
                <label class="check">
                    <input
                        type="checkbox"
                        prop:checked=checked
                        on:change=move |event| {
                            let on = event_target_checked(&event);
                            chosen.update(|chosen| {
                                chosen.retain(|other| *other != id);
                                if on {
                                    chosen.push(id.clone());
                                }
                            });
                        }
                    />
                    <span>{graph.name}</span>
                </label>
            }
        })
        .collect_view()
        .into_any()
}

/// The key just made: its secret, this once.
#[component]
fn NewKey(created: CreatedApiKey, shown: RwSignal<Option<CreatedApiKey>>) -> impl IntoView {
    let secret = created.secret.clone();
    let graph = created
        .key
        .graphs
        .first()
        .map(|graph| graph.id.to_string())
        .unwrap_or_default();
    let origin = page_origin();
    // The graph's own inputs, so the example runs as it is pasted.
    let body = serde_json::json!({ "input": created.example_input });
    let example = format!(
        "curl -X POST \"{origin}/api/v1/graphs/{graph}/invoke\" \\\n  -H \"Authorization: Bearer {secret}\" \\\n  -H \"Content-Type: application/json\" \\\n  -d '{}'",
        shell_quoted_body(&body)
    );
    let published = created.published;
    let openai = format!("{origin}/v1");
    view! {
        <div class="new-key" role="status">
            <p class="new-key-title">
                "Key “" {created.key.name.clone()} "” made. Copy it now: it will not be shown again."
            </p>
            <div class="new-key-secret">
                <input class="mono" readonly aria-label="The new key" value=secret.clone() on:focus=|event| {
                    event_target::<web_sys::HtmlInputElement>(&event).select();
                } />
                <CopyButton text=secret.clone() />
            </div>
            <div class="new-key-example-row">
                <pre class="new-key-example mono" tabindex="0" aria-label="An example request">{example.clone()}</pre>
                <CopyButton text=example />
            </div>
            {(!published).then(|| view! {
                <p class="notice" data-testid="key-unpublished">
                    "The graph is not published yet: a key runs only the published version, so "
                    "publish it (in its editor) before this call will run."
                </p>
            })}
            <p class="field-hint">
                <code>"input"</code> " holds the graph's start inputs, each filled with an example "
                "of its type. Any OpenAI client works too: base URL "
                <code>{openai}</code> ", the graph's id as the model."
            </p>
            <button class="button button-small" type="button" on:click=move |_| shown.set(None)>
                "Done"
            </button>
        </div>
    }
}

#[component]
fn KeyList(list: Vec<ApiKeySummary>, revoke: ServerAction<RevokeApiKey>) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="empty-note">"No keys yet."</p> }.into_any();
    }
    view! {
        <ul class="key-list">
            {list
                .into_iter()
                .map(|key| {
                    let status = if key.revoked_at.is_some() {
                        "Revoked"
                    } else if key.active {
                        "Active"
                    } else {
                        "Expired"
                    };
                    let graphs = key
                        .graphs
                        .iter()
                        .map(|graph| graph.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ");
                    let last_used = key.last_used_at.clone();
                    let used = move || {
                        last_used
                            .as_deref()
                            .map_or_else(|| "never used".to_string(), |at| format!("used {}", timestamp(at)))
                    };
                    let expires_at = key.expires_at.clone();
                    let expires = move || expires_at.as_deref().map(|at| format!(" · expires {}", timestamp(at)));
                    let id = key.id.clone();
                    let name = key.name.clone();
                    view! {
                        <li class="key-row" class:key-inactive=!key.active data-key=key.id.clone()>
                            <div class="key-main">
                                <span class="key-name">{key.name.clone()}</span>
                                <span class="mono key-prefix">{format!("{}…", key.prefix)}</span>
                                <span class=format!("key-status key-{}", status.to_lowercase())>{status}</span>
                            </div>
                            <div class="graph-row-meta">
                                {match key.scope { KeyScope::Run => "Run only", KeyScope::Read => "Run and read" }}
                                " · " {graphs}
                            </div>
                            <div class="graph-row-meta">
                                "Made " <LocalTime at=key.created_at.clone() /> " · " {used} {expires}
                            </div>
                            {key.active.then(|| view! {
                                <button
                                    class="button button-small key-revoke"
                                    type="button"
                                    on:click=move |_| {
                                        let sure = window()
                                            .confirm_with_message(&format!(
                                                "Revoke “{name}”? Calls with it are refused from now on."
                                            ))
                                            .unwrap_or(false);
                                        if sure {
                                            revoke.dispatch(RevokeApiKey { id: id.clone() });
                                        }
                                    }
                                >
                                    "Revoke"
                                </button>
                            })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// The body as it goes between single quotes in a shell: a quote in it
/// (a sample value never holds one, but a schema's example may) closes the
/// quotes, gives itself escaped and opens them again.
fn shell_quoted_body(body: &serde_json::Value) -> String {
    body.to_string().replace('\'', "'\\''")
}
