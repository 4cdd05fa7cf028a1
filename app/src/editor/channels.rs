//! The graph's state channels as a form: one card per channel with its
//! name, type, reducer (only those that fit the type), scope, default and
//! description, and a button that adds one. It edits the same document the
//! JSON view under it shows, so the two never disagree.

use heddle_engine::format::{Channel, ChannelScope, ChannelType, Reducer};
use heddle_engine::schema::ValueSchema;
use heddle_engine::state::fits;
use heddle_engine::validate::{new_channel, type_name};
use leptos::prelude::*;
use serde_json::Value;

use super::channel_schema::ChannelSchema;
use super::rename::{Renamed, rename_channel};
use super::state::Editor;

const TYPES: [ChannelType; 8] = [
    ChannelType::String,
    ChannelType::Messages,
    ChannelType::Number,
    ChannelType::Integer,
    ChannelType::Boolean,
    ChannelType::List,
    ChannelType::Object,
    ChannelType::Any,
];

const REDUCERS: [Reducer; 5] = [
    Reducer::Replace,
    Reducer::AddMessages,
    Reducer::Append,
    Reducer::Merge,
    Reducer::Sum,
];

fn reducer_name(reducer: Reducer) -> &'static str {
    match reducer {
        Reducer::Replace => "replace",
        Reducer::Append => "append",
        Reducer::Merge => "merge",
        Reducer::AddMessages => "add_messages",
        Reducer::Sum => "sum",
    }
}

fn reducer_help(reducer: Reducer) -> &'static str {
    match reducer {
        Reducer::Replace => "replace: the last write wins",
        Reducer::Append => "append: writes are added to the list",
        Reducer::Merge => "merge: keys are merged in",
        Reducer::AddMessages => "add_messages: messages are added (same id replaces)",
        Reducer::Sum => "sum: writes are added up",
    }
}

/// Changes channel `name` with `edit`: one undo step.
fn edit(editor: Editor, name: &str, edit: impl FnOnce(&mut Channel)) {
    editor.change_channel(name, edit);
}

/// Sets a channel's type, keeping its reducer when it still fits (else
/// the one the type usually has) and dropping a default of another type.
pub fn retype(channel: &mut Channel, ty: ChannelType) {
    channel.ty = ty;
    if !fits(channel.reducer, ty) {
        channel.reducer = new_channel(ty).reducer;
    }
    if channel
        .default
        .as_ref()
        .is_some_and(|value| !heddle_engine::state::is_of_type(value, ty))
    {
        channel.default = None;
    }
    // A shape for the old type would refuse every value of the new one. A
    // schema that does not read stays, for its problems to be seen.
    let agrees = channel.schema.as_ref().is_none_or(|schema| {
        ValueSchema::parse(schema).map_or(true, |schema| schema.agrees_with(ty))
    });
    if !agrees {
        channel.schema = None;
    }
}

/// What a rename did, in a sentence.
fn renamed_notice(from: &str, to: &str, done: &Renamed) -> String {
    let places = match done.places {
        1 => "1 place".to_string(),
        n => format!("{n} places"),
    };
    let mut text = format!("Renamed `{from}` to `{to}` in {places}.");
    if !done.scripts.is_empty() {
        let nodes: Vec<String> = done
            .scripts
            .iter()
            .map(|node| format!("`{node}`"))
            .collect();
        text.push_str(&format!(
            " Scripts are not rewritten: check {} for `{from}`.",
            nodes.join(", ")
        ));
    }
    text
}

