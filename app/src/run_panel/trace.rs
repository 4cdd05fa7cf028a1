//! The trace timeline: a lane per node, a bar per execution placed by
//! when it started and ended, retries and failures marked. Clicking a bar
//! selects its node and moves the replay to its step. Work inside a node's
//! child graphs (a subgraph's, a sub-agent's) has lanes of its own, under
//! that node, named by where it ran (`mathematician › work`); clicking
//! one selects the enclosing node at its step. A fan-out's instances run
//! side by side, so each has a lane of its own (`Research #2`), up to
//! [`INSTANCE_LANES`]; the rest share one. A bar clicked also shows what
//! that execution did under the timeline ([`ExecutionDetail`]).

use leptos::prelude::*;

use super::execution_detail::{Chosen, ExecutionDetail};
use super::{duration, select_node};
use crate::editor::state::Editor;
use crate::live::view::inside_label;
use crate::live::{Execution, Outcome, Watch};
use heddle_engine::run::Hop;

/// How many of a node's fanned-out instances get a lane of their own.
const INSTANCE_LANES: u32 = 24;

/// ` #2` for a hop into the child graph of a fanned-out instance.
fn outer_instance(outer: &Hop) -> String {
    outer
        .instance
        .map(|i| format!(" #{}", i + 1))
        .unwrap_or_default()
}

/// A lane: a node of the run's graph, or a node inside a child graph; for
/// a fanned-out node, one of its instances (or, past [`INSTANCE_LANES`],
/// the rest of them, as `INSTANCE_LANES`).
#[derive(Clone, Debug, PartialEq)]
struct LaneOf {
    node: String,
    within: Vec<Hop>,
    instance: Option<u32>,
    /// The item of the instance the lane is for, in a few words (not for
    /// the lane the instances past [`INSTANCE_LANES`] share).
    item: Option<String>,
}

impl LaneOf {
    fn of(execution: &Execution) -> LaneOf {
        let instance = execution.instance.map(|i| i.min(INSTANCE_LANES));
        LaneOf {
            node: execution.node.clone(),
            within: execution.within.clone(),
            instance,
            item: execution
                .item
                .clone()
                .filter(|_| instance.is_some_and(|i| i < INSTANCE_LANES)),
        }
    }

    /// What the lane is named by, and told apart by: executions with
    /// the same key share the lane (a subgraph's nodes, step after step).
    fn key(&self) -> String {
        let key = match self.within.first() {
            None => self.node.clone(),
            Some(outer) => format!(
                "{}{} › {}",
                outer.node,
                outer_instance(outer),
                self.inside()
            ),
        };
        match self.instance {
            Some(i) => format!("{key} #{}", i + 1),
            None => key,
        }
    }

    /// Where inside its node's child graph the lane is, for a nested lane:
    /// `#2 › helper › write` when the node was fanned out.
    fn inside(&self) -> String {
        let inside = inside_label(&self.within, &self.node);
        match self.within.first().and_then(|outer| outer.instance) {
            Some(i) => format!("#{} › {inside}", i + 1),
            None => inside,
        }
    }

    /// How the lane names its instance: ` #2`, or ` #25+` for the rest.
    fn instance_suffix(&self) -> String {
        match self.instance {
            Some(INSTANCE_LANES) => format!(" #{}+", INSTANCE_LANES + 1),
            Some(i) => format!(" #{}", i + 1),
            None => String::new(),
        }
    }
}

