//! A dataset's latest version as a table, a page at a time: each example's
//! label, input and reference. Editors edit one in place (its label, and
//! its input and reference as JSON, checked before they are sent) or
//! remove it; either makes a new version, and the table says which.

use leptos::prelude::*;
use serde_json::Value;

use crate::datasets::{
    Dataset, DatasetVersion, Example, ExampleInput, dataset_examples, remove_example,
    replace_example,
};

/// Examples on one page of the table.
const PAGE: usize = 50;
/// The most characters of a value shown in a cell (the whole in its title).
const CELL_CHARS: usize = 140;

#[component]
pub fn ExampleTable(
    graph_id: String,
    dataset: Dataset,
    can_edit: bool,
    /// Told of the dataset after a change (its new version).
    changed: Callback<Dataset>,
    /// Where the table says what a change did.
    said: RwSignal<Option<String>>,
) -> impl IntoView {
    let offset = RwSignal::new(0usize);
    let page = RwSignal::new(None::<Result<DatasetVersion, String>>);
    let reload = RwSignal::new(0u64);
    let editing = RwSignal::new(None::<String>);
    let graph = StoredValue::new(graph_id);
    let dataset_id = StoredValue::new(dataset.id.clone());
    Effect::new(move |_| {
        reload.track();
        let from = offset.get();
        let (graph_id, id) = (graph.get_value(), dataset_id.get_value());
        leptos::task::spawn_local(async move {
            let read = dataset_examples(graph_id, id, from, PAGE).await;
            page.set(Some(read.map_err(|error| error.to_string())));
        });
    });
    let after_change = move |dataset: Dataset, what: String| {
        said.set(Some(format!("Version {}: {what}", dataset.version)));
        changed.run(dataset);
        editing.set(None);
        reload.update(|n| *n += 1);
    };
    let remove = Action::new_local(move |example: &Example| {
        let (graph_id, id) = (graph.get_value(), dataset_id.get_value());
        let example = example.clone();
        async move {
            let name = name_of(&example);
            remove_example(graph_id, id, example.id)
                .await
                .map(|dataset| (dataset, name))
                .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match remove.value().get() {
        Some(Ok((dataset, name))) => after_change(
            dataset,
            format!("{name} removed (the versions before keep it)."),
        ),
        Some(Err(message)) => said.set(Some(format!("Not removed: {message}"))),
        None => {}
    });
    let rows = move || {
        page.get().map(|read| match read {
            Err(message) => view! {
                <p class="inline-error" role="alert">{format!("Cannot read the examples: {message}")}</p>
            }
            .into_any(),
            Ok(version) if version.total == 0 => view! {
                <p class="empty-note" data-testid="examples-empty">
                    "No examples in this version. Import a file, or use “Add to dataset” on a finished run."
                </p>
            }
            .into_any(),
            Ok(version) => {
                let start = offset.get_untracked();
                let total = version.total;
                let shown = version.examples.len();
                view! {
                    <div class="example-table-wrap">
                        <table class="compare-table example-table" data-testid="example-table">
                            <caption class="visually-hidden">
                                {format!("Examples of version {}", version.version)}
                            </caption>
                            <thead>
                                <tr>
                                    <th scope="col">"#"</th>
                                    <th scope="col">"Label"</th>
                                    <th scope="col">"Input"</th>
                                    <th scope="col">"Reference"</th>
                                    {can_edit.then(|| view! { <th scope="col"><span class="visually-hidden">"Actions"</span></th> })}
                                </tr>
                            </thead>
                            <tbody>
                                {version.examples.into_iter().enumerate().map(|(index, example)| {
                                    let number = start + index + 1;
                                    let id = example.id.clone();
                                    let is_editing = move || editing.get().as_deref() == Some(id.as_str());
                                    let example = StoredValue::new(example);
                                    view! {
                                        <Show when=is_editing fallback=move || view! {
                                            <ExampleRow number example=example.get_value() can_edit
                                                edit=Callback::new(move |id| editing.set(Some(id)))
                                                remove=Callback::new(move |example| { remove.dispatch(example); }) />
                                        }>
                                            <ExampleEditor graph_id=graph.get_value() dataset_id=dataset_id.get_value()
                                                example=example.get_value()
                                                saved=Callback::new(move |(dataset, what): (Dataset, String)| after_change(dataset, what))
                                                cancel=Callback::new(move |()| editing.set(None)) />
                                        </Show>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                    <div class="example-pages">
                        <span class="version-meta" data-testid="example-range">
                            {format!("{}–{} of {total}", start + 1, start + shown)}
                        </span>
                        <button type="button" class="button button-small" disabled=start == 0
                            on:click=move |_| offset.set(start.saturating_sub(PAGE))>
                            "Previous"
                        </button>
                        <button type="button" class="button button-small"
                            disabled={(start + shown) as i64 >= total}
                            on:click=move |_| offset.set(start + PAGE)>
                            "Next"
                        </button>
                    </div>
                }
                .into_any()
            }
        })
    };
    view! {
        {move || page.get().is_none().then(|| view! { <p class="loading">"Loading examples…"</p> })}
        {rows}
    }
}

/// One example, read.
#[component]
fn ExampleRow(
    number: usize,
    example: Example,
    can_edit: bool,
    edit: Callback<String>,
    remove: Callback<Example>,
) -> impl IntoView {
    let name = name_of(&example);
    let input = Value::Object(example.input.clone());
    let input_text = input_text(&input);
    let input = input.to_string();
    let reference_text = example.reference.as_ref().map(reference_text);
    let reference = example.reference.as_ref().map(Value::to_string);
    let id = example.id.clone();
    let removed = example.clone();
    view! {
        <tr data-example=example.id.clone()>
            <td class="example-number">{number}</td>
            <td>{example.label.clone().unwrap_or_default()}</td>
            <td class="example-value" title=input>{cut(&input_text)}</td>
            <td class="example-value" title=reference.unwrap_or_default()>
                {reference_text.as_deref().map_or_else(|| "–".to_string(), cut)}
            </td>
            {can_edit.then(|| view! {
                <td class="example-actions">
                    <button type="button" class="button button-small"
                        aria-label=format!("Edit {name}")
                        on:click=move |_| edit.run(id.clone())>
                        "Edit"
                    </button>
                    <button type="button" class="button button-small button-danger-quiet"
                        aria-label=format!("Remove {name}")
                        on:click=move |_| remove.run(removed.clone())>
                        "Remove"
                    </button>
                </td>
            })}
        </tr>
    }
}

/// One example, edited in place: its label, and its input and reference
/// as JSON.
#[component]
fn ExampleEditor(
    graph_id: String,
    dataset_id: String,
    example: Example,
    saved: Callback<(Dataset, String)>,
    cancel: Callback<()>,
) -> impl IntoView {
    let label = RwSignal::new(example.label.clone().unwrap_or_default());
    let input = RwSignal::new(pretty(&Value::Object(example.input.clone())));
    let reference = RwSignal::new(example.reference.as_ref().map(pretty).unwrap_or_default());
    let error = RwSignal::new(None::<String>);
    let name = name_of(&example);
    let example_id = example.id.clone();
    let save = Action::new_local(move |edited: &ExampleInput| {
        let (graph_id, dataset_id, example_id) =
            (graph_id.clone(), dataset_id.clone(), example_id.clone());
        let edited = edited.clone();
        let name = name.clone();
        async move {
            replace_example(graph_id, dataset_id, example_id, edited)
                .await
                .map(|dataset| {
                    (
                        dataset,
                        format!("{name} edited (the versions before keep it as it was)."),
                    )
                })
                .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match save.value().get() {
        Some(Ok(done)) => saved.run(done),
        Some(Err(message)) => error.set(Some(message)),
        None => {}
    });
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        match edited(
            &label.get_untracked(),
            &input.get_untracked(),
            &reference.get_untracked(),
        ) {
            Ok(example) => {
                error.set(None);
                save.dispatch(example);
            }
            Err(message) => error.set(Some(message)),
        }
    };
    let first = NodeRef::<leptos::html::Input>::new();
    crate::components::focus_when_drawn(first);
    view! {
        <tr class="example-editing" data-example=example.id.clone()>
            <td colspan="5">
                <form class="example-editor" on:submit=submit
                    on:keydown=move |event| {
                        // Escape leaves the edit, not the dialog.
                        if event.key() == "Escape" {
                            event.stop_propagation();
                            cancel.run(());
                        }
                    }>
                    <label class="field">
                        <span class="field-label">"Label"</span>
                        <input type="text" maxlength="200" node_ref=first placeholder="none"
                            prop:value=move || label.get()
                            on:input=move |event| label.set(event_target_value(&event)) />
                    </label>
                    <label class="field">
                        <span class="field-label">"Input (JSON object of channel values)"</span>
                        <textarea class="mono" rows="5" spellcheck="false" data-testid="example-input"
                            prop:value=move || input.get()
                            on:input=move |event| input.set(event_target_value(&event))></textarea>
                    </label>
                    <label class="field">
                        <span class="field-label">"Reference (JSON; empty for none)"</span>
                        <textarea class="mono" rows="3" spellcheck="false" data-testid="example-reference"
                            prop:value=move || reference.get()
                            on:input=move |event| reference.set(event_target_value(&event))></textarea>
                    </label>
                    {move || error.get().map(|message| view! {
                        <p class="inline-error" role="alert">{message}</p>
                    })}
                    <div class="dialog-actions">
                        <button type="button" class="button button-small" on:click=move |_| cancel.run(())>"Cancel"</button>
                        <button type="submit" class="button button-small button-primary" data-testid="example-save"
                            disabled=move || save.pending().get()>
                            "Save as a new version"
                        </button>
                    </div>
                </form>
            </td>
        </tr>
    }
}

/// The example as edited, or what is wrong with which field.
fn edited(label: &str, input: &str, reference: &str) -> Result<ExampleInput, String> {
    let input = match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(input)) => input,
        Ok(_) => return Err("Input: a JSON object, one value per input channel.".into()),
        Err(error) => return Err(format!("Input: not JSON ({error}).")),
    };
    let reference = match reference.trim() {
        "" => None,
        text => Some(
            serde_json::from_str::<Value>(text)
                .map_err(|error| format!("Reference: not JSON ({error})."))?,
        ),
    };
    let label = Some(label.trim().to_string()).filter(|label| !label.is_empty());
    Ok(ExampleInput {
        input,
        reference,
        label,
    })
}

/// An input as a person reads it: the message asked, when the input is
/// one chat (or one text); else its JSON.
fn input_text(input: &Value) -> String {
    let single = input
        .as_object()
        .is_some_and(|channels| channels.len() == 1);
    let asked = single
        .then(|| {
            input
                .as_object()
                .and_then(|channels| channels.values().next())
        })
        .flatten()
        .and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Array(messages) if messages.len() == 1 => messages[0]
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        });
    asked.unwrap_or_else(|| input.to_string())
}

/// A reference as a person reads it: `field: value` for an object of
/// plain values (`answer: 14 days`); else its JSON.
fn reference_text(reference: &Value) -> String {
    let plain = |value: &Value| match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(_) | Value::Bool(_) => Some(value.to_string()),
        _ => None,
    };
    match reference {
        Value::Object(fields) if !fields.is_empty() => fields
            .iter()
            .map(|(field, value)| plain(value).map(|value| format!("{field}: {value}")))
            .collect::<Option<Vec<_>>>()
            .map_or_else(|| reference.to_string(), |parts| parts.join(" · ")),
        other => plain(other).unwrap_or_else(|| other.to_string()),
    }
}

/// How a person names an example: its label, else "the example".
fn name_of(example: &Example) -> String {
    example
        .label
        .as_ref()
        .map_or_else(|| "The example".to_string(), |label| format!("“{label}”"))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A value's text cut to what a cell shows.
fn cut(text: &str) -> String {
    if text.chars().count() <= CELL_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(CELL_CHARS).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_checked_field_by_field() {
        let example = edited(" one ", r#"{"q": 1}"#, "").unwrap();
        assert_eq!(example.label.as_deref(), Some("one"));
        assert_eq!(example.reference, None);
        assert!(
            edited("", "[1]", "")
                .unwrap_err()
                .starts_with("Input: a JSON object")
        );
        assert!(
            edited("", "{", "")
                .unwrap_err()
                .starts_with("Input: not JSON")
        );
        assert!(
            edited("", "{}", "{")
                .unwrap_err()
                .starts_with("Reference: not JSON")
        );
        let example = edited("  ", "{}", r#""14 days""#).unwrap();
        assert_eq!(example.label, None);
        assert_eq!(example.reference, Some(Value::from("14 days")));
    }

    #[test]
    fn cells_read_as_a_person_would_say_them() {
        let chat = serde_json::json!({"messages": [{"role": "user", "content": "Refund?"}]});
        assert_eq!(input_text(&chat), "Refund?");
        let two = serde_json::json!({"q": "a", "n": 2});
        assert_eq!(input_text(&two), two.to_string());
        let thread = serde_json::json!({"messages": [{"role": "user", "content": "a"},
                                                     {"role": "assistant", "content": "b"}]});
        assert_eq!(input_text(&thread), thread.to_string());
        let reference = serde_json::json!({"answer": "14 days", "exact": true});
        assert_eq!(reference_text(&reference), "answer: 14 days · exact: true");
        let nested = serde_json::json!({"answer": {"a": 1}});
        assert_eq!(reference_text(&nested), nested.to_string());
        assert_eq!(reference_text(&Value::from("yes")), "yes");
    }

    #[test]
    fn long_values_are_cut_in_cells() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(CELL_CHARS + 5);
        let shown = cut(&long);
        assert_eq!(shown.chars().count(), CELL_CHARS + 1);
        assert!(shown.ends_with('…'));
    }
}
