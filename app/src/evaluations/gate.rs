//! The publishing gate, in the Evaluations section: which dataset version
//! a version must score on, no worse than the live one (less a tolerance),
//! before Publish lets it go live; set, changed or removed by editors.

use leptos::prelude::*;

use crate::datasets::{Dataset, list_datasets};
use crate::experiments::{
    NewPublishGate, PublishGate, get_publish_gate, remove_publish_gate, set_publish_gate,
};

#[component]
pub fn GateControl(graph_id: String, can_edit: bool) -> impl IntoView {
    let gate = RwSignal::new(None::<Result<Option<PublishGate>, String>>);
    let datasets = RwSignal::new(Vec::<Dataset>::new());
    let editing = RwSignal::new(false);
    let chosen = RwSignal::new(String::new());
    let tolerance = RwSignal::new("0".to_string());
    let error = RwSignal::new(None::<String>);
    let id = StoredValue::new(graph_id);
    // Loaded in the browser, when the section is drawn there.
    Effect::new(move |_| {
        let graph_id = id.get_value();
        leptos::task::spawn_local(async move {
            let loaded = get_publish_gate(graph_id.clone()).await;
            gate.set(Some(loaded.map_err(|error| error.to_string())));
            if let Ok(list) = list_datasets(graph_id).await {
                if let Some(first) = list.first() {
                    chosen.set(first.id.clone());
                }
                datasets.set(list);
            }
        });
    });
    let save = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        error.set(None);
        let graph_id = id.get_value();
        let dataset_id = chosen.get_untracked();
        let Ok(tolerance) = tolerance.get_untracked().trim().parse::<f64>() else {
            error.set(Some("Tolerance: a number from 0 to 1.".into()));
            return;
        };
        leptos::task::spawn_local(async move {
            let new = NewPublishGate {
                dataset_id,
                dataset_version: None,
                tolerances: Default::default(),
                tolerance,
            };
            match set_publish_gate(graph_id, new).await {
                Ok(set) => {
                    gate.set(Some(Ok(Some(set))));
                    editing.set(false);
                }
                Err(refused) => error.set(Some(refused.to_string())),
            }
        });
    };
    let remove = move |_| {
        let graph_id = id.get_value();
        leptos::task::spawn_local(async move {
            match remove_publish_gate(graph_id).await {
                Ok(()) => gate.set(Some(Ok(None))),
                Err(refused) => error.set(Some(refused.to_string())),
            }
        });
    };
    let described = move || {
        gate.get().map(|loaded| match loaded {
            Err(message) => format!("Cannot read the publishing gate: {message}"),
            Ok(None) => "No publishing gate: any saved version may be published.".to_string(),
            Ok(Some(gate)) => format!(
                "Publishing gate: a version goes live only when it scores no worse than the live one on “{}” version {}{}.",
                gate.dataset_name.unwrap_or(gate.dataset_id),
                gate.dataset_version,
                Some(gate.tolerance)
                    .filter(|tolerance| *tolerance > 0.0)
                    .map(|tolerance| format!(" (less {tolerance:.2})"))
                    .unwrap_or_default()
            ),
        })
    };
    let is_set = move || matches!(gate.get(), Some(Ok(Some(_))));
    view! {
        <div class="publish-gate" data-testid="publish-gate">
            <p class="publish-gate-text">{described}</p>
            {can_edit.then(|| view! {
                <div class="evaluations-actions">
                    <button type="button" class="button button-small"
                        on:click=move |_| editing.update(|open| *open = !*open)
                        disabled=move || datasets.with(Vec::is_empty)
                        title="Hold back versions that score worse than the live one">
                        {move || if is_set() { "Change gate" } else { "Gate publishing" }}
                    </button>
                    {move || is_set().then(|| view! {
                        <button type="button" class="button button-small" on:click=remove>"Remove gate"</button>
                    })}
                </div>
            })}
            {move || editing.get().then(|| view! {
                <form class="publish-gate-form" on:submit=save>
                    <label class="field">
                        <span class="field-label">"Dataset"</span>
                        <select on:change=move |event| chosen.set(event_target_value(&event))>
                            {datasets.get().into_iter().map(|dataset| {
                                let value = dataset.id.clone();
                                let selected = chosen.get_untracked() == value;
                                view! {
                                    <option value=value selected=selected>
                                        {format!("{} (version {})", dataset.name, dataset.version)}
                                    </option>
                                }
                            }).collect_view()}
                        </select>
                    </label>
                    <label class="field">
                        <span class="field-label">"Tolerance"</span>
                        <span class="field-hint">"How far under the live version's mean a score may fall, 0 to 1."</span>
                        <input type="number" min="0" max="1" step="0.01" required
                            prop:value=move || tolerance.get()
                            on:input=move |event| tolerance.set(event_target_value(&event)) />
                    </label>
                    <button type="submit" class="button button-small button-primary">"Save gate"</button>
                </form>
            })}
            {move || error.get().map(|message| view! {
                <p class="inline-error" role="alert">{message}</p>
            })}
        </div>
    }
}