#[component]
pub fn Timeline(editor: Editor, watch: Watch) -> impl IntoView {
    let executions = Memo::new(move |_| watch.log.with(|log| log.executions()));
    let chosen = RwSignal::new(None::<Chosen>);
    let span = Memo::new(move |_| {
        watch.log.with(|log| {
            let start = log.started_us().unwrap_or(0);
            let end = log.last_us().unwrap_or(start);
            (start, end.saturating_sub(start).max(1))
        })
    });
    let lanes = Memo::new(move |_| {
        executions.with(|executions| {
            let mut lanes: Vec<LaneOf> = Vec::new();
            for execution in executions {
                let lane = LaneOf::of(execution);
                if lanes.iter().any(|known| known.key() == lane.key()) {
                    continue;
                }
                // A child graph's lanes go under the node that ran it.
                let at = match lane.within.first() {
                    Some(outer) => lanes
                        .iter()
                        .rposition(|other| {
                            let owner = match other.within.first() {
                                Some(hop) => (hop.node.as_str(), hop.instance),
                                None => (other.node.as_str(), other.instance),
                            };
                            owner == (outer.node.as_str(), outer.instance)
                        })
                        // Else under any lane of the node (its instances
                        // past the lanes of their own share one).
                        .or_else(|| {
                            lanes.iter().rposition(|other| {
                                other
                                    .within
                                    .first()
                                    .map_or(other.node.as_str(), |hop| hop.node.as_str())
                                    == outer.node.as_str()
                            })
                        })
                        .map_or(lanes.len(), |i| i + 1),
                    None => lanes.len(),
                };
                lanes.insert(at, lane);
            }
            lanes
        })
    });
    view! {
        <div class="trace-view">
        <super::turns::TurnPicker editor watch />
        <div class="trace-columns" class:has-detail=move || chosen.with(Option::is_some)>
        <div
            class="timeline"
            // Lanes inside child graphs have longer names: room for them.
            class:has-nested=move || lanes.with(|lanes| lanes.iter().any(|lane| !lane.within.is_empty()))
            class:has-items=move || lanes.with(|lanes| lanes.iter().any(|lane| lane.item.is_some()))
            style=move || format!("--lane-name: {:.0}px", lanes.with(|lanes| name_room(editor, lanes)))
            data-testid="timeline"
        >
            {move || lanes.with(Vec::is_empty).then(|| view! {
                <p class="empty-note">"No node has run yet. Start a run, or open one from the run history."</p>
            })}
            <For each=move || lanes.get() key=LaneOf::key let:lane>
                <Lane editor watch lane executions span chosen />
            </For>
            {move || (!lanes.with(Vec::is_empty)).then(|| view! {
                <div class="timeline-axis">
                    <span>"0"</span>
                    <span>{move || duration(span.get().1)}</span>
                </div>
            })}
        </div>
            <ExecutionDetail editor executions chosen />
        </div>
        </div>
    }
}

#[component]
fn Lane(
    editor: Editor,
    watch: Watch,
    lane: LaneOf,
    executions: Memo<Vec<Execution>>,
    span: Memo<(u64, u64)>,
    chosen: RwSignal<Option<Chosen>>,
) -> impl IntoView {
    let mine = {
        let key = lane.key();
        move || {
            executions.with(|executions| {
                executions
                    .iter()
                    .filter(|execution| LaneOf::of(execution).key() == key)
                    .cloned()
                    .collect::<Vec<_>>()
            })
        }
    };
    let (name, title) = lane_name(editor, &lane);
    let nested = !lane.within.is_empty();
    view! {
        <div class="timeline-lane" class:nested=nested data-lane=lane.key()>
            <span class="timeline-label" title=title>
                {name}
                {lane.item.clone().map(|item| view! { <span class="timeline-item">{item}</span> })}
            </span>
            <div class="timeline-track">
                {move || {
                    let (start, length) = span.get();
                    let cursor = watch.cursor.get();
                    mine()
                        .into_iter()
                        .map(|execution| bar(editor, watch, execution, start, length, cursor, chosen))
                        .collect_view()
                }}
            </div>
        </div>
    }
}

/// A lane's name and its tooltip: named as the canvas names the node, its
/// label (with its id in the tooltip when the two differ); inside a child
/// graph, by where.
fn lane_name(editor: Editor, lane: &LaneOf) -> (String, String) {
    match lane.within.first() {
        None => {
            let node = &lane.node;
            let label = editor.label_of(node);
            let suffix = lane.instance_suffix();
            let mut title = label
                .as_ref()
                .map_or_else(|| node.clone(), |label| format!("{label} ({node})"));
            if let Some(i) = lane.instance {
                title.push_str(&match i {
                    INSTANCE_LANES => format!(": the items from {} on", INSTANCE_LANES + 1),
                    i => format!(": item {} of its fan-out", i + 1),
                });
            }
            if let Some(item) = &lane.item {
                title.push_str(&format!(", {item}"));
            }
            (
                format!("{}{suffix}", label.unwrap_or_else(|| node.clone())),
                title,
            )
        }
        Some(outer) => {
            let inside = lane.inside();
            let outer_name = editor
                .label_of(outer.node.as_str())
                .unwrap_or_else(|| outer.node.to_string());
            let suffix = lane.instance_suffix();
            (
                format!("↳ {inside}{suffix}"),
                format!("Inside {outer_name}: {inside}{suffix}"),
            )
        }
    }
}

