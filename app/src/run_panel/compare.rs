//! The Compare tab: the run shown next to another run of the graph (by
//! default the newest other run of its thread, so a fork meets the run it
//! branched from): the nodes each ran at each step, where they parted, and
//! their final states channel by channel.

use heddle_engine::ids::{RunId, ThreadId};
use leptos::prelude::*;
use serde_json::Value;

use super::marked::MarkedJson;
use super::{short_id, show_json};
use crate::components::timestamp;
use crate::live::compare::{Comparison, Ran, compare};
use crate::live::{RunLog, Watch};
use crate::runs::RunInfo;

/// How another run to compare with reads in the picker: short id, status,
/// time, who, and whether it is of this thread.
fn label(run: &RunInfo, thread: Option<&ThreadId>) -> String {
    let same = if Some(&run.thread_id) == thread {
        " · this thread"
    } else {
        ""
    };
    let fork = run
        .forked_from
        .as_ref()
        .map(|fork| {
            format!(
                " · fork of {} at step {}",
                short_id(fork.run_id.as_str()),
                fork.step
            )
        })
        .unwrap_or_default();
    format!(
        "{}{fork} · {} · {}{}{same}",
        short_id(run.id.as_str()),
        run.status,
        timestamp(&run.created_at),
        run.started_by
            .as_deref()
            .map(|who| format!(" · {who}"))
            .unwrap_or_default()
    )
}

/// The thread of the run `current`, as the run list gives it.
fn thread_of<'a>(runs: &'a [RunInfo], current: Option<&RunId>) -> Option<&'a ThreadId> {
    runs.iter()
        .find(|run| Some(&run.id) == current)
        .map(|run| &run.thread_id)
}

/// The run to compare with first: the newest other run of the same thread,
/// else the newest other run. `runs` are newest first.
pub fn default_choice<'a>(runs: &'a [RunInfo], current: Option<&RunId>) -> Option<&'a RunInfo> {
    let thread = thread_of(runs, current);
    let others = || runs.iter().filter(move |run| Some(&run.id) != current);
    others()
        .find(|run| Some(&run.thread_id) == thread)
        .or_else(|| others().next())
}

