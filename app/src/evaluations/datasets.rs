//! The graph's datasets in one dialog: pick one (or make one), read its
//! examples in a table, edit or remove them (editors), import a JSON
//! lines or CSV file into it, or delete it. Every change makes a new
//! version; the versions before it keep what they had.

use leptos::prelude::*;

use super::example_table::ExampleTable;
use super::import_examples::ImportExamples;
use crate::components::{Dialog, FormError};
use crate::datasets::{Dataset, NewDataset, create_dataset, delete_dataset, list_datasets};
use crate::editor::state::Editor;

/// What the dialog shows of the chosen dataset.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Showing {
    Examples,
    Import,
    ConfirmDelete,
}

#[component]
pub fn DatasetsDialog(
    graph_id: String,
    editor: Editor,
    open: RwSignal<bool>,
    can_edit: bool,
) -> impl IntoView {
    let datasets = RwSignal::new(None::<Result<Vec<Dataset>, String>>);
    let reload = RwSignal::new(0u64);
    let chosen = RwSignal::new(String::new());
    let showing = RwSignal::new(Showing::Examples);
    let error = RwSignal::new(None::<String>);
    let said = RwSignal::new(None::<String>);
    let graph = StoredValue::new(graph_id);
    Effect::new(move |_| {
        reload.track();
        let graph_id = graph.get_value();
        leptos::task::spawn_local(async move {
            let listed = list_datasets(graph_id).await;
            if let Ok(list) = &listed {
                let kept = list
                    .iter()
                    .any(|dataset| dataset.id == chosen.get_untracked());
                if !kept {
                    chosen.set(
                        list.first()
                            .map(|dataset| dataset.id.clone())
                            .unwrap_or_default(),
                    );
                }
            }
            datasets.set(Some(listed.map_err(|error| error.to_string())));
        });
    });
    let current = move || {
        datasets.with(|listed| {
            listed
                .as_ref()
                .and_then(|listed| listed.as_ref().ok())
                .and_then(|list| list.iter().find(|dataset| dataset.id == chosen.get()))
                .cloned()
        })
    };
    // A change made here: the list says the new version at once.
    let changed = Callback::new(move |dataset: Dataset| {
        datasets.update(|listed| {
            if let Some(Ok(list)) = listed
                && let Some(slot) = list.iter_mut().find(|known| known.id == dataset.id)
            {
                *slot = dataset;
            }
        });
    });
    let new_name = RwSignal::new(String::new());
    let make = Action::new_local(move |name: &String| {
        let graph_id = graph.get_value();
        let name = name.trim().to_string();
        async move {
            create_dataset(graph_id, NewDataset { name })
                .await
                .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match make.value().get() {
        Some(Ok(dataset)) => {
            new_name.set(String::new());
            said.set(Some(format!("Made “{}”: add examples by importing a file, or with “Add to dataset” on a finished run.", dataset.name)));
            chosen.set(dataset.id);
            showing.set(Showing::Examples);
            reload.update(|n| *n += 1);
        }
        Some(Err(message)) => error.set(Some(message)),
        None => {}
    });
    let remove = Action::new_local(move |id: &String| {
        let graph_id = graph.get_value();
        let id = id.clone();
        async move {
            delete_dataset(graph_id, id)
                .await
                .map_err(|error| error.to_string())
        }
    });
    Effect::new(move |_| match remove.value().get() {
        Some(Ok(())) => {
            said.set(Some("The dataset was deleted.".into()));
            chosen.set(String::new());
            showing.set(Showing::Examples);
            reload.update(|n| *n += 1);
        }
        Some(Err(message)) => {
            showing.set(Showing::Examples);
            error.set(Some(message));
        }
        None => {}
    });
    let first = NodeRef::<leptos::html::Select>::new();
    crate::components::focus_when_drawn(first);
    let options = move || super::dataset_options(datasets.get(), chosen, "No datasets yet");
    let channels = crate::run_panel::input_fields(editor)
        .into_iter()
        .map(|field| crate::datasets::import::InputChannel {
            name: field.channel,
            ty: field.ty,
        })
        .collect::<Vec<_>>();
    let body = move || {
        let dataset = current()?;
        let graph_id = graph.get_value();
        Some(match showing.get() {
            Showing::Examples => view! {
                <ExampleTable graph_id dataset can_edit changed said />
            }
            .into_any(),
            Showing::Import => view! {
                <ImportExamples graph_id dataset channels=channels.clone()
                    done=Callback::new(move |dataset: Dataset| {
                        changed.run(dataset);
                        showing.set(Showing::Examples);
                    })
                    cancel=Callback::new(move |()| showing.set(Showing::Examples)) />
            }
            .into_any(),
            Showing::ConfirmDelete => {
                let id = dataset.id.clone();
                view! {
                    <div class="notice notice-warning dataset-delete" role="alert">
                        <p>{format!(
                            "Delete “{}” and all {} of its versions? This cannot be undone. A dataset that experiments or a publishing gate use is kept: delete them first.",
                            dataset.name, dataset.version + 1
                        )}</p>
                        <div class="dialog-actions">
                            <button type="button" class="button" on:click=move |_| showing.set(Showing::Examples)>
                                "Keep it"
                            </button>
                            <button type="button" class="button button-danger" data-testid="dataset-delete-confirm"
                                disabled=move || remove.pending().get()
                                on:click=move |_| { remove.dispatch(id.clone()); }>
                                "Delete"
                            </button>
                        </div>
                    </div>
                }
                .into_any()
            }
        })
    };
    let close = Callback::new(move |()| open.set(false));
    let submit_new = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        error.set(None);
        said.set(None);
        let name = new_name.get_untracked();
        if name.trim().is_empty() {
            error.set(Some("Name the dataset.".into()));
            return;
        }
        make.dispatch(name);
    };
    view! {
        <Dialog on_close=close labelled_by="datasets-title" class="datasets-dialog">
            <h2 id="datasets-title">"Datasets"</h2>
            <p class="page-sub">
                "Examples to run a version over: what each run is asked and, if you like, what it should answer. "
                "Every change makes a new version; experiments name the version they used."
            </p>
            <div class="dataset-bar">
                <label class="field">
                    <span class="field-label">"Dataset"</span>
                    <select data-testid="datasets-choose" node_ref=first
                        on:change=move |event| {
                            chosen.set(event_target_value(&event));
                            showing.set(Showing::Examples);
                            said.set(None);
                            error.set(None);
                        }>
                        {options}
                    </select>
                </label>
                {can_edit.then(|| view! {
                    <div class="dataset-actions">
                        <button type="button" class="button button-small" data-testid="dataset-import"
                            disabled=move || current().is_none()
                            aria-pressed=move || (showing.get() == Showing::Import).to_string()
                            on:click=move |_| { said.set(None); showing.set(Showing::Import); }>
                            "Import a file…"
                        </button>
                        <button type="button" class="button button-small button-danger-quiet"
                            disabled=move || current().is_none()
                            on:click=move |_| { said.set(None); showing.set(Showing::ConfirmDelete); }>
                            "Delete"
                        </button>
                    </div>
                    <form class="dataset-new" on:submit=submit_new>
                        <label class="field">
                            <span class="field-label">"New dataset"</span>
                            <input type="text" maxlength="64" placeholder="Name, e.g. Refund questions"
                                data-testid="dataset-new-name"
                                prop:value=move || new_name.get()
                                on:input=move |event| new_name.set(event_target_value(&event)) />
                        </label>
                        <button type="submit" class="button button-small" disabled=move || make.pending().get()>
                            "Make"
                        </button>
                    </form>
                })}
            </div>
            <FormError error=Signal::derive(move || error.get()) />
            {move || said.get().map(|text| view! {
                <p class="notice" role="status" data-testid="datasets-said">{text}</p>
            })}
            {move || datasets.get().is_none().then(|| view! { <p class="loading">"Loading datasets…"</p> })}
            {body}
            <div class="dialog-actions">
                <button type="button" class="button" on:click=move |_| open.set(false)>"Close"</button>
            </div>
        </Dialog>
    }
}
