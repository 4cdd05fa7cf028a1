//! Importing examples into a dataset from a file (or pasted text): JSON
//! lines as `heddle eval` reads them, or a CSV table whose columns are
//! mapped to the graph's inputs, the reference and the label. The file is
//! read and checked here, with the shared reader the `heddle` command
//! uses, so every problem is named by its line (and column) before
//! anything is sent; then it is added in as few versions as the server's
//! request bounds allow.

use leptos::prelude::*;

use crate::datasets::import::{
    ColumnUse, FileFormat, ImportProblem, InputChannel, Table, batches, examples_from_table,
    guess_mapping, read_json_lines, read_table,
};
use crate::datasets::{Dataset, ExampleInput, NewExamples, add_examples};

/// The most JSON one request carries (the server takes 8 MiB).
const REQUEST_BYTES: usize = 6 * 1024 * 1024;
/// Examples previewed before they are added.
const PREVIEW: usize = 3;

/// The file as read so far.
#[derive(Clone, PartialEq)]
enum Read {
    Nothing,
    /// JSON lines: the examples, or the problems.
    Lines(Result<Vec<ExampleInput>, Vec<ImportProblem>>),
    /// A table, waiting for its mapping.
    Table(Table),
    /// Not even a table.
    Unreadable(ImportProblem),
}

