//! Starting an experiment: which dataset (and version), which version of
//! the graph (the one on screen by default), how many repetitions, and
//! the scorers, as JSON a person can edit, filled in with a sensible
//! first one (a chat graph's answer against the reference answer).

use leptos::prelude::*;

use crate::components::{Dialog, FormError};
use crate::datasets::{Dataset, list_datasets};
use crate::editor::state::Editor;
use crate::experiments::{NewExperiment, start_experiment};
use heddle_engine::format::ChannelType;

#[component]
pub fn NewExperimentDialog(
    graph_id: String,
    editor: Editor,
    version: RwSignal<i64>,
    open: RwSignal<bool>,
    /// Told when the experiment started.
    started: Callback<()>,
    /// The graph's experiments that recorded their replies (id, name),
    /// newest first: a new one may replay them.
    recorded: Signal<Vec<(String, String)>>,
) -> impl IntoView {
    let datasets = RwSignal::new(None::<Result<Vec<Dataset>, String>>);
    {
        let graph_id = graph_id.clone();
        leptos::task::spawn_local(async move {
            let listed = list_datasets(graph_id).await;
            datasets.set(Some(listed.map_err(|error| error.to_string())));
        });
    }
    let chosen = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some(Ok(list)) = datasets.get()
            && let Some(first) = list.first()
            && chosen.get_untracked().is_empty()
        {
            chosen.set(first.id.clone());
        }
    });
    let graph_version = RwSignal::new(version.get_untracked().to_string());
    let repetitions = RwSignal::new("1".to_string());
    let max_tokens = RwSignal::new(String::new());
    let scorers = RwSignal::new(default_scorers(editor));
    // "" asks the models; "record" keeps their replies; "replay:<id>"
    // gives back those of experiment <id>.
    let replies = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let start = Action::new_local(move |(): &()| {
        let graph_id = graph_id.clone();
        let request = request(
            chosen.get_untracked(),
            &graph_version.get_untracked(),
            &repetitions.get_untracked(),
            &max_tokens.get_untracked(),
            &scorers.get_untracked(),
            &replies.get_untracked(),
        );
        async move {
            start_experiment(graph_id, request?)
                .await
                .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match start.value().get() {
        Some(Ok(_)) => {
            open.set(false);
            started.run(());
        }
        Some(Err(message)) => error.set(Some(message)),
        None => {}
    });
    let first = NodeRef::<leptos::html::Select>::new();
    crate::components::focus_when_drawn(first);
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        error.set(None);
        start.dispatch(());
    };
    let options = move || {
        super::dataset_options(
            datasets.get(),
            chosen,
            "No datasets yet: add a finished run to one first",
        )
    };
    let close = Callback::new(move |()| open.set(false));
    view! {
        <Dialog on_close=close labelled_by="new-experiment-title" class="new-experiment">
            <form on:submit=submit>
                <h2 id="new-experiment-title">"New experiment"</h2>
                <p class="page-sub">
                    "Runs a version of this graph on every example of a dataset and scores each answer. "
                    "Its runs take their turns in the queue like any others, a few at a time."
                </p>
                <label class="field">
                    <span class="field-label">"Dataset"</span>
                    <select data-testid="experiment-dataset" node_ref=first required
                        on:change=move |event| chosen.set(event_target_value(&event))>
                        {options}
                    </select>
                </label>
                <div class="field-row">
                    <label class="field">
                        <span class="field-label">"Graph version"</span>
                        <input type="number" min="1" required data-testid="experiment-version"
                            prop:value=move || graph_version.get()
                            on:input=move |event| graph_version.set(event_target_value(&event)) />
                    </label>
                    <label class="field">
                        <span class="field-label">"Repetitions"</span>
                        <input type="number" min="1" max="10" required
                            prop:value=move || repetitions.get()
                            on:input=move |event| repetitions.set(event_target_value(&event)) />
                    </label>
                    <label class="field">
                        <span class="field-label">"Token ceiling"</span>
                        <input type="number" min="1" placeholder="none"
                            prop:value=move || max_tokens.get()
                            on:input=move |event| max_tokens.set(event_target_value(&event)) />
                    </label>
                </div>
                <label class="field">
                    <span class="field-label">"Model and tool replies"</span>
                    <select data-testid="experiment-replies"
                        on:change=move |event| replies.set(event_target_value(&event))>
                        <option value="">"Ask the models and tools"</option>
                        <option value="record">"Ask them, and record their replies"</option>
                        // Keyed: an option picked stays picked as the list
                        // is read again while an experiment runs.
                        <For each=move || recorded.get() key=|(id, _)| id.clone() let:entry>
                            <option value=format!("replay:{}", entry.0)>{format!("Replay those of “{}”", entry.1)}</option>
                        </For>
                    </select>
                    <span class="field-hint">
                        "A replay gives every call its recorded reply (only calls whose request changed are made, and recorded): deterministic, offline and free."
                    </span>
                </label>
                <label class="field">
                    <span class="field-label">"Scorers"</span>
                    <span class="field-hint">
                        "JSON: exact, contains, regex, json_schema, expression, script, trajectory, threshold, judge (docs/evaluations.md)."
                    </span>
                    <textarea class="mono" rows="6" spellcheck="false" data-testid="experiment-scorers"
                        prop:value=move || scorers.get()
                        on:input=move |event| scorers.set(event_target_value(&event))></textarea>
                </label>
                <FormError error=Signal::derive(move || error.get()) />
                <div class="dialog-actions">
                    <button type="button" class="button" on:click=move |_| open.set(false)>"Cancel"</button>
                    <button type="submit" class="button button-primary" data-testid="start-experiment"
                        disabled=move || start.pending().get()>
                        {move || if start.pending().get() { "Starting…" } else { "Start" }}
                    </button>
                </div>
            </form>
        </Dialog>
    }
}

