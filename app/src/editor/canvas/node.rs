//! One node on the canvas: its card (kind icon, label, status while a run
//! is watched, ports), drawn with less detail as the view zooms out. It is
//! in the Tab order with a label for screen readers; its keys are the
//! canvas's (`node_keys.rs`), as its presses are (`pressed.rs`).

use crate::editor::attr_keys::{DataNode, DataState};
use crate::editor::state::{Editor, NodeView};
use crate::live::RunView;
use heddle_engine::validate::Problem;
use leptos::prelude::*;

use super::{Drawn, Selection};

#[component]
pub(super) fn CanvasNode(
    editor: Editor,
    selection: Selection,
    node: NodeView,
    live: RwSignal<RunView>,
    problems: Memo<Vec<Problem>>,
    drawn: Drawn,
) -> impl IntoView {
    let id = node.id.get_value();
    let selected = {
        let id = id.clone();
        Memo::new(move |_| selection.nodes.with(|selected| selected.contains(&id)))
    };
    let state = {
        let id = id.clone();
        move || live.with(|view| view.state_of(id.as_str()))
    };
    let stats = {
        let id = id.clone();
        Memo::new(move |_| live.with(|view| view.stats.get(id.as_str()).cloned()))
    };
    // How many times it ran; a fanned-out node says how many items.
    let runs = move || {
        stats.with(|stats| {
            let stats = stats.as_ref()?;
            match stats.instances.len() {
                0 => (stats.runs > 1).then(|| format!("×{}", stats.runs)),
                1 => Some("1 item".to_string()),
                items => Some(format!("{items} items")),
            }
        })
    };
    let badges = move || {
        stats.with(|stats| {
            let stats = stats.as_ref()?;
            let took = stats.last_duration_us.map(crate::run_panel::duration);
            let usage = &stats.usage;
            let tokens = (!usage.is_empty()).then(|| {
                let cost = if usage.unpriced_calls == usage.calls {
                    String::new()
                } else {
                    format!(" · {}", crate::run_panel::usage::cost(usage.cost_usd))
                };
                (
                    format!("{} tok{cost}", crate::run_panel::usage::tokens(usage.tokens())),
                    crate::run_panel::usage::summary(usage).unwrap_or_default(),
                )
            });
            let breakers: Vec<(String, &'static str)> = stats
                .breakers
                .iter()
                .map(|(tool, state)| {
                    let state = match state {
                        heddle_engine::tools::BreakerState::HalfOpen => "half-open",
                        _ => "open",
                    };
                    (tool.clone(), state)
                })
                .collect();
            (took.is_some() || tokens.is_some() || !breakers.is_empty()).then(|| view! {
                <span class="canvas-node-badges">
                    {took.map(|took| view! { <span class="node-badge" title="How long its last run took">{took}</span> })}
                    {tokens.map(|(tokens, detail)| view! { <span class="node-badge" title=format!("Model calls: {detail}")>{tokens}</span> })}
                    {breakers.into_iter().map(|(tool, state)| view! {
                        <span
                            class=format!("node-badge breaker-badge breaker-{state}")
                            data-testid="breaker-badge"
                            title=format!("The circuit breaker of `{tool}` is {state}: calls fail at once until it closes")
                        >
                            {format!("{tool}: {state}")}
                        </span>
                    }).collect_view()}
                </span>
            })
        })
    };
    // Work inside its child graph (a subgraph's, a sub-agent's), while it
    // runs: where, and how many executions inside ended.
    let inside = move || {
        stats.with(|stats| {
            let inside = &stats.as_ref()?.inside;
            let doing = inside.doing.clone()?;
            let title = format!(
                "Running inside this node: {doing} ({} done{})",
                inside.done,
                match inside.failed {
                    0 => String::new(),
                    failed => format!(", {failed} failed"),
                }
            );
            Some(view! {
                <span class="canvas-node-inside" data-testid="node-inside" title=title>
                    {format!("› {doing}")}
                </span>
            })
        })
    };
    let streamed = move || {
        stats.with(|stats| {
            // A fanned-out node's instances each have their line.
            if let Some(lines) = stats.as_ref().and_then(super::instances::instance_lines) {
                return Some(lines.into_any());
            }
            // Its own text, or while it has none, its child graph's.
            let text = stats
                .as_ref()
                .map(|stats| match stats.streamed.as_str() {
                    "" => stats.inside.streamed.as_str(),
                    own => own,
                })
                .unwrap_or("");
            (!text.is_empty()).then(|| {
                // The tail: the newest words are the interesting ones.
                let tail: String = text
                    .chars()
                    .rev()
                    .take(90)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                view! { <span class="canvas-node-stream" data-testid="node-stream">{tail}</span> }
                    .into_any()
            })
        })
    };
    let failure = move || stats.with(|stats| stats.as_ref().and_then(|stats| stats.error.clone()));
    let own_problems = {
        let id = id.clone();
        Memo::new(move |_| {
            problems.with(|all| {
                all.iter()
                    .filter(|problem| problem.node.as_ref() == Some(&id))
                    .map(|problem| problem.message.clone())
                    .collect::<Vec<_>>()
            })
        })
    };
    // Only warnings (the run is not stopped by them): drawn amber, as the
    // list draws them, not red.
    let only_warnings = {
        let id = id.clone();
        Memo::new(move |_| {
            problems.with(|all| {
                let mine = || {
                    all.iter()
                        .filter(|problem| problem.node.as_ref() == Some(&id))
                };
                mine().next().is_some()
                    && mine().all(|problem| {
                        problem.severity == heddle_engine::validate::Severity::Warning
                    })
            })
        })
    };
    let transform = move || {
        let p = node.position.get();
        format!("translate({}px, {}px)", p.x, p.y)
    };
    let label = move || {
        node.spec.with(|spec| {
            if spec.label.is_empty() {
                spec.id.to_string()
            } else {
                spec.label.clone()
            }
        })
    };
    let kind = move || node.spec.with(|spec| spec.kind.clone());
    // One class attribute, one effect: a page holds hundreds of nodes, and
    // each effect is work when it hydrates.
    let class = move || {
        let mut class = format!("canvas-node kind-{}", kind());
        if selected.get() {
            class.push_str(" selected");
        }
        if own_problems.with(|problems| !problems.is_empty()) {
            class.push_str(if only_warnings.get() {
                " has-warnings"
            } else {
                " has-problems"
            });
        }
        class
    };

    let breakpoints = move || {
        node.spec
            .with(|spec| match (spec.interrupt_before, spec.interrupt_after) {
                (true, true) => Some("Pauses before and after this node"),
                (true, false) => Some("Pauses before this node"),
                (false, true) => Some("Pauses after this node"),
                (false, false) => None,
            })
    };
    let connectable = editor.can_edit && node.spec.with_untracked(|spec| spec.kind != "end");
    // Nothing leads into a start node: it draws no port to arrive at.
    let reachable = node.spec.with_untracked(|spec| spec.kind != "start");

    let node_id = id.to_string();
    // A node is a group named "Writer, llm, succeeded, selected", its role
    // described as a node (as in other flow editors): a button's name would
    // have to repeat all the text drawn inside it (axe-core).
    let aria_label = {
        let id = id.clone();
        move || {
            let state = live.with(|view| view.state_of(id.as_str()));
            let mut name = format!("{}, {}", label(), kind());
            if state != "idle" {
                name.push_str(", ");
                name.push_str(state);
            }
            match own_problems.with(Vec::len) {
                0 => {}
                1 => name.push_str(", 1 problem"),
                n => name.push_str(&format!(", {n} problems")),
            }
            if selected.get() {
                name.push_str(", selected");
            }
            name
        }
    };
    view! {
        <div
            class=class
            title=failure
            style:transform=transform
            tabindex="0"
            role="group"
            aria-roledescription="node"
            aria-label=aria_label
        >
            // What most nodes do not have (a breakpoint, a run's figures and
            // text, problems) is one part, drawn again when any of it changes.
            {move || {
                let breakpoint = breakpoints().map(|title| view! {
                    <span class="canvas-node-breakpoint" title=title data-testid="breakpoint"></span>
                });
                let problems = own_problems.with(|problems| {
                    (!problems.is_empty()).then(|| {
                        let title = problems.join("\n");
                        view! {
                            <span class="canvas-node-problems" class:warnings-only=only_warnings.get()
                                title=title>{problems.len()}</span>
                        }
                    })
                });
                (breakpoint, badges(), inside(), streamed(), problems)
            }}
            {move || drawn.full.get().then(|| view! {
                {reachable.then(|| view! { <span class="port port-in" aria-hidden="true"></span> })}
                <span class="canvas-node-kind">{kind}</span>
                <span class="canvas-node-count">{runs}</span>
                {connectable.then(|| view! {
                    <span class="port port-out" title="Drag to another node to connect"></span>
                })}
            })}
            // Last in the node, though placed first in its grid: its text is
            // clipped, and the browser draws a clipped part as a run of its
            // own. Last, it splits the node's drawing in two runs, not three.
            {move || drawn.labelled.get().then(|| view! { <span class="canvas-node-label">{label}</span> })}
        </div>
    }
    .attr(DataNode, node_id)
    .attr(DataState, state)
}