#[component]
pub fn CompareTab(watch: Watch, graph_id: String) -> impl IntoView {
    let runs = RwSignal::new(Vec::<RunInfo>::new());
    let loaded = RwSignal::new(false);
    let picked = RwSignal::new(None::<RunId>);
    let other = RwSignal::new(None::<RunLog>);
    let error = RwSignal::new(None::<String>);
    let only_differences = RwSignal::new(false);
    let at = RwSignal::new(None::<u32>);
    // Whether the person picked the other run (then a refresh keeps it).
    let chosen = RwSignal::new(false);
    let current = Memo::new(move |_| watch.log.with(|log| log.run_id.clone()));

    {
        // The graph's runs, again when the shown run changes.
        Effect::new(move |_| {
            let current = current.get();
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match crate::live::api::runs(&graph_id).await {
                    Ok(list) => {
                        let first =
                            default_choice(&list, current.as_ref()).map(|run| run.id.clone());
                        let _ = runs.try_set(list);
                        let _ = loaded.try_set(true);
                        // A person's pick stays, unless it is now the run shown.
                        let was = picked.try_get_untracked().flatten();
                        let keep = chosen.try_get_untracked() == Some(true)
                            && was.as_ref().is_some_and(|id| Some(id) != current.as_ref());
                        if !keep && was != first {
                            let _ = picked.try_set(first);
                        }
                    }
                    Err(refusal) => {
                        let _ = error.try_set(Some(refusal.to_string()));
                    }
                }
            });
        });
        // The picked run's events.
        Effect::new(move |_| {
            at.set(None);
            let Some(id) = picked.get() else {
                other.set(None);
                return;
            };
            leptos::task::spawn_local(async move {
                match crate::live::api::log(&id).await {
                    Ok(log) => {
                        let _ = other.try_set(Some(log));
                        let _ = error.try_set(None);
                    }
                    Err(refusal) => {
                        let _ = error.try_set(Some(refusal.to_string()));
                    }
                }
            });
        });
    }

    let comparison = Memo::new(move |_| {
        other.with(|other| {
            other
                .as_ref()
                .map(|other| watch.log.with(|log| compare(log, other)))
        })
    });
    let has_others = Memo::new(move |_| {
        let current = current.get();
        runs.with(|runs| runs.iter().any(|run| Some(&run.id) != current.as_ref()))
    });
    let other_label = move || {
        picked
            .get()
            .map(|id| short_id(id.as_str()).to_string())
            .unwrap_or_default()
    };

    view! {
        <div class="compare" data-testid="compare">
            <div class="compare-bar" class:hidden=move || !has_others.get()>
                <label class="field field-inline">
                    <span>{move || format!("Run {} compared with", current.get().map(|id| short_id(id.as_str()).to_string()).unwrap_or_default())}</span>
                    <select data-testid="compare-with"
                        on:change=move |event| {
                            chosen.set(true);
                            picked.set(Some(event_target_value(&event)).filter(|id| !id.is_empty()).map(RunId::from));
                        }>
                        {move || {
                            let current = current.get();
                            let runs = runs.get();
                            let thread = thread_of(&runs, current.as_ref());
                            runs.iter().filter(|run| Some(&run.id) != current.as_ref()).map(|run| {
                                let selected = picked.get().as_ref() == Some(&run.id);
                                view! { <option value=run.id.to_string() selected=selected>{label(run, thread)}</option> }
                            }).collect_view()
                        }}
                    </select>
                </label>
                {move || picked.get().map(|id| view! {
                    <a class="button button-small" href=format!("?run={id}") rel="external" data-testid="compare-open">"Open it"</a>
                })}
                <label class="check">
                    <input type="checkbox" prop:checked=move || only_differences.get()
                        on:change=move |event| only_differences.set(event_target_checked(&event)) />
                    "Only differences"
                </label>
            </div>
            {move || error.get().map(|message| view! { <p class="inline-error" role="alert">{message}</p> })}
            {move || match comparison.get() {
                None => {
                    let said = if !loaded.get() {
                        "Loading the graph's runs…"
                    } else if has_others.get() {
                        "Loading the other run…"
                    } else {
                        "This graph has no other run to compare with yet."
                    };
                    view! { <p class="empty-note">{said}</p> }.into_any()
                }
                Some(comparison) => view! {
                    <ComparisonView comparison only_differences at this="This run".to_string() other=format!("Run {}", other_label()) />
                }.into_any(),
            }}
        </div>
    }
}

