//! "Add to dataset": the finished run the panel shows made an example of
//! one of the graph's datasets (its input, and its answer as the
//! reference), so an answer worth keeping becomes one the next version of
//! the graph is scored against (docs/evaluations.md). Offered to editors,
//! on a finished run.

use heddle_engine::run::RunStatus;
use leptos::prelude::*;

use crate::components::{Dialog, FormError};
use crate::datasets::{
    Dataset, FromRun, NewDataset, add_run_to_dataset, create_dataset, list_datasets,
};
use crate::live::Watch;

/// Which dataset the example goes to.
const NEW: &str = "";

/// The button in the run panel's bar, its dialog, and what it last did.
#[component]
pub fn AddToDataset(watch: Watch, graph_id: String, can_run: bool) -> impl IntoView {
    let open = RwSignal::new(false);
    let added = RwSignal::new(None::<String>);
    let run_id = Memo::new(move |_| watch.log.with(|log| log.run_id.clone()));
    // What it said belongs to the run it said it of.
    Effect::new(move |_| {
        run_id.track();
        added.set(None);
    });
    // A memo: the status is set again by every event, and drawing the
    // button anew would close the dialog's focus with it.
    let finished = Memo::new(move |_| can_run && watch.status.get() == Some(RunStatus::Finished));
    // Messages the thread held before this turn (the run's base state).
    let earlier = Memo::new(move |_| {
        watch.log.with(|log| {
            log.base.as_ref().map_or(0, |base| {
                base.values()
                    .filter_map(serde_json::Value::as_array)
                    .map(Vec::len)
                    .max()
                    .unwrap_or(0)
            })
        })
    });
    move || {
        finished.get().then(|| {
            let graph_id = graph_id.clone();
            view! {
                <button type="button" class="button button-small" data-testid="add-to-dataset"
                    title="Keep this run's input, with its answer as the reference, as an example to score new versions against"
                    on:click=move |_| open.set(true)>
                    "Add to dataset"
                </button>
                {move || added.get().map(|text| view! {
                    <span class="run-panel-note" role="status" data-testid="added-to-dataset">{text}</span>
                })}
                {move || open.get().then(|| view! {
                    <AddDialog graph_id=graph_id.clone() run_id open added earlier=earlier.get_untracked() />
                })}
            }
        })
    }
}

