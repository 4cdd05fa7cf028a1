//! One kind of trigger as the Triggers section lists it (webhooks,
//! schedules, chat widgets): its heading, its rows, or "No webhooks." when
//! there are none and the server's error when they could not be loaded,
//! the form that makes one (for editors) and the errors of the row
//! actions. The three kinds differ only in their rows and their form.

use std::future::Future;

use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::components::FormError;
use crate::error::AppError;

/// A trigger kind's list for `graph_id`, loaded when the section is
/// `open` and again each time `changed` moves (an action finished).
pub fn listed<T, F, Fut>(
    open: RwSignal<bool>,
    changed: Signal<usize>,
    graph_id: String,
    fetch: F,
) -> Resource<Result<Vec<T>, AppError>>
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
    F: Fn(String) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<T>, AppError>> + Send + 'static,
{
    Resource::new(
        move || (open.get(), changed.get()),
        move |(open, _)| {
            let graph_id = graph_id.clone();
            async move {
                if open {
                    fetch(graph_id).await
                } else {
                    Ok(Vec::new())
                }
            }
        },
    )
}

/// The sum of actions' versions: moves whenever one of them finishes.
pub fn versions(versions: Vec<Signal<usize>>) -> Signal<usize> {
    Signal::derive(move || versions.iter().map(Get::get).sum())
}

#[component]
pub fn TriggerList<T>(
    /// The heading, e.g. `Schedules`.
    title: &'static str,
    /// What the list holds, in lower case (`schedules`).
    plural: &'static str,
    /// The button that opens the form for a new one.
    new_label: &'static str,
    items: Resource<Result<Vec<T>, AppError>>,
    /// One row.
    row: Callback<T, AnyView>,
    can_edit: bool,
    /// The form that makes one.
    new_form: ViewFn,
    /// What the rows' actions (update, delete, ...) answered with, when
    /// it was an error.
    errors: Vec<Signal<Option<String>>>,
    /// Shown between the heading and the list (a webhook's URL, once).
    #[prop(optional)]
    notice: Option<ViewFn>,
) -> impl IntoView
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
{
    let heading_id = format!("{plural}-title").replace(' ', "-");
    let labelled_by = heading_id.clone();
    view! {
        <section class="trigger-group" aria-labelledby=labelled_by>
            <h3 id=heading_id class="subhead">{title}</h3>
            {notice.map(|notice| notice.run())}
            <Transition fallback=move || view! { <p class="loading">{format!("Loading {plural}…")}</p> }>
                {move || Suspend::new(async move {
                    match items.await {
                        Err(error) => view! {
                            <p class="notice notice-error" role="alert">
                                {format!("The {plural} could not be loaded: {error}")}
                            </p>
                        }
                        .into_any(),
                        Ok(list) if list.is_empty() => {
                            view! { <p class="empty-note">{format!("No {plural}.")}</p> }.into_any()
                        }
                        Ok(list) => view! {
                            <ul class="key-list">
                                {list.into_iter().map(|item| row.run(item)).collect_view()}
                            </ul>
                        }
                        .into_any(),
                    }
                })}
            </Transition>
            {can_edit.then(|| view! {
                <details class="trigger-new">
                    <summary class="button button-small">{new_label}</summary>
                    {new_form.run()}
                </details>
            })}
            {errors.into_iter().map(|error| view! { <FormError error /> }).collect_view()}
        </section>
    }
}