#[component]
pub fn ChannelTable(editor: Editor) -> impl IntoView {
    let read_only = !editor.can_edit;
    let names = Memo::new(move |_| {
        editor
            .skeleton
            .with(|document| document.state.channels.keys().cloned().collect::<Vec<_>>())
    });
    // The card just added opens, to be named.
    let opened = RwSignal::new(None::<String>);
    // What the last rename did, or why it was refused.
    let notice = RwSignal::new(None::<Result<String, String>>);
    let add = move |_| {
        let name = editor.skeleton.with_untracked(|document| {
            (1..)
                .map(|n| {
                    if n == 1 {
                        "channel".to_string()
                    } else {
                        format!("channel_{n}")
                    }
                })
                .find(|name| !document.state.channels.contains_key(name))
                .unwrap_or_default()
        });
        // Opened first: the change draws the cards again.
        opened.set(Some(name.clone()));
        editor.change(|document| {
            document
                .state
                .channels
                .insert(name, new_channel(ChannelType::String));
        });
    };
    let cards = move || {
        names
            .get()
            .into_iter()
            .map(|name| view! { <ChannelCard editor name opened notice read_only /> })
            .collect_view()
    };
    view! {
        <fieldset class="field form-group channel-table">
            <legend class="field-label">"State channels"</legend>
            <span class="field-hint">"What a run remembers. Each node reads the state and writes to channels; a channel's reducer says how writes combine."</span>
            {move || names.with(Vec::is_empty).then(|| view! { <p class="empty-note">"No channels yet."</p> })}
            {move || notice.get().map(|notice| match notice {
                Ok(text) => view! { <p class="field-hint rename-notice" role="status" data-testid="rename-notice">{text}</p> }.into_any(),
                Err(text) => view! { <p class="field-error" role="alert" data-testid="rename-notice">{text}</p> }.into_any(),
            })}
            <div class="channel-cards">{cards}</div>
            {(!read_only).then(|| view! { <button type="button" class="button button-small" on:click=add>"+ Add channel"</button> })}
        </fieldset>
    }
}