/// Chooses the dataset (or names a new one) and adds the run.
#[component]
fn AddDialog(
    graph_id: String,
    run_id: Memo<Option<heddle_engine::ids::RunId>>,
    open: RwSignal<bool>,
    added: RwSignal<Option<String>>,
    /// How many messages the conversation held before this turn.
    earlier: usize,
) -> impl IntoView {
    // A turn of a conversation is kept with what came before it, unless
    // the person says otherwise: a follow-up question means little alone.
    let whole = RwSignal::new(earlier > 0);
    // Loaded into a signal, not read from a resource: a pending resource
    // read here would suspend the page's boundary and draw the dialog
    // again, out of the page, with the focus lost.
    let datasets = RwSignal::new(None::<Result<Vec<Dataset>, String>>);
    {
        let graph_id = graph_id.clone();
        leptos::task::spawn_local(async move {
            let listed = list_datasets(graph_id).await;
            datasets.set(Some(listed.map_err(|error| error.to_string())));
        });
    }
    let chosen = RwSignal::new(NEW.to_string());
    // Set once the person picks: the list arriving later never undoes it.
    let picked = RwSignal::new(false);
    let name = RwSignal::new(String::new());
    let label = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    // The first dataset is chosen once they are known (unless the person
    // picked already); none: a new one.
    Effect::new(move |_| {
        if let Some(Ok(list)) = datasets.get()
            && let Some(first) = list.first()
            && !picked.get_untracked()
        {
            chosen.set(first.id.clone());
        }
    });
    let add = Action::new_local(move |(): &()| {
        let graph_id = graph_id.clone();
        let chosen = chosen.get_untracked();
        let name = name.get_untracked();
        let label = label.get_untracked();
        let run = run_id.get_untracked();
        let with_conversation = whole.get_untracked();
        async move {
            let Some(run_id) = run else {
                return Err("there is no run to add".to_string());
            };
            let dataset_id = if chosen == NEW {
                create_dataset(graph_id.clone(), NewDataset { name })
                    .await
                    .map_err(|error| error.to_string())?
                    .id
            } else {
                chosen
            };
            let label = Some(label.trim().to_string()).filter(|label| !label.is_empty());
            add_run_to_dataset(
                graph_id,
                dataset_id,
                FromRun {
                    run_id,
                    label,
                    reference_channels: None,
                    with_conversation,
                },
            )
            .await
            .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match add.value().get() {
        Some(Ok(dataset)) => {
            added.set(Some(format!(
                "Added to “{}” (version {}, {})",
                dataset.name,
                dataset.version,
                examples(dataset.examples)
            )));
            open.set(false);
        }
        Some(Err(message)) => error.set(Some(message)),
        None => {}
    });
    let close = Callback::new(move |()| open.set(false));
    let first = NodeRef::<leptos::html::Select>::new();
    crate::components::focus_when_drawn(first);
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        error.set(None);
        add.dispatch(());
    };
    let options = move || {
        datasets.get().map(|result| match result {
            Ok(list) => list
                .iter()
                .map(|dataset| {
                    let id = dataset.id.clone();
                    let text = format!("{} ({})", dataset.name, examples(dataset.examples));
                    view! { <option value=id.clone() selected=move || chosen.get() == id>{text}</option> }
                })
                .collect_view()
                .into_any(),
            Err(message) => {
                view! { <option value=NEW disabled=true>{format!("cannot list the datasets: {message}")}</option> }
                    .into_any()
            }
        })
    };
    view! {
        <Dialog on_close=close labelled_by="add-to-dataset-title" class="add-to-dataset">
            <form on:submit=submit>
                <h2 id="add-to-dataset-title">"Add this run to a dataset"</h2>
                <p class="page-sub">"Its input becomes an example, and its answer the reference that new versions of this graph are scored against."</p>
                <label class="field">
                    <span class="field-label">"Dataset"</span>
                    <select data-testid="dataset-choice" node_ref=first
                        on:change=move |event| {
                            picked.set(true);
                            chosen.set(event_target_value(&event));
                        }>
                        {options}
                        <option value=NEW selected=move || chosen.get() == NEW>"New dataset…"</option>
                    </select>
                </label>
                {move || (chosen.get() == NEW).then(|| view! {
                    <label class="field">
                        <span class="field-label">"Name of the new dataset"</span>
                        <input type="text" required maxlength="64" data-testid="dataset-name"
                            placeholder="e.g. Support questions"
                            prop:value=move || name.get()
                            on:input=move |event| name.set(event_target_value(&event)) />
                    </label>
                })}
                <label class="field">
                    <span class="field-label">"Label"</span>
                    <span class="field-hint">"Optional: what this example checks, shown in results."</span>
                    <input type="text" maxlength="200" data-testid="example-label"
                        placeholder="e.g. Refund in euros"
                        prop:value=move || label.get()
                        on:input=move |event| label.set(event_target_value(&event)) />
                </label>
                {(earlier > 0).then(|| view! {
                    <label class="check">
                        <input type="checkbox" data-testid="with-conversation"
                            prop:checked=move || whole.get()
                            on:change=move |event| whole.set(event_target_checked(&event)) />
                        {format!(
                            "With the conversation before it ({earlier} earlier message{}), so the question is asked in its context",
                            if earlier == 1 { "" } else { "s" }
                        )}
                    </label>
                })}
                <FormError error=Signal::derive(move || error.get()) />
                <div class="dialog-actions">
                    <button type="button" class="button" on:click=move |_| open.set(false)>"Cancel"</button>
                    <button type="submit" class="button button-primary" data-testid="add-to-dataset-confirm"
                        disabled=move || add.pending().get()>
                        {move || if add.pending().get() { "Adding…" } else { "Add" }}
                    </button>
                </div>
            </form>
        </Dialog>
    }
}

/// "1 example", "3 examples".
fn examples(count: i64) -> String {
    if count == 1 {
        "1 example".into()
    } else {
        format!("{count} examples")
    }
}
