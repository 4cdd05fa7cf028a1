//! The Run tab: a form built from the graph's input channels (text, number,
//! yes/no, or JSON by type), "run to" a chosen node, the answer form when
//! the run is paused, and the run's result or error.

use heddle_engine::format::ChannelType;
use heddle_engine::model::ChatMessage;
use heddle_engine::run::{EventPayload, RunStatus};
use leptos::prelude::*;
use serde_json::{Map, Value};

use super::interrupt::InterruptForms;
use super::{InputField, PanelState, input_fields, node_names, show_json};
use crate::components::Markdown;
use crate::editor::state::Editor;
use crate::live::Watch;
use crate::runs::{RunInfo, StartRequest};

/// After starting a run from this page, shows it: a page that follows the
/// graph live switches to it at once (not waiting for the server's notice,
/// which a socket still opening could miss); a replay moves to the new run.
pub fn follow(run: &RunInfo) {
    let location = window().location();
    if location.search().unwrap_or_default().contains("step=") {
        let _ = location.set_search(&format!("?run={}", run.id));
    } else {
        #[cfg(feature = "hydrate")]
        crate::live::socket::follow_started(
            run.graph_id.clone(),
            run.id.clone(),
            run.thread_id.clone(),
        );
    }
}

/// Follows a fork just started, and gives the page its address: a reload
/// or a copied link opens the fork, marked as one.
pub fn follow_fork(run: &RunInfo) {
    follow(run);
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("?run={}", run.id)),
        );
    }
}

/// Reads one field's text as its channel's type.
pub fn parse_field(field: &InputField, text: &str) -> Result<Option<Value>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let value = match field.ty {
        ChannelType::String => Value::String(text.to_string()),
        ChannelType::Boolean => Value::Bool(text == "true"),
        ChannelType::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{}` must be a whole number", field.channel))?,
        ChannelType::Number => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{}` must be a number", field.channel))?,
        ChannelType::Messages => {
            if text.starts_with('[') {
                serde_json::from_str(text).map_err(|e| {
                    format!("`{}` is not a JSON list of messages: {e}", field.channel)
                })?
            } else {
                serde_json::json!([{"role": "user", "content": text}])
            }
        }
        _ => serde_json::from_str(text).map_err(|e| {
            format!(
                "`{}` is not JSON: {e} (line {}, column {})",
                field.channel,
                e.line(),
                e.column()
            )
        })?,
    };
    Ok(Some(value))
}

