//! The fork form: the state after a step, to edit before the run goes on
//! from there as a new branch of its thread. Each channel is a field of its
//! type, or the whole state is one JSON text (for pasting). The edits are
//! checked as you type by the engine's own rule, the one the server applies.

use heddle_engine::ids::RunId;
use std::collections::HashMap;

use heddle_engine::format::ChannelType;
use leptos::prelude::*;
use serde_json::{Map, Value};

use super::InputField;
use super::start::{InputRow, parse_field};
use crate::editor::state::Editor;
use crate::live::Watch;
use crate::runs::ForkOrigin;

/// How the state is being edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Fields,
    Json,
}

/// A channel's value as its field shows it: text as itself, numbers and
/// booleans as they are written, anything else as indented JSON.
fn text_of(ty: ChannelType, value: &Value) -> String {
    match (ty, value) {
        (_, Value::Null) => String::new(),
        (ChannelType::String, Value::String(text)) => text.clone(),
        (_, Value::Number(_) | Value::Bool(_)) => value.to_string(),
        (_, other) => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// A field's text read back as its channel's value. Text channels keep
/// their text as typed; an emptied field of another type clears it.
fn value_of(field: &InputField, text: &str) -> Result<Value, String> {
    if field.ty == ChannelType::String {
        return Ok(Value::String(text.to_string()));
    }
    Ok(parse_field(field, text)?.unwrap_or(Value::Null))
}

/// The channels whose fields differ from what they first showed.
fn field_edits(
    fields: &[InputField],
    texts: &HashMap<String, String>,
    originals: &HashMap<String, String>,
) -> Result<Map<String, Value>, String> {
    let mut edits = Map::new();
    for field in fields {
        let text = texts.get(&field.channel);
        if text != originals.get(&field.channel) {
            let value = value_of(field, text.map_or("", String::as_str))?;
            edits.insert(field.channel.clone(), value);
        }
    }
    Ok(edits)
}

/// The channels the JSON text gives other values than `state` has.
fn json_edits(text: &str, state: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let edited: Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON: {e} (line {}, column {})", e.line(), e.column()))?;
    let Value::Object(edited) = edited else {
        return Err("the state must be a JSON object of channel values".into());
    };
    Ok(edited
        .into_iter()
        .filter(|(channel, value)| state.get(channel).unwrap_or(&Value::Null) != value)
        .collect())
}

/// The fields of the form: every channel of the graph's state, and any
/// other the step's state holds.
fn fields_for(editor: Editor, state: &Map<String, Value>) -> Vec<InputField> {
    editor.skeleton.with_untracked(|document| {
        let channels = &document.state.channels;
        let declared = channels.iter().map(|(channel, spec)| InputField {
            channel: channel.clone(),
            ty: spec.ty,
            description: spec.description.clone(),
        });
        let undeclared = state
            .keys()
            .filter(|channel| !channels.contains_key(*channel))
            .map(|channel| InputField {
                channel: channel.clone(),
                ty: ChannelType::Any,
                description: String::new(),
            });
        declared.chain(undeclared).collect()
    })
}

fn pretty(state: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(state).unwrap_or_default()
}

/// The form; a new run from the step after `step` when sent.
#[component]
pub fn ForkForm(
    editor: Editor,
    watch: Watch,
    step: u32,
    state: Map<String, Value>,
    open: RwSignal<bool>,
) -> impl IntoView {
    let fields = StoredValue::new(fields_for(editor, &state));
    let originals: HashMap<String, String> = fields.with_value(|fields| {
        fields
            .iter()
            .map(|field| {
                let value = state.get(&field.channel).unwrap_or(&Value::Null);
                (field.channel.clone(), text_of(field.ty, value))
            })
            .collect()
    });
    let texts = RwSignal::new(originals.clone());
    let originals = StoredValue::new(originals);
    let json = RwSignal::new(pretty(&state));
    let state = StoredValue::new(state);
    let mode = RwSignal::new(Mode::Fields);
    // Bumped when the fields' texts are replaced, so they are drawn again.
    let drawn = RwSignal::new(0_u32);

    let error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    // Where the fork starts: the step's own nodes, or a chosen node.
    let start_at = RwSignal::new(String::new());
    let all_nodes = move || super::node_names(editor);

    let unchecked = move || match mode.get() {
        Mode::Fields => fields.with_value(|fields| {
            texts.with(|texts| {
                originals.with_value(|originals| field_edits(fields, texts, originals))
            })
        }),
        Mode::Json => state.with_value(|state| json.with(|json| json_edits(json, state))),
    };
    let edits = move || -> Result<Map<String, Value>, String> {
        let edits = unchecked()?;
        editor.skeleton.with(|document| {
            heddle_engine::state::check_edits(&document.state.channels, &edits)
                .map_err(|error| error.to_string())
        })?;
        Ok(edits)
    };
    let problem = move || edits().err();

    let show_fields = move |edits: &Map<String, Value>| {
        let mut shown = originals.get_value();
        fields.with_value(|fields| {
            for field in fields {
                if let Some(value) = edits.get(&field.channel) {
                    shown.insert(field.channel.clone(), text_of(field.ty, value));
                }
            }
        });
        texts.set(shown);
        drawn.update(|n| *n += 1);
    };
    // Switching carries the edits over, so only edits that fit their
    // channels do (a number field cannot show "eight").
    let switch_to = move |to: Mode| {
        let Ok(edits) = edits() else {
            return;
        };
        match to {
            Mode::Json => {
                let mut edited = state.get_value();
                edited.extend(edits);
                json.set(pretty(&edited));
            }
            Mode::Fields => show_fields(&edits),
        }
        mode.set(to);
    };
    let undo = move |_| {
        show_fields(&Map::new());
        json.set(state.with_value(pretty));
    };

    let submit = move |_| {
        let Ok(edits) = edits() else {
            return;
        };
        let Some(run_id) = watch.log.with_untracked(|log| log.run_id.clone()) else {
            return;
        };
        pending.set(true);
        leptos::task::spawn_local(async move {
            let start_at = Some(start_at.get_untracked()).filter(|node| !node.is_empty());
            match crate::live::api::fork(&run_id, step + 1, edits, start_at).await {
                Ok(run) => {
                    open.set(false);
                    super::start::follow_fork(&run);
                }
                Err(refusal) => error.set(Some(refusal.to_string())),
            }
            pending.set(false);
        });
    };

    let mode_button = move |to: Mode, label: &'static str| {
        view! {
            <button type="button" role="tab" class="segment" data-testid=format!("fork-mode-{}", label.to_lowercase())
                aria-selected=move || (mode.get() == to).to_string()
                disabled=move || mode.get() != to && edits().is_err()
                on:click=move |_| switch_to(to)>{label}</button>
        }
    };

    view! {
        <div class="fork-form" data-testid="fork-form">
            <div class="fork-heading">
                <p class="hint">
                    {format!("Edit the state after step {step}; the run goes on from step {} as a new branch of its thread. The original run is not changed.", step + 1)}
                </p>
                <div class="segments" role="tablist" aria-label="Edit as">
                    {mode_button(Mode::Fields, "Fields")}
                    {mode_button(Mode::Json, "JSON")}
                </div>
            </div>
            {move || match mode.get() {
                Mode::Fields => {
                    drawn.track();
                    view! {
                        <div class="fork-fields">
                            {fields.get_value().into_iter().map(|field| {
                                let channel = field.channel.clone();
                                let changed = move || {
                                    texts.with(|texts| originals.with_value(|originals| texts.get(&channel) != originals.get(&channel)))
                                };
                                view! {
                                    <div class="fork-field" class:changed=changed>
                                        <InputRow field texts />
                                    </div>
                                }
                            }).collect_view()}
                        </div>
                    }.into_any()
                }
                Mode::Json => view! {
                    <textarea class="json-input" rows="10" spellcheck="false" aria-label="State to fork with"
                        prop:value=move || json.get()
                        on:input=move |event| json.set(event_target_value(&event))></textarea>
                }.into_any(),
            }}
            <label class="field field-inline">
                <span>"Go on with"</span>
                <select data-testid="fork-start-at" on:change=move |event| start_at.set(event_target_value(&event))>
                    <option value="">{format!("step {}'s own nodes", step + 1)}</option>
                    <For each=all_nodes key=|node| node.clone() let:node>
                        <option value=node.0>{format!("node {}", node.1)}</option>
                    </For>
                </select>
            </label>
            {move || edits().ok().map(|edits| {
                let said = if edits.is_empty() {
                    "No change: the fork goes on from this state as it was.".to_string()
                } else {
                    let channels: Vec<&str> = edits.keys().map(String::as_str).collect();
                    format!("Changes {}.", channels.join(", "))
                };
                view! { <p class="hint" data-testid="fork-changes">{said}</p> }
            })}
            {move || problem().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            <div class="form-actions">
                <button type="button" class="button button-primary" data-testid="fork-run"
                    disabled=move || problem().is_some() || pending.get() on:click=submit>"Run the fork"</button>
                <button type="button" class="button" data-testid="fork-undo"
                    disabled=move || edits().is_ok_and(|edits| edits.is_empty())
                    on:click=undo>"Undo edits"</button>
                <button type="button" class="button" on:click=move |_| open.set(false)>"Cancel"</button>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use heddle_engine::format::ChannelType;
    use serde_json::{Map, Value, json};

    use super::{field_edits, json_edits, text_of, value_of};
    use crate::run_panel::InputField;

    fn field(channel: &str, ty: ChannelType) -> InputField {
        InputField {
            channel: channel.into(),
            ty,
            description: String::new(),
        }
    }

    #[test]
    fn values_show_as_their_type_and_read_back_the_same() {
        let cases = [
            (ChannelType::String, json!("  spaced out ")),
            (ChannelType::Integer, json!(42)),
            (ChannelType::Number, json!(2.5)),
            (ChannelType::Boolean, json!(true)),
            (ChannelType::List, json!([1, "two"])),
            (ChannelType::Object, json!({"a": {"b": null}})),
            (
                ChannelType::Messages,
                json!([{"role": "user", "content": "hi"}]),
            ),
            (ChannelType::Any, json!("text in an any channel")),
        ];
        for (ty, value) in cases {
            let text = text_of(ty, &value);
            assert_eq!(
                value_of(&field("c", ty), &text),
                Ok(value.clone()),
                "{ty:?}: {text}"
            );
        }
        assert_eq!(text_of(ChannelType::String, &json!("line")), "line");
        assert_eq!(text_of(ChannelType::Integer, &Value::Null), "");
        // An emptied field clears the channel, except text, which is empty.
        assert_eq!(
            value_of(&field("n", ChannelType::Integer), " "),
            Ok(Value::Null)
        );
        assert_eq!(
            value_of(&field("s", ChannelType::String), ""),
            Ok(json!(""))
        );
        assert!(value_of(&field("n", ChannelType::Integer), "eight").is_err());
    }

    #[test]
    fn only_fields_changed_are_edits() {
        let fields = [
            field("count", ChannelType::Integer),
            field("note", ChannelType::String),
        ];
        let originals: HashMap<String, String> =
            [("count".into(), "2".into()), ("note".into(), String::new())].into();
        let mut texts = originals.clone();
        assert_eq!(field_edits(&fields, &texts, &originals), Ok(Map::new()));
        texts.insert("count".into(), "8".into());
        let edits = field_edits(&fields, &texts, &originals).unwrap();
        assert_eq!(Value::Object(edits), json!({"count": 8}));
        texts.insert("count".into(), "eight".into());
        let refused = field_edits(&fields, &texts, &originals).unwrap_err();
        assert!(refused.contains("`count`"), "{refused}");
    }

    #[test]
    fn json_edits_are_the_values_that_differ() {
        let state = json!({"count": 2, "target": 5});
        let Value::Object(state) = state else {
            unreachable!()
        };
        let edits = json_edits(r#"{"count": 2, "target": 8, "extra": null}"#, &state).unwrap();
        assert_eq!(Value::Object(edits), json!({"target": 8}));
        assert!(
            json_edits("[1]", &state)
                .unwrap_err()
                .contains("JSON object")
        );
        assert!(json_edits("{", &state).unwrap_err().contains("line 1"));
    }
}

/// Says that the watched run is a fork, of which run and from which step,
/// with a link to the run it came from; nothing for other runs.
#[component]
pub fn ForkBadge(watch: Watch) -> impl IntoView {
    // Fetched in the browser only, once per watched run (an effect: the
    // server renders no badge, and waits for nothing).
    let origin = RwSignal::new(None::<ForkOrigin>);
    Effect::new(move |shown: Option<Option<RunId>>| {
        let run_id = watch.log.with(|log| log.run_id.clone());
        if shown.as_ref() != Some(&run_id) {
            origin.set(None);
            if let Some(asked) = run_id.clone() {
                leptos::task::spawn_local(async move {
                    let found = crate::live::api::run(&asked)
                        .await
                        .ok()
                        .and_then(|run| run.forked_from);
                    // The watched run may have changed meanwhile.
                    if watch
                        .log
                        .with_untracked(|log| log.run_id.as_ref() == Some(&asked))
                    {
                        let _ = origin.try_set(found);
                    }
                });
            }
        }
        run_id
    });
    move || {
        let origin = origin.get()?;
        let href = format!("?run={}", origin.run_id);
        Some(view! {
            <span class="fork-badge" data-testid="fork-badge" title="This run went on from another run's step, with edits">
                "Fork of "
                <a href=href rel="external">{super::short_id(origin.run_id.as_str()).to_string()}</a>
                {format!(" at step {}", origin.step)}
            </span>
        })
    }
}
