//! The folds of a conversation's earlier turns (where each question was
//! routed, its instances' work) when the page did not follow them: opened
//! again, or another conversation picked; and of its newest while an
//! earlier turn's run is watched. Each question says which run it
//! started (`run_of_input_message`); that run's log is read for it, for
//! the newest [`EARLIER_TURNS`] turns only, so a long thread costs a few
//! reads, not one for every turn it ever had.

use std::collections::{HashMap, HashSet};

use heddle_engine::ids::ThreadId;
use heddle_engine::model::ChatMessage;
use heddle_engine::run::run_of_input_message;
use leptos::prelude::*;

use super::{Folds, is_question, questions, turn_folds, turn_start};
use crate::editor::state::Editor;

/// How many earlier turns are read back (newest first).
const EARLIER_TURNS: usize = 10;

/// Reads the folds of the earlier turns of the conversation shown into
/// `kept` (by thread and turn), telling `kept_changed` when it does.
pub(super) fn read_back(
    editor: Editor,
    picked: RwSignal<Option<ThreadId>>,
    messages: RwSignal<Vec<ChatMessage>>,
    watched: impl Fn() -> Option<heddle_engine::RunId> + 'static,
    kept: StoredValue<HashMap<(ThreadId, usize), Folds>>,
    kept_changed: RwSignal<u64>,
) {
    // The turns asked for already: each is read once.
    let asked: StoredValue<HashSet<(ThreadId, usize)>> = StoredValue::new(HashSet::new());
    Effect::new(move |_| {
        let Some(thread) = picked.get() else {
            return;
        };
        let watched = watched();
        let wanted = messages.with(|all| earlier_runs(all, watched.as_ref()));
        let wanted: Vec<_> = wanted
            .into_iter()
            .rev()
            .take(EARLIER_TURNS)
            .filter(|(turn, _)| {
                let key = (thread.clone(), *turn);
                !kept.with_value(|kept| kept.contains_key(&key))
                    && asked.try_update_value(|asked| asked.insert(key)) == Some(true)
            })
            .collect();
        if wanted.is_empty() {
            return;
        }
        leptos::task::spawn_local(async move {
            for (turn, run) in wanted {
                let Ok(log) = crate::live::api::log(&run).await else {
                    continue;
                };
                let read = turn_folds(editor, &log.view_at(None));
                if read == Folds::default() {
                    continue;
                }
                let key = (thread.clone(), turn);
                if kept
                    .try_update_value(|kept| kept.insert(key, read))
                    .is_some()
                {
                    let _ = kept_changed.try_update(|n| *n += 1);
                }
            }
        });
    });
}

/// The earlier turns of `messages`, each by its number (how many
/// questions came up to it) with the run its question started; and the
/// newest, when the run `watched` is not its (an earlier turn's, watched
/// from the Trace: the newest turn's folds are then not the page's).
fn earlier_runs(
    messages: &[ChatMessage],
    watched: Option<&heddle_engine::RunId>,
) -> Vec<(usize, heddle_engine::RunId)> {
    let before = &messages[..turn_start(messages)];
    let current = questions(before);
    let mut asked = 0;
    let mut runs = Vec::new();
    for message in before.iter().filter(|message| is_question(message)) {
        asked += 1;
        let Some(run) = message.id.as_deref().and_then(run_of_input_message) else {
            continue;
        };
        if asked < current || watched.is_some_and(|watched| *watched != run) {
            runs.push((asked, run));
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use heddle_engine::model::Role;

    use super::*;

    fn said(role: Role, id: Option<&str>) -> ChatMessage {
        ChatMessage {
            id: id.map(str::to_string),
            ..ChatMessage::new(role, "…")
        }
    }

    #[test]
    fn each_earlier_question_names_the_run_it_started_and_the_newest_is_read_while_not_watched() {
        let messages = [
            said(Role::User, Some("input-run-a-0-0")),
            said(Role::Assistant, Some("msg-run-a-1-0-0")),
            // Sent through the API with its own id: no run to read.
            said(Role::User, Some("mine")),
            said(Role::Assistant, None),
            said(Role::User, Some("input-run-c-0-0")),
            said(Role::Assistant, None),
            said(Role::User, Some("input-run-d-0-0")),
            said(Role::Assistant, None),
        ];
        let newest = "run-d".into();
        assert_eq!(
            earlier_runs(&messages, Some(&newest)),
            vec![(1, "run-a".into()), (3, "run-c".into())]
        );
        assert!(earlier_runs(&messages[..2], None).is_empty());
        assert!(earlier_runs(&[], None).is_empty());
        // An earlier turn watched (from the Trace): the newest is read too.
        let earlier = "run-a".into();
        assert_eq!(
            earlier_runs(&messages, Some(&earlier)),
            vec![
                (1, "run-a".into()),
                (3, "run-c".into()),
                (4, "run-d".into())
            ]
        );
    }
}