#[component]
pub fn RunTab(
    editor: Editor,
    watch: Watch,
    panel: PanelState,
    graph_id: String,
    can_run: bool,
) -> impl IntoView {
    let fields = Memo::new(move |_| input_fields(editor));
    let PanelState {
        texts, stop_before, ..
    } = panel;
    let error = RwSignal::new(None::<String>);
    let input = move || -> Result<Map<String, Value>, String> {
        let texts = texts.get();
        let mut input = Map::new();
        for field in fields.get() {
            let text = texts.get(&field.channel).map(String::as_str).unwrap_or("");
            if let Some(value) = parse_field(&field, text)? {
                input.insert(field.channel.clone(), value);
            }
        }
        Ok(input)
    };
    let problem = move || input().err();
    let running = move || watch.status.get() == Some(RunStatus::Running);
    let shown = use_context::<crate::editor::persist::Persistence>();
    let start = {
        let graph_id = graph_id.clone();
        move |_| {
            let Ok(input) = input() else {
                return;
            };
            let stop_before = stop_before.get_untracked();
            let options = StartRequest {
                input: Value::Object(input),
                interrupt_before: (!stop_before.is_empty())
                    .then_some(stop_before)
                    .into_iter()
                    .collect(),
                ..StartRequest::default()
            };
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match crate::live::api::start_run(&graph_id, shown, options).await {
                    Ok(run) => {
                        error.set(None);
                        follow(&run);
                    }
                    Err(refusal) => {
                        error.set(Some(refusal.explain(|node| editor.label_of(node))));
                    }
                }
            });
        }
    };
    let all_nodes = move || node_names(editor);
    view! {
        <div class="run-tab-body">
            <form class="run-form" data-testid="run-form" on:submit=|event| event.prevent_default()
                class:hidden=!can_run>
                <h3>"Input"</h3>
                {move || fields.with(Vec::is_empty).then(|| view! {
                    <p class="hint">"The start node takes no input channels; the run starts from the channels' defaults."</p>
                })}
                <For each=move || fields.get() key=|field| field.channel.clone() let:field>
                    <InputRow field texts />
                </For>
                {can_run.then(|| view! {
                    <label class="field">
                        <span>"Run to"</span>
                        <select data-testid="run-to" prop:value=move || stop_before.get()
                            on:change=move |event| stop_before.set(event_target_value(&event))>
                            <option value="" selected=move || stop_before.with(String::is_empty)>"the end"</option>
                            <For each=all_nodes key=|node| node.clone() let:node>
                                {
                                    let (id, name) = node;
                                    let chosen = id.clone();
                                    view! {
                                        <option value=id selected=move || stop_before.with(|stop| *stop == chosen)>
                                            {format!("before {name}")}
                                        </option>
                                    }
                                }
                            </For>
                        </select>
                    </label>
                    <div class="form-actions">
                        <button type="button" class="button button-primary" data-testid="run-start"
                            disabled=move || problem().is_some() || running() on:click=start.clone()>
                            "Start run"
                        </button>
                    </div>
                })}
                {move || problem().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
                {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            </form>
            {(!can_run).then(|| view! {
                <p class="hint">"You can watch, replay and inspect runs here; starting, answering and forking them needs the editor role."</p>
            })}
            <div class="run-outcome">
                <InterruptForms watch editor can_run />
                <RunResult editor watch />
            </div>
        </div>
    }
}

#[component]
pub(super) fn InputRow(
    field: InputField,
    texts: RwSignal<std::collections::HashMap<String, String>>,
) -> impl IntoView {
    let channel = field.channel.clone();
    let set = {
        let channel = channel.clone();
        move |value: String| {
            texts.update(|texts| {
                texts.insert(channel.clone(), value);
            })
        }
    };
    // What was typed before the tab was last shown.
    let current = texts.with_untracked(|texts| texts.get(&channel).cloned().unwrap_or_default());
    let type_name = serde_json::to_value(field.ty)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default();
    let control = match field.ty {
        ChannelType::Boolean => {
            let set = set.clone();
            view! {
                <input type="checkbox" name=channel.clone() prop:checked=current == "true"
                    on:change=move |event| set(event_target_checked(&event).to_string()) />
            }
            .into_any()
        }
        ChannelType::Integer | ChannelType::Number => {
            let set = set.clone();
            view! {
                <input type="number" name=channel.clone() step=if field.ty == ChannelType::Integer { "1" } else { "any" }
                    prop:value=current.clone() on:input=move |event| set(event_target_value(&event)) />
            }
            .into_any()
        }
        ChannelType::String | ChannelType::Messages => {
            let set = set.clone();
            let placeholder = if field.ty == ChannelType::Messages {
                "A message from the user"
            } else {
                ""
            };
            view! {
                <textarea name=channel.clone() rows="2" placeholder=placeholder
                    prop:value=current.clone() on:input=move |event| set(event_target_value(&event))></textarea>
            }
            .into_any()
        }
        _ => {
            let set = set.clone();
            view! {
                <textarea name=channel.clone() rows="3" class="json-input" spellcheck="false" placeholder="JSON"
                    prop:value=current.clone() on:input=move |event| set(event_target_value(&event))></textarea>
            }
            .into_any()
        }
    };
    view! {
        <label class="field">
            // Read out as "topics, type list" (the words apart).
            <span>{channel.clone()}<span class="visually-hidden">", type "</span><span class="field-type">{type_name}</span></span>
            {control}
            {(!field.description.is_empty()).then(|| view! { <span class="hint">{field.description.clone()}</span> })}
        </label>
    }
}

/// How a run ended, for people.
#[derive(Clone, PartialEq)]
enum Ending {
    /// Its final state.
    Finished(Value),
    Failed(String),
    Cancelled(u32),
}

/// The run's result, for people: the answer (the last assistant message,
/// rendered), the other channels it set in a short list, the whole state
/// behind a toggle; or why it failed.
#[component]
fn RunResult(editor: Editor, watch: Watch) -> impl IntoView {
    let ending = Memo::new(move |_| {
        watch.log.with(|log| {
            log.events
                .iter()
                .rev()
                .find_map(|event| match &event.payload {
                    // Logs stored before changes hold the final state.
                    EventPayload::RunFinished { output, .. } => Some(Ending::Finished(
                        output
                            .clone()
                            .unwrap_or_else(|| Value::Object(log.final_state())),
                    )),
                    EventPayload::RunFailed { error, .. } => Some(Ending::Failed(error.clone())),
                    EventPayload::RunCancelled { step } => Some(Ending::Cancelled(*step)),
                    _ => None,
                })
        })
    });
    move || {
        if watch.cursor.get().is_some() {
            return None;
        }
        Some(match ending.get()? {
            Ending::Finished(output) => {
                let answer = ChatMessage::final_answer(&output);
                let values = shown_values(&output);
                let state = show_json(&output, 20_000);
                view! {
                    <section class="run-result run-result-finished" data-testid="run-result">
                        {answer.map(|text| view! {
                            <h3>"Answer"</h3>
                            <Markdown text class="run-answer" />
                        })}
                        {(!values.is_empty()).then(|| view! {
                            <dl class="run-values">
                                {values.into_iter().map(|(name, value)| view! {
                                    <dt class="mono">{name}</dt>
                                    <dd>{value}</dd>
                                }).collect_view()}
                            </dl>
                        })}
                        <details class="run-state">
                            <summary>"The whole state (JSON)"</summary>
                            <pre tabindex="0" class="json">{state}</pre>
                        </details>
                    </section>
                }
                .into_any()
            }
            // Why, as a sentence with the nodes named as the canvas names
            // them (the engine's message names them by id, in backticks).
            Ending::Failed(error) => view! {
                <section class="run-result run-result-failed" data-testid="run-result">
                    <h3>"Failed"</h3>
                    <p class="run-error"><crate::components::CodeSpans text=editor.named(&error) /></p>
                </section>
            }
            .into_any(),
            Ending::Cancelled(step) => view! {
                <section class="run-result run-result-cancelled" data-testid="run-result">
                    <h3>"Cancelled"</h3>
                    <p>{format!("Stopped at step {step}.")}</p>
                </section>
            }
            .into_any(),
        })
    }
}

/// The channels of a final state worth a line each: text, numbers, yes or
/// no, short lists and objects (a conversation is the answer above).
fn shown_values(output: &Value) -> Vec<(String, String)> {
    let Some(channels) = output.as_object() else {
        return Vec::new();
    };
    channels
        .iter()
        .filter_map(|(name, value)| {
            let text = match value {
                Value::Null => return None,
                Value::String(text) if text.is_empty() => return None,
                Value::String(text) => text.clone(),
                Value::Array(_) if heddle_engine::state::is_message_list(value) => return None,
                Value::Object(map) if map.is_empty() => return None,
                other => show_json(other, 300),
            };
            Some((name.clone(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use heddle_engine::format::ChannelType;
    use serde_json::json;

    use super::{parse_field, shown_values};
    use crate::run_panel::InputField;

    #[test]
    fn a_result_lists_what_reads_as_a_line_and_leaves_the_conversation_to_the_answer() {
        let output = json!({
            "messages": [{"role": "user", "content": "hi"}],
            "decision": "Refund approved",
            "approved": true,
            "count": 3,
            "notes": "",
            "empty": {},
            "nothing": null
        });
        assert_eq!(
            shown_values(&output),
            [
                ("approved".to_string(), "true".to_string()),
                ("count".to_string(), "3".to_string()),
                ("decision".to_string(), "Refund approved".to_string()),
            ]
        );
    }

    fn field(ty: ChannelType) -> InputField {
        InputField {
            channel: "x".into(),
            ty,
            description: String::new(),
        }
    }

    #[test]
    fn fields_are_read_as_their_channel_types() {
        assert_eq!(
            parse_field(&field(ChannelType::String), " hi ").unwrap(),
            Some(json!("hi"))
        );
        assert_eq!(
            parse_field(&field(ChannelType::Integer), "42").unwrap(),
            Some(json!(42))
        );
        assert_eq!(
            parse_field(&field(ChannelType::Boolean), "true").unwrap(),
            Some(json!(true))
        );
        assert_eq!(
            parse_field(&field(ChannelType::Messages), "What is 6 times 7?").unwrap(),
            Some(json!([{"role": "user", "content": "What is 6 times 7?"}]))
        );
        assert_eq!(
            parse_field(&field(ChannelType::Object), "").unwrap(),
            None,
            "empty: the default"
        );
        let error = parse_field(&field(ChannelType::Integer), "4.5").unwrap_err();
        assert!(error.contains("`x` must be a whole number"), "{error}");
        let error = parse_field(&field(ChannelType::Object), "{nope").unwrap_err();
        assert!(
            error.contains("`x` is not JSON") && error.contains("line 1"),
            "{error}"
        );
    }
}
