//! The graph's chat widgets: each listed with the script tag that embeds
//! it (and Copy) and the sites it answers; editors add one, turn one off
//! or on, and delete one.

use leptos::prelude::*;

use super::confirmed;
use super::trigger_list::{TriggerList, listed, versions};
use crate::components::{CopyButton, FormError, action_error, page_origin};
use crate::widgets::{
    CreateWidget, DeleteWidget, UpdateWidget, Widget, WidgetSettings, list_widgets,
};

#[component]
pub fn Widgets(graph_id: String, can_edit: bool, open: RwSignal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateWidget>::new();
    let update = ServerAction::<UpdateWidget>::new();
    let delete = ServerAction::<DeleteWidget>::new();
    let changed = versions(vec![
        create.version().into(),
        update.version().into(),
        delete.version().into(),
    ]);
    let widgets = listed(open, changed, graph_id.clone(), list_widgets);
    let rows_graph = graph_id.clone();
    let row = Callback::new(move |widget: Widget| {
        let graph_id = rows_graph.clone();
        view! { <WidgetRow widget graph_id can_edit update delete /> }.into_any()
    });
    let new_form = ViewFn::from(move || view! { <NewWidget graph_id=graph_id.clone() create /> });
    view! {
        <TriggerList
            title="Chat widgets"
            plural="chat widgets"
            new_label="New chat widget"
            items=widgets
            row
            can_edit
            new_form
            errors=vec![action_error(update.value(), update.version()), action_error(delete.value(), delete.version())]
        />
    }
}

#[component]
fn WidgetRow(
    widget: Widget,
    graph_id: String,
    can_edit: bool,
    update: ServerAction<UpdateWidget>,
    delete: ServerAction<DeleteWidget>,
) -> impl IntoView {
    let status = if widget.enabled { "Active" } else { "Off" };
    let snippet = widget.snippet(&page_origin());
    let toggled = WidgetSettings {
        name: widget.name.clone(),
        allowed_origins: widget.allowed_origins.clone(),
        title: Some(widget.title.clone()),
        color: Some(widget.color.clone()),
        greeting: widget.greeting.clone(),
        enabled: !widget.enabled,
    };
    let actions = can_edit.then(|| {
        let (graph_a, graph_b) = (graph_id.clone(), graph_id);
        let (id_a, id_b) = (widget.id.clone(), widget.id.clone());
        let name = widget.name.clone();
        let toggle_label = if widget.enabled { "Turn off" } else { "Turn on" };
        view! {
            <div class="trigger-actions">
                <button class="button button-small" type="button" on:click=move |_| {
                    update.dispatch(UpdateWidget { graph_id: graph_a.clone(), id: id_a.clone(), settings: toggled.clone() });
                }>{toggle_label}</button>
                <button class="button button-small" type="button" on:click=move |_| {
                    if confirmed(&format!("Delete the chat widget “{name}”? Pages embedding it show it unavailable.")) {
                        delete.dispatch(DeleteWidget { graph_id: graph_b.clone(), id: id_b.clone() });
                    }
                }>"Delete"</button>
            </div>
        }
    });
    view! {
        <li class="key-row trigger-row" class:key-inactive=!widget.enabled>
            <div class="key-main">
                <span class="widget-swatch" style=format!("background:{}", widget.color) aria-hidden="true"></span>
                <span class="key-name">{widget.name.clone()}</span>
                <span class=format!("key-status key-{}", status.to_lowercase())>{status}</span>
            </div>
            <div class="graph-row-meta">"On " {widget.allowed_origins.join(", ")}</div>
            <div class="new-key-secret">
                <input class="mono" readonly aria-label="The widget's script tag" value=snippet.clone() />
                <CopyButton text=snippet />
            </div>
            {actions}
        </li>
    }
}

#[component]
fn NewWidget(graph_id: String, create: ServerAction<CreateWidget>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let origins = RwSignal::new(String::new());
    let title = RwSignal::new(String::new());
    let color = RwSignal::new(String::from("#4f46e5"));
    let greeting = RwSignal::new(String::new());
    Effect::new(move |_| {
        if matches!(create.value().get(), Some(Ok(_))) {
            name.set(String::new());
            origins.set(String::new());
        }
    });
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        let text = |signal: RwSignal<String>| {
            let value = signal.get_untracked().trim().to_string();
            (!value.is_empty()).then_some(value)
        };
        create.dispatch(CreateWidget {
            graph_id: graph_id.clone(),
            settings: WidgetSettings {
                name: name.get_untracked(),
                allowed_origins: origins
                    .get_untracked()
                    .split(['\n', ',', ' '])
                    .map(str::trim)
                    .filter(|origin| !origin.is_empty())
                    .map(str::to_string)
                    .collect(),
                title: text(title),
                color: text(color),
                greeting: text(greeting),
                enabled: true,
            },
        });
    };
    view! {
        <form class="key-form trigger-form" on:submit=submit>
            <label class="field">
                <span class="field-label">"Name"</span>
                <input name="widget-name" required maxlength="64" placeholder="Shop support"
                    prop:value=move || name.get() on:input=move |event| name.set(event_target_value(&event)) />
            </label>
            <label class="field">
                <span class="field-label">"Sites it answers"</span>
                <textarea name="widget-origins" rows="2" class="mono" placeholder="https://shop.example"
                    prop:value=move || origins.get() on:input=move |event| origins.set(event_target_value(&event))></textarea>
                <span class="field-hint">"One origin per line: scheme and host, no path."</span>
            </label>
            <div class="key-form-row">
                <label class="field">
                    <span class="field-label">"Title"</span>
                    <input name="widget-title" maxlength="80" placeholder="the graph's name"
                        prop:value=move || title.get() on:input=move |event| title.set(event_target_value(&event)) />
                </label>
                <label class="field field-color">
                    <span class="field-label">"Colour"</span>
                    <input name="widget-color" type="color"
                        prop:value=move || color.get() on:input=move |event| color.set(event_target_value(&event)) />
                </label>
            </div>
            <label class="field">
                <span class="field-label">"Greeting"</span>
                <input name="widget-greeting" maxlength="500" placeholder="Hi! How can I help?"
                    prop:value=move || greeting.get() on:input=move |event| greeting.set(event_target_value(&event)) />
            </label>
            <button class="button" type="submit" disabled=move || create.pending().get()>"Add chat widget"</button>
            <FormError error=action_error(create.value(), create.version()) />
        </form>
    }
}