/// How wide the lanes' names are drawn, in pixels: room for the longest
/// (a mono 12 px face, an item after it), between 140 and 260 px; past
/// that, it is cut, whole in its tooltip.
fn name_room(editor: Editor, lanes: &[LaneOf]) -> f64 {
    let longest = lanes
        .iter()
        .map(|lane| {
            let item = lane
                .item
                .as_ref()
                .map_or(0, |item| item.chars().count() + 1);
            lane_name(editor, lane).0.chars().count() + item
        })
        .max()
        .unwrap_or(0);
    (longest as f64 * 7.3 + 14.0).clamp(140.0, 260.0)
}

fn bar(
    editor: Editor,
    watch: Watch,
    execution: Execution,
    start: u64,
    length: u64,
    cursor: Option<u32>,
    chosen: RwSignal<Option<Chosen>>,
) -> impl IntoView {
    let which = Chosen::of(&execution);
    let picked = {
        let which = which.clone();
        move || chosen.with(|chosen| chosen.as_ref() == Some(&which))
    };
    let end = execution.end_us.unwrap_or(start + length);
    let left = (execution.start_us.saturating_sub(start)) as f64 / length as f64 * 100.0;
    let width = (end.saturating_sub(execution.start_us) as f64 / length as f64 * 100.0).max(0.6);
    let took = execution
        .end_us
        .map(|end| duration(end.saturating_sub(execution.start_us)))
        .unwrap_or_else(|| "running".into());
    // Named as its lane is, by the node's label (a screen reader hears
    // "Poet · step 1", not "llm · step 1", beside the lane "Poet").
    let mut name = match execution.within.first() {
        Some(outer) => format!(
            "{}{} › {}",
            editor.name_of(outer.node.as_str()),
            outer_instance(outer),
            inside_label(&execution.within, &execution.node)
        ),
        None => editor.name_of(&execution.node),
    };
    if let Some(i) = execution.instance {
        name.push_str(&format!(" #{}", i + 1));
    }
    if let Some(item) = &execution.item {
        name.push_str(&format!(" ({item})"));
    }
    let mut title = format!(
        "{name} · step {} · attempt {} · {took}",
        execution.step, execution.attempt
    );
    // A bar says where its node sent the run (a router, a condition, a
    // human's decision), and a router whether by its `otherwise` (its
    // reply named none of its routes).
    let routed = execution
        .route_taken
        .as_ref()
        .and_then(|taken| Some((taken.route.clone()?, taken.otherwise)))
        .or_else(|| Some((execution.route.clone()?, false)))
        .map(|(route, otherwise)| match otherwise {
            true => format!("→ {route} (its otherwise)"),
            false => format!("→ {route}"),
        });
    if let Some(routed) = &routed {
        title.push_str(&format!(" · {routed}"));
    }
    if let Some(error) = &execution.error {
        title.push_str(&format!("\n{error}"));
    }
    // Inside a child graph, the bar stands for the node that ran it, at
    // that node's step.
    let (node, step) = match execution.within.first() {
        Some(outer) => (outer.node.to_string(), outer.step),
        None => (execution.node.clone(), execution.step),
    };
    let later = cursor.is_some_and(|at| step > at);
    // Beside the bar (drawn after it), left of it when the bar ends past
    // the track's last third.
    let route = routed.map(|routed| {
        let (side, at) = match left + width > 66.0 {
            true => ("right", 100.0 - left),
            false => ("left", left + width),
        };
        view! {
            <span class="timeline-route" class:later=later aria-hidden="true"
                style=format!("{side}: calc({at:.3}% + 6px)")>{routed}</span>
        }
    });
    view! {
        {route}
        <button
            type="button"
            class=format!("timeline-bar outcome-{}", execution.outcome.as_str())
            class:later=later
            class:marked=matches!(execution.outcome, Outcome::Retried | Outcome::Failed)
            class:chosen=picked.clone()
            aria-pressed=move || picked().to_string()
            style:left=format!("{left:.3}%")
            style:width=format!("{width:.3}%")
            title=title.clone()
            aria-label=title
            data-step=step.to_string()
            on:click=move |_| {
                select_node(editor, &node);
                watch.seek(Some(step));
                chosen.set(Some(which.clone()));
            }
        >
            // How long it took, where the bar has room to say so.
            {(width >= 8.0).then(|| view! { <span class="timeline-bar-text">{took}</span> })}
        </button>
    }
}
