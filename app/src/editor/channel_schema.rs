//! The shape of a channel's values, as a form inside its card: a list's
//! item type and length, an object's properties (name, type, required,
//! description), text's allowed values, a number's bounds; and the same
//! schema as JSON for what the form does not reach (nested shapes). A
//! model writing the channel is asked for values of this shape. The form
//! keeps its fields in place while editing (only a change of type or a
//! renamed property draws them again), so the keyboard never loses its
//! place.

use heddle_engine::format::ChannelType;
use leptos::prelude::*;
use serde_json::{Map, Value, json};

use super::schema_edit::{self as schema, Part, SHAPES};
use super::state::Editor;

/// Changes the schema of channel `key` with `change` (one undo step).
fn change(editor: Editor, key: StoredValue<String>, change: impl FnOnce(&mut Map<String, Value>)) {
    editor.change_channel(&key.get_value(), |channel| schema::edit(channel, change));
}

#[component]
pub fn ChannelSchema(editor: Editor, key: StoredValue<String>, read_only: bool) -> impl IntoView {
    let channel = move || {
        editor
            .skeleton
            .with(|document| document.state.channels.get(&key.get_value()).cloned())
    };
    let ty = Memo::new(move |_| channel().map(|channel| channel.ty));
    let current = Memo::new(move |_| {
        channel()
            .map(|channel| schema::current(&channel))
            .unwrap_or_else(|| json!({}))
    });
    let error = RwSignal::new(None::<String>);
    let form = move || {
        match ty.get() {
        Some(ChannelType::List) => view! { <ListShape editor key current error read_only /> }.into_any(),
        Some(ChannelType::Object) => view! {
            <PropertyList editor key current part=Part::Root read_only />
        }
        .into_any(),
        Some(ChannelType::String) => view! { <AllowedValues editor key current read_only /> }.into_any(),
        Some(ChannelType::Number | ChannelType::Integer) => view! {
            <div class="field-row">
                <NumberField editor key current error read_only part=Part::Root keyword="minimum" label="Minimum" whole=false />
                <NumberField editor key current error read_only part=Part::Root keyword="maximum" label="Maximum" whole=false />
            </div>
        }
        .into_any(),
        _ => ().into_any(),
    }
    };
    let shaped = move || ty.get().is_some_and(schema::has_form);
    view! {
        {move || shaped().then(|| view! {
            <fieldset class="schema-form" data-testid="schema-form">
                <legend class="field-label">"Shape of the values"</legend>
                <span class="field-hint">"A model writing this channel is asked for values of this shape, and every write is checked against it."</span>
                {form}
                {move || error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
                <SchemaJson editor key read_only />
            </fieldset>
        })}
    }
}

/// A list channel: what each item is, and how many there may be.
#[component]
fn ListShape(
    editor: Editor,
    key: StoredValue<String>,
    current: Memo<Value>,
    error: RwSignal<Option<String>>,
    read_only: bool,
) -> impl IntoView {
    let item_shape = Memo::new(move |_| {
        current.with(|value| {
            schema::read(value, &Part::Items)
                .map(|items| schema::shape_of(items).to_string())
                .unwrap_or_default()
        })
    });
    let set_shape = move |event: leptos::ev::Event| {
        let shape = event_target_value(&event);
        change(editor, key, |fields| {
            if shape.is_empty() {
                fields.remove("items");
            } else {
                schema::set_shape(schema::part(fields, &Part::Items), &shape);
            }
        });
    };
    view! {
        <label class="field">
            <span class="field-label">"Each item is"</span>
            <select name="schema-items" disabled=read_only prop:value=move || item_shape.get() on:change=set_shape>
                {SHAPES.iter().map(|(shape, words)| view! { <option value=*shape>{*words}</option> }).collect_view()}
            </select>
        </label>
        {move || (item_shape.get() == "object").then(|| view! {
            <PropertyList editor key current part=Part::Items read_only />
        })}
        <div class="field-row">
            <NumberField editor key current error read_only part=Part::Root keyword="minItems" label="At least (items)" whole=true />
            <NumberField editor key current error read_only part=Part::Root keyword="maxItems" label="At most (items)" whole=true />
        </div>
    }
}

/// One number keyword of `part` (bounds, lengths); empty removes it.
#[component]
fn NumberField(
    editor: Editor,
    key: StoredValue<String>,
    current: Memo<Value>,
    error: RwSignal<Option<String>>,
    read_only: bool,
    part: Part,
    keyword: &'static str,
    label: &'static str,
    whole: bool,
) -> impl IntoView {
    let shown = {
        let part = part.clone();
        move || {
            current.with(|value| {
                schema::read(value, &part)
                    .and_then(|fields| fields.get(keyword))
                    .map(Value::to_string)
                    .unwrap_or_default()
            })
        }
    };
    let set = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        let mut refused = None;
        change(editor, key, |fields| {
            if let Err(why) = schema::set_number(schema::part(fields, &part), keyword, &text, whole)
            {
                refused = Some(why);
            }
        });
        error.set(refused.map(|why| format!("{label}: {why}")));
    };
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <input name=format!("schema-{keyword}") inputmode="decimal" placeholder="any" prop:value=shown readonly=read_only on:change=set />
        </label>
    }
}

