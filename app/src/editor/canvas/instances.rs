//! A fanned-out node's instances while they run: a line each, named by
//! its item's number and the item in a few words ("#2 heat pumps"), with
//! the tail of what it streams, so parallel instances are seen side by
//! side rather than as one node with their words interleaved. The running come first; a few lines at most, then
//! how many more and how many are done.

use leptos::prelude::*;

use crate::live::NodeState;
use crate::live::view::{Instance, NodeStats};

/// How many instances get a line of their own.
const LINES: usize = 3;
/// How much of an instance's text a line shows (its tail).
const TAIL: usize = 70;

/// The lines of `stats`' instances, when a fan-out started them.
pub(super) fn instance_lines(stats: &NodeStats) -> Option<impl IntoView + use<>> {
    if stats.instances.is_empty() {
        return None;
    }
    let total = stats.instances.len();
    let running = |instance: &Instance| {
        matches!(
            instance.state,
            NodeState::Running | NodeState::Retrying | NodeState::Waiting
        )
    };
    let mut shown: Vec<(u32, &Instance)> = stats
        .instances
        .iter()
        .filter(|(_, instance)| running(instance) && instance.state != NodeState::Waiting)
        .map(|(i, instance)| (*i, instance))
        .collect();
    shown.extend(
        stats
            .instances
            .iter()
            .filter(|(_, instance)| !running(instance) || instance.state == NodeState::Waiting)
            .map(|(i, instance)| (*i, instance)),
    );
    let done = stats
        .instances
        .values()
        .filter(|instance| instance.state == NodeState::Succeeded)
        .count();
    let more = total.saturating_sub(LINES);
    let lines = shown
        .into_iter()
        .take(LINES)
        .map(|(i, instance)| line(i, instance))
        .collect_view();
    let footer = (more > 0).then(|| {
        view! {
            <li class="canvas-node-instance-more">{format!("+{more} more · {done} of {total} done")}</li>
        }
    });
    Some(view! {
        <ol
            class="canvas-node-instances"
            data-testid="node-instances"
            aria-label=format!("{total} instances, {done} done")
        >
            {lines}
            {footer}
        </ol>
    })
}

/// One instance's line: `#2`, its item, and the tail of its words (or what it is
/// doing while it has none).
fn line(i: u32, instance: &Instance) -> impl IntoView + use<> {
    let text = match (instance.streamed.as_str(), &instance.doing, instance.state) {
        ("", Some(doing), _) => format!("› {doing}"),
        ("", None, NodeState::Waiting) => "waiting".to_string(),
        ("", None, NodeState::Failed) => instance.error.clone().unwrap_or_default(),
        ("", None, NodeState::Succeeded) => "done".to_string(),
        ("", None, _) => "…".to_string(),
        (text, _, _) => tail(text),
    };
    view! {
        <li
            class="canvas-node-instance"
            data-state=instance.state.as_str()
            data-testid="node-instance"
            data-instance=i.to_string()
        >
            <span class="canvas-node-instance-n">{format!("#{}", i + 1)}</span>
            {instance.item.clone().map(|item| view! {
                <span class="canvas-node-instance-item" title=item.clone()>{item.clone()}</span>
            })}
            <span class="canvas-node-instance-text">{text}</span>
        </li>
    }
}

/// The last [`TAIL`] characters of `text`: the newest words are the
/// interesting ones.
fn tail(text: &str) -> String {
    let skip = text.chars().count().saturating_sub(TAIL);
    text.chars().skip(skip).collect()
}
