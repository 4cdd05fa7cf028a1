//! The graph's problems for people who do not see them come and go: one
//! polite live region, outside the inspector (which a narrow window
//! hides), saying when the problems that stop the graph from running
//! change: how many, and the words of one that came. It says nothing as
//! the graph opens: only a change made since.

use heddle_engine::validate::{Problem, Severity};
use leptos::prelude::*;

use super::problems::name_nodes;
use super::state::Editor;

#[component]
pub fn ProblemAnnouncer(editor: Editor, problems: Memo<Vec<Problem>>) -> impl IntoView {
    let errors = Memo::new(move |_| {
        problems.with(|all| {
            all.iter()
                .filter(|problem| problem.severity == Severity::Error)
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let said = RwSignal::new(String::new());
    Effect::new(move |before: Option<Vec<Problem>>| {
        let now = errors.get();
        if let Some(before) = before
            && before != now
        {
            said.set(sentence(editor, &now, &before));
        }
        now
    });
    view! {
        <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true"
            data-testid="problem-announcer">{move || said.get()}</div>
    }
}

/// What changed, in a sentence: none left, or how many, and the one that
/// came (a problem gone says only how many are left).
fn sentence(editor: Editor, errors: &[Problem], before: &[Problem]) -> String {
    if errors.is_empty() {
        return "No problems left: the graph can run.".into();
    }
    let count = match errors.len() {
        1 => "1 problem stops the graph from running".to_string(),
        n => format!("{n} problems stop the graph from running"),
    };
    let Some(new) = errors.iter().find(|problem| !before.contains(problem)) else {
        return format!("{count}.");
    };
    let at = new
        .node
        .as_ref()
        .map(|node| format!("{}: ", editor.name_of(node.as_str())))
        .unwrap_or_default();
    // Read, not seen: the nodes by their labels, no backticks spelled out.
    let message = name_nodes(&new.message, |id| editor.label_of(id)).replace('`', "");
    format!("{count}. {at}{message}")
}