/// A text channel: the only values it may take.
#[component]
fn AllowedValues(
    editor: Editor,
    key: StoredValue<String>,
    current: Memo<Value>,
    read_only: bool,
) -> impl IntoView {
    let shown = move || {
        current.with(|value| {
            value
                .as_object()
                .map(schema::allowed_text)
                .unwrap_or_default()
        })
    };
    let set = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        change(editor, key, |fields| schema::set_allowed(fields, &text));
    };
    view! {
        <label class="field">
            <span class="field-label">"Allowed values"</span>
            <input name="schema-enum" placeholder="any text (or: low, normal, urgent)" prop:value=shown readonly=read_only on:change=set />
        </label>
    }
}

/// An object's properties, one row each, and a button that adds one.
#[component]
fn PropertyList(
    editor: Editor,
    key: StoredValue<String>,
    current: Memo<Value>,
    part: Part,
    read_only: bool,
) -> impl IntoView {
    let part = StoredValue::new(part);
    let names = Memo::new(move |_| {
        current.with(|value| {
            schema::read(value, &part.get_value())
                .map(|fields| {
                    schema::properties(fields)
                        .into_iter()
                        .map(|(name, ..)| name)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let add = move |_| {
        change(editor, key, |fields| {
            schema::add_property(schema::part(fields, &part.get_value()));
        });
    };
    view! {
        <div class="schema-properties" role="group" aria-label="Properties">
            {move || names.with(Vec::is_empty).then(|| view! { <p class="empty-note">"No properties yet."</p> })}
            <For each=move || names.get() key=|name| name.clone() let:name>
                <PropertyRow editor key current part name read_only />
            </For>
            {(!read_only).then(|| view! {
                <button type="button" class="button button-small" on:click=add>"+ Add property"</button>
            })}
        </div>
    }
}

/// One property: name, type, whether required, description, remove.
#[component]
fn PropertyRow(
    editor: Editor,
    key: StoredValue<String>,
    current: Memo<Value>,
    part: StoredValue<Part>,
    name: String,
    read_only: bool,
) -> impl IntoView {
    let name = StoredValue::new(name);
    let property = move || {
        current.with(|value| {
            schema::read(value, &part.get_value())
                .map(schema::properties)
                .unwrap_or_default()
                .into_iter()
                .find(|(n, ..)| *n == name.get_value())
        })
    };
    let refused = RwSignal::new(None::<String>);
    let rename = move |event: leptos::ev::Event| {
        let to = event_target_value(&event);
        let mut why = None;
        change(editor, key, |fields| {
            if let Err(error) = schema::rename_property(
                schema::part(fields, &part.get_value()),
                &name.get_value(),
                &to,
            ) {
                why = Some(error);
            }
        });
        if why.is_some()
            && let Some(input) = event.target().and_then(|target| {
                wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(target).ok()
            })
        {
            input.set_value(&name.get_value());
        }
        refused.set(why);
    };
    let set_shape = move |event: leptos::ev::Event| {
        let shape = event_target_value(&event);
        change(editor, key, |fields| {
            schema::set_property(
                schema::part(fields, &part.get_value()),
                &name.get_value(),
                |p| schema::set_shape(p, &shape),
            )
        });
    };
    let set_required = move |event: leptos::ev::Event| {
        let on = event_target_checked(&event);
        change(editor, key, |fields| {
            schema::set_required(
                schema::part(fields, &part.get_value()),
                &name.get_value(),
                on,
            )
        });
    };
    let set_description = move |event: leptos::ev::Event| {
        let text = event_target_value(&event).trim().to_string();
        change(editor, key, |fields| {
            schema::set_property(
                schema::part(fields, &part.get_value()),
                &name.get_value(),
                |p| {
                    if text.is_empty() {
                        p.remove("description");
                    } else {
                        p.insert("description".into(), Value::String(text));
                    }
                },
            )
        });
    };
    let remove = move |_| {
        change(editor, key, |fields| {
            schema::remove_property(schema::part(fields, &part.get_value()), &name.get_value())
        });
    };
    let label = name.get_value();
    view! {
        <div class="schema-property" data-property=label.clone()>
            <input name="property-name" class="mono" aria-label=format!("Name of property {label}") prop:value=label.clone() readonly=read_only on:change=rename />
            <select name="property-type" aria-label=format!("Type of {label}") disabled=read_only
                prop:value=move || property().map(|(_, shape, ..)| shape).unwrap_or_default() on:change=set_shape>
                {SHAPES.iter().map(|(shape, words)| view! { <option value=*shape>{*words}</option> }).collect_view()}
            </select>
            <input name="property-description" aria-label=format!("What {label} is") placeholder="what it is, for the model"
                prop:value=move || property().map(|(.., description)| description).unwrap_or_default() readonly=read_only on:change=set_description />
            <label class="schema-required">
                <input type="checkbox" name="property-required" disabled=read_only
                    prop:checked=move || property().is_some_and(|(_, _, required, _)| required) on:change=set_required />
                "required"
            </label>
            {(!read_only).then(|| view! {
                <button type="button" class="button button-small button-danger-quiet" aria-label=format!("Remove property {label}") on:click=remove>"Remove"</button>
            })}
            {move || refused.get().map(|why| view! { <span class="field-error" role="alert">{why}</span> })}
        </div>
    }
}

/// The schema as JSON, for what the form does not reach; applied when the
/// field is left, refused (with why) when it is not JSON. Problems with a
/// schema that is JSON show in the graph's problems, at their path.
#[component]
fn SchemaJson(editor: Editor, key: StoredValue<String>, read_only: bool) -> impl IntoView {
    let text = move || {
        editor.skeleton.with(|document| {
            document
                .state
                .channels
                .get(&key.get_value())
                .and_then(|channel| channel.schema.as_ref())
                .and_then(|schema| serde_json::to_string_pretty(schema).ok())
                .unwrap_or_default()
        })
    };
    let error = RwSignal::new(None::<String>);
    let set = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        let schema = if text.trim().is_empty() {
            None
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => Some(value),
                Err(why) => {
                    error.set(Some(format!("not JSON: {why}")));
                    return;
                }
            }
        };
        error.set(None);
        editor.change_channel(&key.get_value(), |channel| channel.schema = schema);
    };
    view! {
        <details class="schema-json">
            <summary>"Schema as JSON"</summary>
            <textarea name="schema-json" class="mono" rows="6" aria-label="Schema as JSON"
                placeholder="none: any value of the channel's type" prop:value=text readonly=read_only on:change=set />
            {move || error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
        </details>
    }
}