/// The request the form says, or what is wrong with it (which field).
fn request(
    dataset: String,
    version: &str,
    repetitions: &str,
    max_tokens: &str,
    scorers: &str,
    replies: &str,
) -> Result<NewExperiment, String> {
    if dataset.is_empty() {
        return Err("Choose a dataset.".into());
    }
    let graph_version = version
        .trim()
        .parse::<i64>()
        .map_err(|_| "Graph version: a whole number.".to_string())?;
    let repetitions = repetitions
        .trim()
        .parse::<u32>()
        .map_err(|_| "Repetitions: a whole number from 1 to 10.".to_string())?;
    let max_tokens = match max_tokens.trim() {
        "" => None,
        text => Some(
            text.parse::<u64>()
                .map_err(|_| "Token ceiling: a whole number, or nothing.".to_string())?,
        ),
    };
    let scorers: Vec<serde_json::Value> = serde_json::from_str(scorers)
        .map_err(|error| format!("Scorers: not a JSON list ({error})."))?;
    let replay_from = replies.strip_prefix("replay:").map(str::to_owned);
    let record_replies = replies == "record" || replay_from.is_some();
    Ok(NewExperiment {
        dataset_id: dataset,
        dataset_version: None,
        graph_version: Some(graph_version),
        name: None,
        scorers,
        repetitions: Some(repetitions),
        max_tokens,
        max_cost_usd: None,
        record_replies,
        replay_from,
    })
}

/// A first scorer that fits the graph: for a chat graph, whether its last
/// answer holds the reference answer; otherwise, whether its output
/// equals the reference.
fn default_scorers(editor: Editor) -> String {
    let chat = crate::run_panel::input_fields(editor)
        .into_iter()
        .find(|field| field.ty == ChannelType::Messages)
        .map(|field| field.channel);
    let scorers = match chat {
        Some(channel) => serde_json::json!([{
            "kind": "contains",
            "name": "answer",
            "of": format!("last(output.{channel}).content"),
            // A chat run's reference is its answer (`Add to dataset`).
            "expected": "reference.answer",
            "ignore_case": true
        }]),
        None => serde_json::json!([{
            "kind": "exact",
            "name": "matches the reference",
            "of": "output",
            "expected": "reference"
        }]),
    };
    serde_json::to_string_pretty(&scorers).unwrap_or_else(|_| "[]".into())
}
