//! What a deletion, an undo or a redo did, shown on the canvas with the
//! way back. Deleting a node from a chain joins its neighbours (`rejoin`),
//! and deleting a selection takes its edges along; an undo pressed with
//! the focus elsewhere (a run panel's tab) changes what may not be in
//! sight (a system prompt). A person who sees the canvas should see that
//! too, not only a screen reader (which hears the same words from
//! `edit_announcer`; this notice is no live region, so they are not said
//! twice). It goes at the next edit, when closed, or after a while without
//! the pointer or the focus on it.

use leptos::prelude::*;

use super::state::{Done, Editor, UndoOffer};

/// How long the notice stays without the pointer or the focus on it.
#[cfg(feature = "hydrate")]
const SHOWN_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// Offers the deletion just made back, saying `words` (what it did; a
/// plain "Deleted" when the edit said nothing).
pub fn offer(editor: Editor, words: Option<String>) {
    tell(editor, Done::Deleted, words);
}

/// Undoes the last edit and tells what it undid, with Redo.
pub fn undo(editor: Editor) {
    told(editor, Done::Undone, || editor.undo());
}

/// Redoes the last edit undone and tells what it redid, with Undo.
pub fn redo(editor: Editor) {
    told(editor, Done::Redone, || editor.redo());
}

/// Does `edit` and tells what it did, in the words it said (nothing when
/// there was nothing to do).
fn told(editor: Editor, done: Done, edit: impl FnOnce()) {
    let said_before = editor.said.with_untracked(|(count, _)| *count);
    let revision_before = editor.revision.get_untracked();
    edit();
    if editor.revision.get_untracked() == revision_before {
        return;
    }
    let words = editor
        .said
        .with_untracked(|(count, said)| (*count != said_before).then(|| said.clone()));
    tell(editor, done, words);
}

fn tell(editor: Editor, done: Done, words: Option<String>) {
    let number = editor
        .undo_offer
        .with_untracked(|offer| offer.as_ref().map_or(0, |offer| offer.number + 1));
    let plain = match &done {
        Done::Deleted => "Deleted",
        Done::Undone => "Undone",
        Done::Redone => "Redone",
    };
    editor.undo_offer.set(Some(UndoOffer {
        words: words.unwrap_or_else(|| plain.to_string()),
        done,
        revision: editor.revision.get_untracked(),
        number,
    }));
    #[cfg(feature = "hydrate")]
    hide_later(editor, number, SHOWN_FOR);
}

/// Hides offer `number` after `after`, unless the pointer or the focus is
/// on it then (it looks again a little later).
#[cfg(feature = "hydrate")]
fn hide_later(editor: Editor, number: u64, after: std::time::Duration) {
    set_timeout(
        move || {
            let still = editor
                .undo_offer
                .try_with_untracked(|offer| offer.as_ref().is_some_and(|o| o.number == number));
            if still != Some(true) {
                return;
            }
            let held = document()
                .query_selector(".undo-notice:hover, .undo-notice:focus-within")
                .ok()
                .flatten()
                .is_some();
            if held {
                hide_later(editor, number, std::time::Duration::from_secs(2));
            } else {
                editor.undo_offer.set(None);
            }
        },
        after,
    );
}

/// The notice: what the last deletion, undo or redo did, the way back,
/// and Close.
#[component]
pub fn UndoNotice(editor: Editor) -> impl IntoView {
    let shown = move || {
        editor
            .undo_offer
            .get()
            .filter(|offer| offer.revision == editor.revision.get())
    };
    move || {
        shown().map(|offer| {
            // The notice goes with its buttons: the work goes on on the
            // canvas, which takes the focus.
            let done = offer.done.clone();
            let (button, name) = match &done {
                Done::Deleted => ("Undo".to_string(), "Undo the deletion".to_string()),
                Done::Undone => ("Redo".to_string(), "Redo what was undone".to_string()),
                Done::Redone => ("Undo".to_string(), "Undo what was redone".to_string()),
            };
            let back = move |_| {
                editor.undo_offer.set(None);
                match &done {
                    Done::Undone => redo(editor),
                    Done::Deleted | Done::Redone => undo(editor),
                }
                crate::components::focus_first(".editor-canvas");
            };
            let close = move |_| {
                editor.undo_offer.set(None);
                crate::components::focus_first(".editor-canvas");
            };
            view! {
                <div class="undo-notice" data-testid="undo-notice">
                    <span>{offer.words}</span>
                    <button class="button button-small" type="button" aria-label=name
                        on:click=back>{button}</button>
                    <button class="undo-notice-close" type="button" title="Close" aria-label="Close the notice"
                        on:click=close>"✕"</button>
                </div>
            }
        })
    }
}
