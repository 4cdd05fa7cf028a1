//! The graph's webhooks: listed with how each maps its body and answers;
//! editors add one (its URL shown once, with Copy), give one a new URL,
//! turn one off or on, and delete one.

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::confirmed;
use super::trigger_list::{TriggerList, listed, versions};
use crate::components::timestamp;
use crate::components::{CopyButton, FormError, action_error, page_origin};
use crate::webhooks::{
    CreateWebhook, DeleteWebhook, RegenerateWebhook, Respond, UpdateWebhook, Webhook,
    WebhookSettings, WebhookUrl, list_webhooks,
};

/// Reads the mapping field: one `channel = /pointer` per line; empty
/// means the body is the input.
fn parse_mapping(text: &str) -> Result<Option<BTreeMap<String, String>>, String> {
    let mut mapping = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((channel, pointer)) = line.split_once('=') else {
            return Err(format!(
                "line {}: write `channel = /pointer`, e.g. `request = /order/id`",
                index + 1
            ));
        };
        mapping.insert(channel.trim().to_string(), pointer.trim().to_string());
    }
    Ok((!mapping.is_empty()).then_some(mapping))
}

/// The mapping as the field shows it.
fn mapping_text(mapping: &BTreeMap<String, String>) -> String {
    mapping
        .iter()
        .map(|(channel, pointer)| format!("{channel} = {pointer}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[component]
pub fn Webhooks(graph_id: String, can_edit: bool, open: RwSignal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateWebhook>::new();
    let update = ServerAction::<UpdateWebhook>::new();
    let regenerate = ServerAction::<RegenerateWebhook>::new();
    let delete = ServerAction::<DeleteWebhook>::new();
    let changed = versions(vec![
        create.version().into(),
        update.version().into(),
        regenerate.version().into(),
        delete.version().into(),
    ]);
    let hooks = listed(open, changed, graph_id.clone(), list_webhooks);
    // The URL of the hook just made or given a new one: shown this once.
    let shown = RwSignal::new(None::<WebhookUrl>);
    Effect::new(move |_| {
        if let Some(Ok(made)) = create.value().get() {
            shown.set(Some(made));
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(made)) = regenerate.value().get() {
            shown.set(Some(made));
        }
    });
    let rows_graph = graph_id.clone();
    let row = Callback::new(move |hook: Webhook| {
        let graph_id = rows_graph.clone();
        view! { <HookRow hook graph_id can_edit update regenerate delete /> }.into_any()
    });
    let new_form = ViewFn::from(move || view! { <NewHook graph_id=graph_id.clone() create /> });
    let notice = ViewFn::from(move || {
        move || {
            shown.get().map(|made| {
                let url = format!("{}{}", page_origin(), made.path);
                view! {
                    <div class="new-key" role="status">
                        <p class="new-key-title">
                            "Webhook “" {made.webhook.name.clone()} "”: copy its URL now, it will not be shown again."
                        </p>
                        <div class="new-key-secret">
                            <input class="mono" readonly aria-label="The webhook's URL" value=url.clone() />
                            <CopyButton text=url />
                        </div>
                        <button class="button button-small" type="button" on:click=move |_| shown.set(None)>"Done"</button>
                    </div>
                }
            })
        }
    });
    view! {
        <TriggerList
            title="Webhooks"
            plural="webhooks"
            new_label="New webhook"
            items=hooks
            row
            can_edit
            new_form
            notice
            errors=vec![
                action_error(update.value(), update.version()),
                action_error(regenerate.value(), regenerate.version()),
                action_error(delete.value(), delete.version()),
            ]
        />
    }
}

#[component]
fn HookRow(
    hook: Webhook,
    graph_id: String,
    can_edit: bool,
    update: ServerAction<UpdateWebhook>,
    regenerate: ServerAction<RegenerateWebhook>,
    delete: ServerAction<DeleteWebhook>,
) -> impl IntoView {
    let input = match &hook.mapping {
        Some(mapping) => format!("input: {}", mapping_text(mapping)),
        None => "input: the body".to_string(),
    };
    let answers = match hook.respond {
        Respond::Run => "answers with the run",
        Respond::Result => "answers with the result",
    };
    let signed = hook
        .signing_secret
        .as_ref()
        .map(|secret| format!(" · signed with `{secret}`"));
    let last_used = hook.last_used_at.clone();
    let used = move || {
        last_used.as_deref().map_or_else(
            || "never called".to_string(),
            |at| format!("called {}", timestamp(at)),
        )
    };
    let status = if hook.enabled { "Active" } else { "Off" };
    let toggled = WebhookSettings {
        name: hook.name.clone(),
        mapping: hook.mapping.clone(),
        signing_secret: hook.signing_secret.clone(),
        respond: hook.respond,
        enabled: !hook.enabled,
    };
    let (id, name) = (hook.id.clone(), hook.name.clone());
    let actions = can_edit.then(|| {
        let (graph_a, graph_b, graph_c) = (graph_id.clone(), graph_id.clone(), graph_id);
        let (id_a, id_b, id_c) = (id.clone(), id.clone(), id);
        let (name_a, name_b) = (name.clone(), name);
        let toggle_label = if hook.enabled { "Turn off" } else { "Turn on" };
        view! {
            <div class="trigger-actions">
                <button class="button button-small" type="button" on:click=move |_| {
                    if confirmed(&format!("Give “{name_a}” a new URL? The old one stops working.")) {
                        regenerate.dispatch(RegenerateWebhook { graph_id: graph_a.clone(), id: id_a.clone() });
                    }
                }>"New URL"</button>
                <button class="button button-small" type="button" on:click=move |_| {
                    update.dispatch(UpdateWebhook {
                        graph_id: graph_b.clone(),
                        id: id_b.clone(),
                        settings: toggled.clone(),
                    });
                }>{toggle_label}</button>
                <button class="button button-small" type="button" on:click=move |_| {
                    if confirmed(&format!("Delete the webhook “{name_b}”?")) {
                        delete.dispatch(DeleteWebhook { graph_id: graph_c.clone(), id: id_c.clone() });
                    }
                }>"Delete"</button>
            </div>
        }
    });
    view! {
        <li class="key-row trigger-row" class:key-inactive=!hook.enabled>
            <div class="key-main">
                <span class="key-name">{hook.name.clone()}</span>
                <span class="mono key-prefix">{format!("…/hooks/{}…", hook.prefix)}</span>
                <span class=format!("key-status key-{}", status.to_lowercase())>{status}</span>
            </div>
            <div class="graph-row-meta">{input} " · " {answers} {signed}</div>
            <div class="graph-row-meta">{used}</div>
            {actions}
        </li>
    }
}

#[component]
fn NewHook(graph_id: String, create: ServerAction<CreateWebhook>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let mapping = RwSignal::new(String::new());
    let secret = RwSignal::new(String::new());
    let respond = RwSignal::new(Respond::Run);
    let problem = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        if matches!(create.value().get(), Some(Ok(_))) {
            name.set(String::new());
            mapping.set(String::new());
            secret.set(String::new());
        }
    });
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        let parsed = match parse_mapping(&mapping.get_untracked()) {
            Ok(parsed) => parsed,
            Err(why) => {
                problem.set(Some(why));
                return;
            }
        };
        problem.set(None);
        let signing = secret.get_untracked().trim().to_string();
        create.dispatch(CreateWebhook {
            graph_id: graph_id.clone(),
            settings: WebhookSettings {
                name: name.get_untracked(),
                mapping: parsed,
                signing_secret: (!signing.is_empty()).then_some(signing),
                respond: respond.get_untracked(),
                enabled: true,
            },
        });
    };
    view! {
        <form class="key-form trigger-form" on:submit=submit>
            <label class="field">
                <span class="field-label">"Name"</span>
                <input name="hook-name" required maxlength="64" placeholder="Refund form"
                    prop:value=move || name.get() on:input=move |event| name.set(event_target_value(&event)) />
            </label>
            <label class="field">
                <span class="field-label">"Input from the body"</span>
                <textarea name="hook-mapping" rows="2" class="mono" placeholder="request = /order/id"
                    prop:value=move || mapping.get() on:input=move |event| mapping.set(event_target_value(&event))></textarea>
                <span class="field-hint">"One " <code>"channel = /json/pointer"</code> " per line; empty: the body is the input."</span>
            </label>
            <div class="key-form-row">
                <label class="field">
                    <span class="field-label">"Signing secret"</span>
                    <input name="hook-secret" placeholder="none" maxlength="64"
                        prop:value=move || secret.get() on:input=move |event| secret.set(event_target_value(&event)) />
                    <span class="field-hint">"The name of one of your secrets"</span>
                </label>
                <label class="field">
                    <span class="field-label">"Answer with"</span>
                    <select name="hook-respond" on:change=move |event| {
                        respond.set(if event_target_value(&event) == "result" { Respond::Result } else { Respond::Run });
                    }>
                        <option value="run">"The run, at once"</option>
                        <option value="result">"The result (waits up to 30 s)"</option>
                    </select>
                </label>
            </div>
            <button class="button" type="submit" disabled=move || create.pending().get()>"Add webhook"</button>
            {move || problem.get().map(|why| view! { <p class="inline-error" role="alert">{why}</p> })}
            <FormError error=action_error(create.value(), create.version()) />
        </form>
    }
}
