//! Edits for people who do not see the canvas: one polite live region,
//! beside the problems' (`problem_announcer`), saying the last edit in a
//! sentence ("Deleted “Writer”; “start” now leads to “end”", "Undone: …"),
//! as [`super::edit_words`] words it. It says nothing as the graph opens.

use leptos::prelude::*;

use super::state::Editor;

/// The last edit, said: one polite live region beside the problems' (see
/// [`super::edit_words`]). A no-break space alternates at its end, so the
/// same words said twice ("Moved 5 nodes") are heard twice.
#[component]
pub fn EditAnnouncer(editor: Editor) -> impl IntoView {
    let text = move || {
        editor.said.with(|(count, said)| {
            if said.is_empty() {
                String::new()
            } else if count % 2 == 0 {
                format!("{said}\u{a0}")
            } else {
                said.clone()
            }
        })
    };
    view! {
        <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true"
            data-testid="edit-announcer">{text}</div>
    }
}