#[component]
fn ChannelCard(
    editor: Editor,
    name: String,
    opened: RwSignal<Option<String>>,
    notice: RwSignal<Option<Result<String, String>>>,
    read_only: bool,
) -> impl IntoView {
    let key = StoredValue::new(name.clone());
    let channel = move || {
        editor
            .skeleton
            .with(|document| document.state.channels.get(&key.get_value()).cloned())
    };
    // Read once as the card is made (not followed: the card is made again
    // when the channels' names change).
    let Some(current) = editor
        .skeleton
        .with_untracked(|document| document.state.channels.get(&key.get_value()).cloned())
    else {
        return ().into_any();
    };
    let summary = move || {
        channel().map(|channel| {
            let scope = match channel.scope {
                ChannelScope::Run => "",
                ChannelScope::Thread => " · thread",
            };
            let shaped = if channel.schema.is_some() {
                " · shaped"
            } else {
                ""
            };
            format!(
                "{} · {}{scope}{shaped}",
                type_name(channel.ty),
                reducer_name(channel.reducer)
            )
        })
    };
    let open = opened.get_untracked().as_deref() == Some(name.as_str());
    // A new name is the channel's everywhere the graph uses it (one undo
    // step), or refused with the reason, changing nothing.
    let rename = move |event: leptos::ev::Event| {
        let to = event_target_value(&event).trim().to_string();
        let from = key.get_value();
        if to == from {
            return;
        }
        let mut attempt = editor.document();
        match rename_channel(&mut attempt, &from, &to) {
            Ok(done) => {
                opened.set(Some(to.clone()));
                notice.set(Some(Ok(renamed_notice(&from, &to, &done))));
                editor.change(|document| *document = attempt);
            }
            Err(error) => {
                notice.set(Some(Err(format!("Not renamed: {error}."))));
                if let Some(input) = event.target().and_then(|target| {
                    wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(target).ok()
                }) {
                    input.set_value(&from);
                }
            }
        }
    };
    let set_type = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        if let Some(ty) = TYPES.into_iter().find(|ty| type_name(*ty) == text) {
            edit(editor, &key.get_value(), |channel| retype(channel, ty));
        }
    };
    let set_reducer = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        if let Some(reducer) = REDUCERS.into_iter().find(|r| reducer_name(*r) == text) {
            edit(editor, &key.get_value(), |channel| {
                channel.reducer = reducer
            });
        }
    };
    let set_scope = move |event: leptos::ev::Event| {
        let scope = if event_target_value(&event) == "thread" {
            ChannelScope::Thread
        } else {
            ChannelScope::Run
        };
        edit(editor, &key.get_value(), |channel| channel.scope = scope);
    };
    let default_error = RwSignal::new(None::<String>);
    let set_default = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        let text = text.trim();
        let Some(ty) = channel().map(|channel| channel.ty) else {
            return;
        };
        let value = if text.is_empty() {
            None
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(value) => Some(value),
                // Plain words are text, for a text channel.
                Err(_) if matches!(ty, ChannelType::String | ChannelType::Any) => {
                    Some(Value::String(text.to_string()))
                }
                Err(error) => {
                    default_error.set(Some(format!("not JSON: {error}")));
                    return;
                }
            }
        };
        if let Some(value) = &value
            && !heddle_engine::state::is_of_type(value, ty)
        {
            default_error.set(Some(format!("not a {} value", type_name(ty))));
            return;
        }
        default_error.set(None);
        edit(editor, &key.get_value(), |channel| channel.default = value);
    };
    let set_description = move |event: leptos::ev::Event| {
        let text = event_target_value(&event).trim().to_string();
        edit(editor, &key.get_value(), |channel| {
            channel.description = text
        });
    };
    let remove = move |_| {
        editor.change(|document| {
            document.state.channels.remove(&key.get_value());
        });
    };
    let types = move || {
        let now = channel().map(|channel| channel.ty);
        TYPES
            .into_iter()
            .map(|ty| {
                let selected = Some(ty) == now;
                view! { <option value=type_name(ty) selected=selected>{type_name(ty)}</option> }
            })
            .collect_view()
    };
    let reducers = move || {
        let Some(now) = channel() else {
            return ().into_any();
        };
        REDUCERS
            .into_iter()
            .filter(|reducer| fits(*reducer, now.ty))
            .map(|reducer| {
                let selected = reducer == now.reducer;
                view! { <option value=reducer_name(reducer) title=reducer_help(reducer) selected=selected>{reducer_name(reducer)}</option> }
            })
            .collect_view()
            .into_any()
    };
    let default_text = move || {
        channel()
            .and_then(|channel| channel.default)
            .map(|value| match value {
                Value::String(text) => text,
                other => other.to_string(),
            })
            .unwrap_or_default()
    };
    let thread = current.scope == ChannelScope::Thread;
    view! {
        <details class="channel-card" prop:open=open>
            <summary>
                <span class="mono channel-name">{name.clone()}</span>
                <span class="channel-summary">{summary}</span>
            </summary>
            <div class="channel-fields">
                <label class="field">
                    <span class="field-label">"Name"</span>
                    <input name="channel-name" class="mono" prop:value=name.clone() readonly=read_only on:change=rename />
                </label>
                <div class="field-row">
                    <label class="field">
                        <span class="field-label">"Type"</span>
                        <select name="channel-type" disabled=read_only on:change=set_type>{types}</select>
                    </label>
                    <label class="field">
                        <span class="field-label">"Reducer"</span>
                        <select name="channel-reducer" disabled=read_only on:change=set_reducer>{reducers}</select>
                    </label>
                </div>
                <label class="field">
                    <span class="field-label">"Kept"</span>
                    <select name="channel-scope" disabled=read_only on:change=set_scope>
                        <option value="run" selected=!thread>"for one run"</option>
                        <option value="thread" selected=thread>"across the thread's runs"</option>
                    </select>
                </label>
                <label class="field">
                    <span class="field-label">"Default"</span>
                    <input name="channel-default" class="mono" placeholder="the type's empty value" prop:value=default_text readonly=read_only on:change=set_default />
                    {move || default_error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
                </label>
                <label class="field">
                    <span class="field-label">"Description"</span>
                    <input name="channel-description" prop:value=move || channel().map(|c| c.description).unwrap_or_default() readonly=read_only on:change=set_description />
                </label>
                <ChannelSchema editor key read_only />
                {(!read_only).then(|| view! {
                    <button type="button" class="button button-small button-danger-quiet" on:click=remove>"Remove channel"</button>
                })}
            </div>
        </details>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use heddle_engine::format::{ChannelType, Reducer};
    use heddle_engine::validate::new_channel;
    use serde_json::json;

    use super::retype;

    #[test]
    fn retyping_keeps_what_still_fits_and_drops_what_does_not() {
        let mut channel = new_channel(ChannelType::List);
        channel.reducer = Reducer::Append;
        channel.default = Some(json!([1]));
        retype(&mut channel, ChannelType::Messages);
        assert_eq!(channel.reducer, Reducer::Append);
        // `[1]` is no transcript: the default goes.
        assert_eq!(channel.default, None);
        retype(&mut channel, ChannelType::Number);
        assert_eq!(channel.reducer, Reducer::Replace);
        channel.default = Some(json!(3));
        retype(&mut channel, ChannelType::Integer);
        assert_eq!(channel.default, Some(json!(3)));
        // A shape that still fits stays; one that does not goes.
        channel.schema = Some(json!({"type": "integer", "minimum": 0}));
        retype(&mut channel, ChannelType::Number);
        assert!(channel.schema.is_some());
        retype(&mut channel, ChannelType::List);
        assert_eq!(channel.schema, None);
    }
}