#[component]
pub fn ImportExamples(
    graph_id: String,
    dataset: Dataset,
    /// The graph's input channels, which columns can fill.
    channels: Vec<InputChannel>,
    /// Told of the dataset when the examples are in.
    done: Callback<Dataset>,
    cancel: Callback<()>,
) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let mapping = RwSignal::new(Vec::<ColumnUse>::new());
    let progress = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let channels = StoredValue::new(channels);
    // What the text reads as; a new table gets a first mapping.
    let read = Memo::new(move |_| {
        let text = text.get();
        if text.trim().is_empty() {
            return Read::Nothing;
        }
        let name = name.get();
        match FileFormat::of(&name, &text) {
            FileFormat::JsonLines => Read::Lines(read_json_lines(&text)),
            FileFormat::Csv => match read_table(&name, &text) {
                Ok(table) => Read::Table(table),
                Err(problem) => Read::Unreadable(problem),
            },
        }
    });
    Effect::new(move |_| {
        if let Read::Table(table) = read.get() {
            mapping.set(channels.with_value(|channels| guess_mapping(&table.headers, channels)));
        }
    });
    let examples = Memo::new(move |_| match read.get() {
        Read::Nothing => None,
        Read::Lines(result) => Some(result),
        Read::Table(table) => Some(channels.with_value(|channels| {
            mapping.with(|mapping| examples_from_table(&table, mapping, channels))
        })),
        Read::Unreadable(problem) => Some(Err(vec![problem])),
    });
    let dataset_id = dataset.id.clone();
    let add = Action::new_local(move |examples: &Vec<ExampleInput>| {
        let (graph_id, dataset_id) = (graph_id.clone(), dataset_id.clone());
        let examples = examples.clone();
        async move { add_all(graph_id, dataset_id, examples, progress).await }
    });
    Effect::new(move |_| match add.value().get() {
        Some(Ok(dataset)) => {
            progress.set(None);
            done.run(dataset);
        }
        Some(Err(message)) => {
            progress.set(None);
            error.set(Some(message));
        }
        None => {}
    });
    let pick_file = move |event: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(file) = event
                .target()
                .and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|input| input.files())
                .and_then(|files| files.get(0))
            else {
                return;
            };
            error.set(None);
            if file.size() > crate::datasets::import::MAX_FILE_BYTES as f64 {
                error.set(Some(format!(
                    "{} is larger than {} MiB; split it.",
                    file.name(),
                    crate::datasets::import::MAX_FILE_BYTES >> 20
                )));
                return;
            }
            leptos::task::spawn_local(async move {
                match wasm_bindgen_futures::JsFuture::from(file.text()).await {
                    Ok(value) => {
                        name.set(file.name());
                        text.set(value.as_string().unwrap_or_default());
                    }
                    Err(_) => error.set(Some(format!("{} could not be read.", file.name()))),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = event;
    };
    let mapping_view = move || {
        let Read::Table(table) = read.get() else {
            return None;
        };
        let channels = channels.get_value();
        Some(view! {
            <fieldset class="import-mapping" data-testid="import-mapping">
                <legend>"What each column is"</legend>
                {table.headers.iter().enumerate().map(|(index, header)| {
                    let sample = table.rows.first().and_then(|(_, cells)| cells.get(index)).cloned().unwrap_or_default();
                    let options = column_options(header, &channels);
                    let label = format!("Column {header}");
                    view! {
                        <label class="import-column">
                            <span class="import-column-name">{header.clone()}</span>
                            <span class="version-meta import-column-sample" title=sample.clone()>{sample.clone()}</span>
                            <select aria-label=label data-column=header.clone()
                                on:change=move |event| {
                                    let value = event_target_value(&event);
                                    mapping.update(|mapping| {
                                        if let Some(slot) = mapping.get_mut(index) {
                                            *slot = from_option(&value);
                                        }
                                    });
                                }>
                                {options.into_iter().map(|(value, text)| {
                                    let chosen = value.clone();
                                    view! {
                                        <option value=value
                                            selected=move || mapping.with(|mapping| mapping.get(index).map(to_option) == Some(chosen.clone()))>
                                            {text}
                                        </option>
                                    }
                                }).collect_view()}
                            </select>
                        </label>
                    }
                }).collect_view()}
            </fieldset>
        })
    };
    let outcome = move || {
        examples.get().map(|result| match result {
            Ok(examples) => view! {
                <div class="import-preview" data-testid="import-preview">
                    <p role="status">{format!(
                        "{} example{} ready{}.",
                        examples.len(),
                        if examples.len() == 1 { "" } else { "s" },
                        if examples.len() > PREVIEW { format!("; the first {PREVIEW}") } else { String::new() }
                    )}</p>
                    <ol class="import-samples">
                        {examples.iter().take(PREVIEW).map(|example| view! {
                            <li class="mono">{serde_json::to_string(example).unwrap_or_default()}</li>
                        }).collect_view()}
                    </ol>
                </div>
            }
            .into_any(),
            Err(problems) => view! {
                <div class="import-problems" role="alert" data-testid="import-problems">
                    <p>{match problems.len() {
                        1 => "The file has a problem; nothing was added:".to_string(),
                        n if n >= crate::datasets::import::MAX_PROBLEMS => format!("The file has {n} or more problems; nothing was added. The first:"),
                        n => format!("The file has {n} problems; nothing was added:"),
                    }}</p>
                    <ul>
                        {problems.iter().map(|problem| view! { <li>{problem.to_string()}</li> }).collect_view()}
                    </ul>
                </div>
            }
            .into_any(),
        })
    };
    let ready = move || examples.with(|result| matches!(result, Some(Ok(_))));
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        error.set(None);
        if let Some(Ok(examples)) = examples.get_untracked() {
            add.dispatch(examples);
        }
    };
    let first = NodeRef::<leptos::html::Input>::new();
    crate::components::focus_when_drawn(first);
    view! {
        <form class="import-examples" data-testid="import-examples" on:submit=submit>
            <h3>{format!("Import into “{}”", dataset.name)}</h3>
            <p class="field-hint">
                "JSON lines ("<code>"{\"input\": {…}, \"reference\": …, \"label\": \"…\"}"</code>
                " per line, as "<code>"heddle eval"</code>" reads) or a CSV table with a header row. "
                "The examples are added at the end, as a new version."
            </p>
            <label class="field">
                <span class="field-label">"File"</span>
                <input type="file" node_ref=first data-testid="import-file"
                    accept=".jsonl,.ndjson,.json,.csv,.tsv,text/csv,application/json"
                    on:change=pick_file />
            </label>
            <label class="field">
                <span class="field-label">"Or paste it"</span>
                <textarea class="mono" rows="5" spellcheck="false" data-testid="import-text"
                    placeholder="question,expected&#10;Where is my order?,shipped"
                    prop:value=move || text.get()
                    on:input=move |event| { name.set(String::new()); text.set(event_target_value(&event)); }></textarea>
            </label>
            {mapping_view}
            {outcome}
            {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            {move || progress.get().map(|message| view! { <p class="loading" role="status">{message}</p> })}
            <div class="dialog-actions">
                <button type="button" class="button button-small" on:click=move |_| cancel.run(())>"Cancel"</button>
                <button type="submit" class="button button-small button-primary" data-testid="import-add"
                    disabled=move || !ready() || add.pending().get()>
                    {move || match examples.get() {
                        Some(Ok(examples)) => format!("Add {} example{}", examples.len(), if examples.len() == 1 { "" } else { "s" }),
                        _ => "Add".to_string(),
                    }}
                </button>
            </div>
        </form>
    }
}

/// Adds the examples a request at a time; says how far it got when the
/// server refuses a batch (the batches before it are kept, as versions).
async fn add_all(
    graph_id: String,
    dataset_id: String,
    examples: Vec<ExampleInput>,
    progress: RwSignal<Option<String>>,
) -> Result<Dataset, String> {
    let total = examples.len();
    let mut added = 0;
    let mut last = None;
    for batch in batches(&examples, REQUEST_BYTES) {
        progress.set(Some(format!("Adding {} of {total}…", added + batch.len())));
        let request = NewExamples {
            examples: batch.to_vec(),
        };
        match add_examples(graph_id.clone(), dataset_id.clone(), request).await {
            Ok(dataset) => {
                added += batch.len();
                last = Some(dataset);
            }
            Err(error) if added == 0 => return Err(format!("Nothing was added: {error}")),
            Err(error) => {
                return Err(format!(
                    "The first {added} of {total} were added; the rest were refused: {error}"
                ));
            }
        }
    }
    last.ok_or_else(|| "There was nothing to add.".to_string())
}

/// The choices for a column: skip it, the label, each input channel, or a
/// reference field (`answer`, or the column's own name).
fn column_options(header: &str, channels: &[InputChannel]) -> Vec<(String, String)> {
    let mut options = vec![
        (to_option(&ColumnUse::Skip), "Leave out".to_string()),
        (to_option(&ColumnUse::Label), "Label".to_string()),
    ];
    options.extend(channels.iter().map(|channel| {
        (
            to_option(&ColumnUse::Input(channel.name.clone())),
            format!("Input: {}", channel.name),
        )
    }));
    options.push((
        to_option(&ColumnUse::Reference("answer".into())),
        "Reference: answer".to_string(),
    ));
    if !header.is_empty() && header != "answer" {
        options.push((
            to_option(&ColumnUse::Reference(header.to_string())),
            format!("Reference: {header}"),
        ));
    }
    options
}

/// A column's use as an option's value, and back.
fn to_option(used: &ColumnUse) -> String {
    match used {
        ColumnUse::Skip => "skip".into(),
        ColumnUse::Label => "label".into(),
        ColumnUse::Input(channel) => format!("input:{channel}"),
        ColumnUse::Reference(field) => format!("reference:{field}"),
    }
}

fn from_option(value: &str) -> ColumnUse {
    if let Some(channel) = value.strip_prefix("input:") {
        ColumnUse::Input(channel.to_string())
    } else if let Some(field) = value.strip_prefix("reference:") {
        ColumnUse::Reference(field.to_string())
    } else if value == "label" {
        ColumnUse::Label
    } else {
        ColumnUse::Skip
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::format::ChannelType;

    #[test]
    fn every_columns_choice_reads_back_as_itself() {
        let channels = [InputChannel {
            name: "messages".into(),
            ty: ChannelType::Messages,
        }];
        let options = column_options("expected", &channels);
        let texts: Vec<&str> = options.iter().map(|(_, text)| text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Leave out",
                "Label",
                "Input: messages",
                "Reference: answer",
                "Reference: expected"
            ]
        );
        for (value, _) in &options {
            assert_eq!(&to_option(&from_option(value)), value);
        }
        // A channel name with a colon survives too.
        let odd = ColumnUse::Input("a:b".into());
        assert_eq!(from_option(&to_option(&odd)), odd);
    }
}
