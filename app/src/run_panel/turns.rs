//! A conversation's turns, one run each. The Trace of a chat graph shows
//! one run: one turn. This says which turn of its conversation that is,
//! with its question, and goes to the turn before or after in place, so a
//! person reads how each reply was made, not only the newest one's; and
//! each question in the chat goes to its own turn's trace.

use heddle_engine::format::ChannelType;
use heddle_engine::ids::RunId;
use heddle_engine::model::{ChatMessage, Role};
use heddle_engine::run::{RunStatus, run_of_input_message};
use leptos::prelude::*;

use super::{Tab, input_fields};
use crate::editor::state::Editor;
use crate::live::Watch;

/// The run panel's tab, for a question's Trace button to switch to.
#[derive(Clone, Copy)]
pub struct PanelTab(pub RwSignal<Tab>);

/// Shows the run `run` (a turn of the conversation shown) in place, and
/// its Trace when `trace`.
fn show(run: RunId, trace: Option<PanelTab>) {
    leptos::task::spawn_local(async move {
        if let Ok(info) = crate::live::api::run(&run).await {
            super::start::follow(&info);
            if let Some(PanelTab(tab)) = trace {
                let _ = tab.try_set(Tab::Trace);
            }
        }
    });
}

/// A question's way to how its reply was made: its run's Trace.
#[component]
pub fn TurnTraceButton(run: RunId) -> impl IntoView {
    let tab = use_context::<PanelTab>();
    view! {
        <button type="button" class="chat-turn-trace" data-testid="chat-turn-trace"
            title="How the reply to this was made: its run's trace"
            on:click=move |_| show(run.clone(), tab)>"Trace"</button>
    }
}

/// How much of a question the picker quotes.
const QUOTED: usize = 60;

/// One turn: the question the person asked and the run it started.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub run: RunId,
    pub question: String,
}

/// A message the person wrote (not one a node wrote as the user): what
/// starts a turn.
pub fn is_question(message: &ChatMessage) -> bool {
    message.role == Role::User && message.name.is_none()
}

/// The turns of a conversation, in order: each question the person wrote
/// (not one a node wrote as the user) that names the run it started.
pub fn turns_of(messages: &[ChatMessage]) -> Vec<Turn> {
    messages
        .iter()
        .filter(|message| is_question(message))
        .filter_map(|message| {
            Some(Turn {
                run: run_of_input_message(message.id.as_deref()?)?,
                question: message.content.clone(),
            })
        })
        .collect()
}

/// `text` cut to about `most` characters at a word, with an ellipsis.
fn quoted(text: &str, most: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= most {
        return text;
    }
    let cut: String = text.chars().take(most).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut}…")
}

/// "Turn 2 of 5 · “What does it cost?”" with the turns either side, for
/// a run on a conversation of more than one turn; nothing otherwise.
#[component]
pub fn TurnPicker(editor: Editor, watch: Watch) -> impl IntoView {
    // The watched run's conversation: its turns, read again as runs end.
    let turns = RwSignal::new(None::<(RunId, Vec<Turn>)>);
    Effect::new(move |_| {
        let Some(run) = watch.log.with(|log| log.run_id.clone()) else {
            return;
        };
        // A run that ends may have been a turn just taken.
        if watch.status.get() == Some(RunStatus::Running) {
            return;
        }
        let channel = input_fields(editor)
            .into_iter()
            .find(|field| field.ty == ChannelType::Messages)
            .map(|field| field.channel);
        let Some(channel) = channel else {
            return;
        };
        leptos::task::spawn_local(async move {
            let Ok(info) = crate::live::api::run(&run).await else {
                return;
            };
            let Ok(thread) = crate::live::api::thread(&info.thread_id).await else {
                return;
            };
            let messages: Vec<ChatMessage> =
                serde_json::from_value(thread.state[&channel].clone()).unwrap_or_default();
            let _ = turns.try_set(Some((run, turns_of(&messages))));
        });
    });
    // Where the watched run is among them: (its index, the turns).
    let placed = Memo::new(move |_| {
        let watched = watch.log.with(|log| log.run_id.clone())?;
        turns.with(|turns| {
            let (_, turns) = turns.as_ref()?;
            let at = turns.iter().position(|turn| turn.run == watched)?;
            (turns.len() > 1).then(|| (at, turns.clone()))
        })
    });
    let go = move |run: RunId| show(run, None);
    move || {
        let (at, turns) = placed.get()?;
        let earlier = at.checked_sub(1).map(|i| turns[i].run.clone());
        let later = turns.get(at + 1).map(|turn| turn.run.clone());
        let question = quoted(&turns[at].question, QUOTED);
        Some(view! {
            <nav class="turn-picker" aria-label="Turns of the conversation" data-testid="turn-picker">
                <button type="button" class="button button-small" data-testid="turn-earlier"
                    disabled=earlier.is_none()
                    title="The trace of the turn before"
                    on:click={
                        let earlier = earlier.clone();
                        move |_| if let Some(run) = earlier.clone() { go(run) }
                    }>"‹ Earlier"</button>
                <span class="turn-picker-where" aria-live="polite">
                    <strong>{format!("Turn {} of {}", at + 1, turns.len())}</strong>
                    <span class="turn-picker-question" title=turns[at].question.clone()>{format!("“{question}”")}</span>
                </span>
                <button type="button" class="button button-small" data-testid="turn-later"
                    disabled=later.is_none()
                    title="The trace of the turn after"
                    on:click=move |_| if let Some(run) = later.clone() { go(run) }>"Later ›"</button>
            </nav>
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(run: &str, text: &str) -> ChatMessage {
        let mut message = ChatMessage::new(Role::User, text);
        message.id = Some(format!("input-{run}-0-0"));
        message
    }

    #[test]
    fn a_conversations_turns_are_its_questions_with_their_runs() {
        let mut by_node = ChatMessage::new(Role::User, "a node's words");
        by_node.name = Some("critic".into());
        let messages = vec![
            asked("run-1", "What does it cost?"),
            ChatMessage::new(Role::Assistant, "Ten."),
            by_node,
            // Typed before questions named their runs: not a turn to go to.
            ChatMessage::new(Role::User, "Old"),
            asked("run-2", "And in euros?"),
        ];
        let turns = turns_of(&messages);
        assert_eq!(
            turns,
            vec![
                Turn {
                    run: RunId::from("run-1"),
                    question: "What does it cost?".into()
                },
                Turn {
                    run: RunId::from("run-2"),
                    question: "And in euros?".into()
                },
            ]
        );
    }

    #[test]
    fn a_long_question_is_quoted_to_a_word() {
        assert_eq!(quoted("short  one\nhere", 60), "short one here");
        assert_eq!(quoted("one two three four", 10), "one two…");
    }
}
