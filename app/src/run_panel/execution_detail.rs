//! What one bar of the trace did, shown under the timeline once the bar is
//! clicked: which node (and which fanned-out instance, with its item), at
//! which step and attempt, how it ended and how long it took, the route it
//! chose, its error, what it asked its model (the system prompt as
//! rendered, the last message) and what it wrote to the state. A fan-out's instances
//! share a node and a step, so the State tab cannot tell them apart: this
//! can.

use leptos::prelude::*;

use super::duration;
use crate::editor::state::Editor;
use crate::live::Execution;
use heddle_engine::model::{ModelInput, Role};
use heddle_engine::run::Hop;

/// How much of what a node wrote is shown (the State tab has all of it).
const SHOWN_CHARS: usize = 20_000;
/// The most characters of a router's reply shown (it names a route).
const REPLY_CHARS: usize = 400;

/// Which execution a bar stands for: it stays chosen while the run goes
/// on (its bar is drawn again as events arrive).
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    node: String,
    within: Vec<Hop>,
    instance: Option<u32>,
    step: u32,
    task: u32,
    attempt: u32,
}

impl Chosen {
    pub fn of(execution: &Execution) -> Chosen {
        Chosen {
            node: execution.node.clone(),
            within: execution.within.clone(),
            instance: execution.instance,
            step: execution.step,
            task: execution.task,
            attempt: execution.attempt,
        }
    }

    fn is(&self, execution: &Execution) -> bool {
        *self == Chosen::of(execution)
    }
}

/// The chosen execution's details, or nothing.
#[component]
pub fn ExecutionDetail(
    editor: Editor,
    executions: Memo<Vec<Execution>>,
    chosen: RwSignal<Option<Chosen>>,
) -> impl IntoView {
    let found = move || {
        let chosen = chosen.get()?;
        executions.with(|all| all.iter().find(|e| chosen.is(e)).cloned())
    };
    // Stacked under the timeline (a narrow panel), the details come into
    // view when a bar is chosen; beside it they are in view already.
    Effect::new(move |_| {
        if chosen.with(Option::is_some) {
            request_animation_frame(|| {
                if let Some(detail) = document()
                    .query_selector(".execution-detail")
                    .ok()
                    .flatten()
                {
                    let options = web_sys::ScrollIntoViewOptions::new();
                    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                    detail.scroll_into_view_with_scroll_into_view_options(&options);
                }
            });
        }
    });
    move || {
        found().map(|execution| {
            let name = {
                let label = editor
                    .label_of(&execution.node)
                    .unwrap_or_else(|| execution.node.clone());
                match execution.instance {
                    Some(i) => format!("{label} #{}", i + 1),
                    None => label,
                }
            };
            let took = execution
                .end_us
                .map(|end| duration(end.saturating_sub(execution.start_us)))
                .unwrap_or_else(|| "still running".into());
            let facts = format!(
                "step {} · attempt {} · {} · {took}",
                execution.step,
                execution.attempt,
                execution.outcome.as_str()
            );
            let wrote = execution.update.as_ref().map(|update| {
                let text = serde_json::to_string_pretty(update).unwrap_or_default();
                shortened(&text, SHOWN_CHARS)
            });
            let asked = execution.asked.clone().map(asked_view);
            view! {
                <section class="execution-detail" aria-label="What this execution did" data-testid="execution-detail">
                    <header class="execution-detail-head">
                        <h3>{name}</h3>
                        <span class="execution-detail-facts">{facts}</span>
                        <button type="button" class="tool" title="Close" aria-label="Close the details"
                            on:click=move |_| chosen.set(None)>"×"</button>
                    </header>
                    <dl class="execution-detail-list">
                        {execution.item.clone().map(|item| view! { <dt>"Item"</dt><dd data-testid="execution-item">{item}</dd> })}
                        {execution.route.clone().map(|route| {
                            let otherwise = execution.route_taken.as_ref().is_some_and(|taken| taken.otherwise);
                            view! {
                                <dt>"Route"</dt>
                                <dd data-testid="execution-route">
                                    <span class="mono">{route}</span>
                                    {otherwise.then_some(" — its otherwise: the reply named none of its routes")}
                                </dd>
                            }
                        })}
                        {execution.route_taken.as_ref().map(|taken| view! {
                            <dt>"Reply"</dt>
                            <dd class="execution-reply" data-testid="execution-reply">{shortened(&taken.reply, REPLY_CHARS)}</dd>
                        })}
                        {execution.error.clone().map(|error| view! { <dt>"Error"</dt><dd class="execution-error">{error}</dd> })}
                        {asked}
                        <dt>"Wrote"</dt>
                        <dd>
                            {match wrote {
                                Some(text) => view! { <pre tabindex="0" class="json" data-testid="execution-wrote">{text}</pre> }.into_any(),
                                None => view! { <span class="empty-note">"nothing to the state"</span> }.into_any(),
                            }}
                        </dd>
                    </dl>
                </section>
            }
        })
    }
}

/// What the execution asked its model: its system prompt as rendered,
/// how many messages of the conversation went with it, and the last one.
fn asked_view(asked: ModelInput) -> impl IntoView {
    let earlier = match asked.earlier {
        0 => None,
        1 => Some("and 1 message before the last (the State tab has it)".to_string()),
        n => Some(format!(
            "and {n} messages before the last (the State tab has them)"
        )),
    };
    let last = asked.last.map(|last| {
        let who = match last.role {
            Role::System => "Last message (system)",
            Role::User => "Last message (user)",
            Role::Assistant => "Last message (assistant)",
            Role::Tool => "Last message (a tool's result)",
        };
        view! {
            <span class="asked-part">{who}</span>
            <pre tabindex="0" data-testid="execution-asked-last">{last.text}</pre>
        }
    });
    view! {
        <dt>"Asked"</dt>
        <dd class="execution-asked" data-testid="execution-asked">
            {(!asked.system.is_empty()).then(|| view! {
                <span class="asked-part">"System prompt"</span>
                <pre tabindex="0" data-testid="execution-asked-system">{asked.system}</pre>
            })}
            {earlier.map(|earlier| view! { <span class="asked-part">{earlier}</span> })}
            {last}
        </dd>
    }
}

/// `text` cut to `most` characters, saying how much was left out.
fn shortened(text: &str, most: usize) -> String {
    match heddle_engine::model::cut_at_chars(text, most) {
        (kept, Some(more)) => {
            format!("{kept}\n… {more} more characters (the State tab has them all)")
        }
        (kept, None) => kept.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::shortened;

    #[test]
    fn what_a_node_wrote_is_cut_on_a_character_saying_how_much_is_left() {
        assert_eq!(shortened("short", 10), "short");
        assert_eq!(
            shortened("ééééé", 2),
            "éé\n… 3 more characters (the State tab has them all)"
        );
    }
}
