//! The state inspector: the run's state after each super-step, with what
//! that step changed highlighted next to the value before, and each node
//! execution of the step with what it wrote. From any step, an editor can
//! fork: edit the state and re-run from there as a new branch of the
//! thread; the original run stays as it was.

use leptos::prelude::*;
use serde_json::{Map, Value};

use super::{duration, show_json};
use crate::editor::state::Editor;
use crate::live::Watch;

#[component]
pub fn StateTab(editor: Editor, watch: Watch, can_run: bool) -> impl IntoView {
    let last = Memo::new(move |_| watch.log.with(|log| log.last_step()));
    let first = Memo::new(move |_| watch.log.with(|log| log.first_step()).unwrap_or(0));
    // The step shown: the replay's, else the newest that finished.
    let step = move || watch.cursor.get().or(last.get());
    let snapshot = Memo::new(move |_| {
        let step = step();
        watch.log.with(|log| {
            let (state, changed) = log.state_after(step);
            let before = match step {
                Some(step) if Some(step) > log.first_step() => log.state_after(Some(step - 1)).0,
                _ => log.state_after(None).0,
            };
            let executions: Vec<_> = log
                .executions()
                .into_iter()
                .filter(|execution| Some(execution.step) == step)
                .collect();
            (state, changed, before, executions)
        })
    });
    let forking = RwSignal::new(false);
    view! {
        <div class="state-inspector" data-testid="state-inspector">
            <nav class="state-steps" aria-label="Steps">
                {move || last.get().map(|last| (first.get()..=last).map(|at| view! {
                    <button type="button" class="state-step" data-step=at.to_string()
                        aria-current=move || (step() == Some(at)).then_some("step")
                        on:click=move |_| watch.seek((at != last).then_some(at))>
                        {format!("Step {at}")}
                    </button>
                }).collect_view())}
            </nav>
            <div class="state-detail">
                {move || step().is_none().then(|| view! {
                    <p class="empty-note">"No step has finished yet."</p>
                })}
                {move || step().map(|at| {
                    let (state, changed, before, executions) = snapshot.get();
                    let fork_state = state.clone();
                    view! {
                        <div class="state-heading">
                            <h3>{format!("State after step {at}")}</h3>
                            {(can_run && !forking.get()).then(|| view! {
                                <button type="button" class="button button-small" data-testid="fork-open"
                                    title="Edit this state and run on from here as a new branch"
                                    on:click=move |_| forking.set(true)>"Fork from here…"</button>
                            })}
                        </div>
                        {move || forking.get().then(|| view! {
                            <ForkForm editor watch step=at state=fork_state.clone() open=forking />
                        })}
                        <table class="state-table">
                            <tbody>
                                {state.iter().map(|(channel, value)| {
                                    let was_changed = changed.contains(channel);
                                    let previous = before.get(channel).cloned().unwrap_or(Value::Null);
                                    view! {
                                        <tr class:changed=was_changed data-channel=channel.clone()>
                                            <th scope="row">{channel.clone()}</th>
                                            <td>
                                                <pre class="json">{show_json(value, 2000)}</pre>
                                                {was_changed.then(|| view! {
                                                    <details class="was">
                                                        <summary>"changed in this step; before"</summary>
                                                        <pre class="json">{show_json(&previous, 2000)}</pre>
                                                    </details>
                                                })}
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                        <h3>"Nodes of this step"</h3>
                        <ul class="step-executions">
                            {executions.into_iter().map(|execution| {
                                let took = execution.end_us.map(|end| duration(end.saturating_sub(execution.start_us)));
                                view! {
                                    <li class=format!("step-execution outcome-{}", execution.outcome.as_str())>
                                        <strong>{execution.node.clone()}</strong>
                                        <span class="version-meta">
                                            {execution.outcome.as_str()}
                                            {took.map(|took| format!(" · {took}"))}
                                            {execution.route.clone().map(|route| format!(" · route {route}"))}
                                            {(execution.attempt > 1).then(|| format!(" · attempt {}", execution.attempt))}
                                        </span>
                                        <details>
                                            <summary>"Input: the state before this step"</summary>
                                            <pre class="json">{show_json(&Value::Object(before.clone()), 4000)}</pre>
                                        </details>
                                        {execution.update.map(|update| view! {
                                            <details open>
                                                <summary>"Output"</summary>
                                                <pre class="json">{show_json(&update, 4000)}</pre>
                                            </details>
                                        })}
                                        {execution.error.map(|error| view! { <p class="inline-error">{error}</p> })}
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }
                })}
            </div>
        </div>
    }
}

/// The fork form: the state after `step` as JSON, checked as you type by
/// the engine's own rule, then a new run from the step after it.
#[component]
fn ForkForm(
    editor: Editor,
    watch: Watch,
    step: u32,
    state: Map<String, Value>,
    open: RwSignal<bool>,
) -> impl IntoView {
    let original = StoredValue::new(serde_json::to_string_pretty(&state).unwrap_or_default());
    let text = RwSignal::new(original.get_value());
    let state = StoredValue::new(state);
    let error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    // Where the fork starts: the step's own nodes, or a chosen node.
    let start_at = RwSignal::new(String::new());
    let all_nodes = move || super::node_ids(editor);
    // The channels whose values the person changed.
    let edits = move || -> Result<Map<String, Value>, String> {
        let edited: Value = serde_json::from_str(&text.get())
            .map_err(|e| format!("not JSON: {e} (line {}, column {})", e.line(), e.column()))?;
        let Value::Object(edited) = edited else {
            return Err("the state must be a JSON object of channel values".into());
        };
        let edits: Map<String, Value> = edited
            .into_iter()
            .filter(|(channel, value)| state.with_value(|state| state.get(channel) != Some(value)))
            .collect();
        editor.skeleton.with(|document| {
            heddle_engine::state::check_edits(&document.state.channels, &edits)
                .map_err(|error| error.to_string())
        })?;
        Ok(edits)
    };
    let problem = move || edits().err();
    let submit = move |_| {
        let Ok(edits) = edits() else {
            return;
        };
        let Some(run_id) = watch
            .log
            .with_untracked(|log| (!log.run_id.is_empty()).then(|| log.run_id.clone()))
        else {
            return;
        };
        pending.set(true);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let start_at = Some(start_at.get_untracked()).filter(|node| !node.is_empty());
            match crate::live::api::fork(&run_id, step + 1, edits, start_at).await {
                Ok((run, _)) => {
                    open.set(false);
                    super::start::follow(&run);
                }
                Err(message) => error.set(Some(message)),
            }
            pending.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (run_id, edits, open);
    };
    view! {
        <div class="fork-form" data-testid="fork-form">
            <p class="hint">
                {format!("Edit the state after step {step}; the run goes on from step {} as a new branch of its thread. The original run is not changed.", step + 1)}
            </p>
            <textarea class="json-input" rows="10" spellcheck="false" aria-label="State to fork with"
                prop:value=move || text.get()
                on:input=move |event| text.set(event_target_value(&event))></textarea>
            <label class="field field-inline">
                <span>"Go on with"</span>
                <select data-testid="fork-start-at" on:change=move |event| start_at.set(event_target_value(&event))>
                    <option value="">{format!("step {}'s own nodes", step + 1)}</option>
                    <For each=all_nodes key=|id| id.clone() let:id>
                        <option value=id.clone()>{format!("node {id}")}</option>
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
                <button type="button" class="button" disabled=move || original.with_value(|original| text.with(|text| text == original))
                    on:click=move |_| text.set(original.get_value())>"Undo edits"</button>
                <button type="button" class="button" on:click=move |_| open.set(false)>"Cancel"</button>
            </div>
        </div>
    }
}