#[component]
fn ComparisonView(
    comparison: Comparison,
    only_differences: RwSignal<bool>,
    /// The step whose states are compared; `None` for the runs' ends.
    at: RwSignal<Option<u32>>,
    this: String,
    other: String,
) -> impl IntoView {
    let parted = match comparison.parted_at {
        Some(step) => format!("The runs part at step {step}."),
        None => "The runs took the same steps to the same state.".to_string(),
    };
    let parted_at = comparison.parted_at;
    let steps = comparison.steps.clone();
    let comparison = StoredValue::new(comparison);
    let (this_column, other_column) = (this.clone(), other.clone());
    // Clicking a step compares the states after it; again, the ends.
    let toggle = move |step: u32| {
        at.update(|at| *at = if *at == Some(step) { None } else { Some(step) });
    };
    view! {
        <p class="compare-summary" data-testid="compare-parted">{parted}</p>
        <div class="compare-columns">
            <section>
                <h3>"Steps"</h3>
                <table class="compare-table compare-steps">
                    <thead><tr><th>"Step"</th><th>{this}</th><th>{other}</th></tr></thead>
                    <tbody>
                        {steps.into_iter().map(|pair| {
                            let step = pair.step;
                            let differs = pair.differs;
                            let hidden = move || only_differences.get() && !differs;
                            view! {
                                <tr class:differs=differs class:parted=parted_at == Some(step)
                                    class:hidden=hidden class:selected=move || at.get() == Some(step)
                                    data-step=step.to_string() title="Compare the states after this step"
                                    tabindex="0" on:click=move |_| toggle(step)
                                    on:keydown=move |event| if event.key() == "Enter" { toggle(step) }>
                                    <th scope="row">{step}</th>
                                    <td>{ran_view(pair.left)}</td>
                                    <td>{ran_view(pair.right)}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </section>
            <section>
                <h3 data-testid="compare-state-heading">
                    {move || match at.get() {
                        Some(step) => format!("State after step {step}"),
                        None => "State at the end".to_string(),
                    }}
                </h3>
                <table class="compare-table">
                    <thead><tr><th>"Channel"</th><th>{this_column}</th><th>{other_column}</th></tr></thead>
                    <tbody>
                        {move || comparison.with_value(|comparison| comparison.channels(at.get())).into_iter().map(|pair| {
                            let differs = pair.differs();
                            let hidden = move || only_differences.get() && !differs;
                            view! {
                                <tr class:differs=differs class:hidden=hidden data-channel=pair.channel.clone()>
                                    <th scope="row">{pair.channel.clone()}</th>
                                    <td>{value_view(pair.left.clone(), pair.right.as_ref())}</td>
                                    <td>{value_view(pair.right, pair.left.as_ref())}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </section>
        </div>
    }
}

/// What a run did at a step, as a cell shows it.
fn ran_view(ran: Ran) -> AnyView {
    match ran {
        Ran::Nodes(nodes) if nodes.is_empty() => {
            view! { <span class="muted">"no node"</span> }.into_any()
        }
        Ran::Nodes(nodes) => nodes
            .into_iter()
            .map(|node| view! { <span class="node-chip">{node}</span> })
            .collect_view()
            .into_any(),
        Ran::NotYet => before_branch().into_any(),
        Ran::Ended => view! { <span class="muted">"ended"</span> }.into_any(),
    }
}

/// A channel's value as a cell shows it, with the lines that differ from
/// the other run's value marked.
fn value_view(value: Option<Value>, other: Option<&Value>) -> AnyView {
    match (value, other) {
        (Some(value), Some(other)) if value != *other => {
            view! { <MarkedJson value against=other.clone() limit=1200 /> }.into_any()
        }
        (Some(value), _) => {
            view! { <pre tabindex="0" class="json">{show_json(&value, 1200)}</pre> }.into_any()
        }
        (None, _) => before_branch().into_any(),
    }
}

fn before_branch() -> impl IntoView {
    view! {
        <span class="muted" title="This run branched from another after this step">"before its branch"</span>
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::run::RunStatus;
    use serde_json::Value;

    use super::{default_choice, label};
    use crate::runs::RunInfo;

    fn run(id: &str, thread: &str) -> RunInfo {
        RunInfo {
            id: id.into(),
            graph_id: crate::graphs::GraphId::from_stored("g".into()),
            graph_version: 1,
            thread_id: thread.into(),
            status: RunStatus::Finished,
            input: Value::Null,
            output: None,
            error: None,
            created_at: "2026-11-21T10:00:00Z".into(),
            started_at: None,
            finished_at: None,
            started_by: None,
            origin: crate::runs::RunOrigin::App,
            origin_label: None,
            forked_from: None,
            usage: Default::default(),
        }
    }

    #[test]
    fn the_default_is_the_newest_other_run_of_the_thread_else_the_newest_other() {
        let runs = [run("fork", "t1"), run("other", "t2"), run("original", "t1")];
        let pick =
            |current: &str| default_choice(&runs, Some(&current.into())).map(|run| run.id.as_str());
        assert_eq!(pick("fork"), Some("original"));
        assert_eq!(pick("original"), Some("fork"));
        assert_eq!(pick("other"), Some("fork"));
        // A run the list does not hold yet (just started): the newest.
        assert_eq!(pick("new"), Some("fork"));
        assert_eq!(default_choice(&runs[..1], Some(&"fork".into())), None);
    }

    #[test]
    fn a_choice_reads_short_id_status_time_and_who() {
        let mut choice = run("run-0123456789abcdef", "t1");
        choice.started_by = Some("olivia".into());
        assert_eq!(
            label(&choice, Some(&"t1".into())),
            "01234567 · finished · 2026-11-21 10:00 UTC · olivia · this thread"
        );
        assert_eq!(
            label(&choice, None),
            "01234567 · finished · 2026-11-21 10:00 UTC · olivia"
        );
    }
}
