//! The state inspector: the run's state after each super-step, with what
//! that step changed highlighted next to the value before, and each node
//! execution of the step with what it wrote. From any step, an editor can
//! fork: edit the state and re-run from there as a new branch of the
//! thread; the original run stays as it was.

use leptos::prelude::*;
use serde_json::Value;

use super::fork::ForkForm;
use super::marked::MarkedJson;
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
                // The run's own nodes: a child graph's steps are its own.
                .filter(|execution| execution.within.is_empty() && Some(execution.step) == step)
                .collect();
            (state, changed, before, executions)
        })
    });
    // Which nodes ran in each step, by the names the canvas shows.
    let ran = Memo::new(move |_| {
        let mut ran: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
        watch.log.with(|log| {
            for execution in log.executions().into_iter().filter(|e| e.within.is_empty()) {
                let names = ran.entry(execution.step).or_default();
                let name = editor.name_of(&execution.node);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        });
        ran
    });
    let used = Memo::new(move |_| watch.log.with(|log| log.usage_by_step()));
    let forking = RwSignal::new(false);
    let label_of = Callback::new(move |id: String| editor.label_of(&id));
    view! {
        <div class="state-inspector" data-testid="state-inspector">
            <nav class="state-steps" aria-label="Steps">
                {move || last.get().map(|last| (first.get()..=last).map(|at| {
                    let names = ran.with(|ran| ran.get(&at).map(|names| names.join(", ")));
                    let usage = used.with(|used| used.get(&at).and_then(super::usage::summary));
                    let title = match (&names, &usage) {
                        (Some(names), Some(usage)) => Some(format!("{names}: {usage}")),
                        (names, _) => names.clone(),
                    };
                    view! {
                        <button type="button" class="state-step" data-step=at.to_string()
                            title=title
                            aria-current=move || (step() == Some(at)).then_some("step")
                            on:click=move |_| watch.seek((at != last).then_some(at))>
                            <span class="state-step-number">{format!("Step {at}")}</span>
                            {names.map(|names| view! { <span class="state-step-nodes">{names}</span> })}
                            {usage.map(|usage| view! { <span class="state-step-usage">{usage}</span> })}
                        </button>
                    }
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
                                                // What this step changed, marked in the value;
                                                // messages' authors named as the canvas names them.
                                                <MarkedJson value=value.clone()
                                                    against=if was_changed { previous.clone() } else { value.clone() }
                                                    label_of=label_of />
                                                {was_changed.then(|| view! {
                                                    <details class="was">
                                                        <summary>"changed in this step; before"</summary>
                                                        <MarkedJson value=previous against=value.clone() label_of=label_of />
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
                                        <strong>{editor.name_of(&execution.node)}</strong>
                                        <span class="version-meta">
                                            {execution.outcome.as_str()}
                                            {took.map(|took| format!(" · {took}"))}
                                            {execution.route.clone().map(|route| format!(" · route {route}"))}
                                            {(execution.attempt > 1).then(|| format!(" · attempt {}", execution.attempt))}
                                        </span>
                                        <details>
                                            <summary>"Input: the state before this step"</summary>
                                            <pre tabindex="0" class="json">{show_json(&Value::Object(before.clone()), 4000)}</pre>
                                        </details>
                                        {execution.update.map(|update| view! {
                                            <details open>
                                                <summary>"Output"</summary>
                                                <pre tabindex="0" class="json">{show_json(&update, 4000)}</pre>
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
