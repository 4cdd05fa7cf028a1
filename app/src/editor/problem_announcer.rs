//! The graph's problems for people who do not see them come and go: one
//! polite live region, outside the inspector (which a narrow window
//! hides), saying when the problems that stop the graph from running
//! change: how many, and the words of one that came. It says nothing as
//! the graph opens: only a change made since.

use heddle_engine::validate::{Problem, Severity};
use leptos::prelude::*;

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
            && changed(&before, &now)
        {
            let warnings = problems.with_untracked(|all| {
                all.iter()
                    .filter(|problem| problem.severity == Severity::Warning)
                    .count()
            });
            said.set(sentence(editor, &now, &before, warnings));
        }
        now
    });
    view! {
        <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true"
            data-testid="problem-announcer">{move || said.get()}</div>
    }
}

/// Whether a problem came or went. Two problems are the same when they
/// say the same of the same node and edge: a path holds a node's index,
/// which an edit elsewhere shifts.
fn changed(before: &[Problem], now: &[Problem]) -> bool {
    before.len() != now.len() || now.iter().any(|problem| !known(before, problem))
}

fn known(among: &[Problem], problem: &Problem) -> bool {
    among.iter().any(|other| {
        other.node == problem.node
            && other.edge == problem.edge
            && other.kind == problem.kind
            && other.message == problem.message
    })
}

/// What changed, in a sentence: none left, or how many, and the one that
/// came (a problem gone says only how many are left). With none left that
/// stops it, the warnings still listed are counted: "No problems left"
/// was heard while two warnings showed.
fn sentence(editor: Editor, errors: &[Problem], before: &[Problem], warnings: usize) -> String {
    if errors.is_empty() {
        return match warnings {
            0 => "No problems left: the graph can run.".into(),
            1 => "Nothing stops the graph from running now; 1 warning is left.".into(),
            n => format!("Nothing stops the graph from running now; {n} warnings are left."),
        };
    }
    let count = match errors.len() {
        1 => "1 problem stops the graph from running".to_string(),
        n => format!("{n} problems stop the graph from running"),
    };
    let Some(new) = errors.iter().find(|problem| !known(before, problem)) else {
        return format!("{count}.");
    };
    let at = new
        .node
        .as_ref()
        .map(|node| format!("{}: ", editor.name_of(node.as_str())))
        .unwrap_or_default();
    // Read, not seen: the nodes by their labels, no backticks spelled out.
    let message = editor.named(&new.message).replace('`', "");
    format!("{count}. {at}{message}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::validate::ProblemKind;

    fn problem(node: &str, path: &str, message: &str) -> Problem {
        Problem {
            severity: Severity::Error,
            path: path.into(),
            node: Some(node.into()),
            edge: None,
            kind: ProblemKind::BadConfig {
                message: message.into(),
            },
            message: message.into(),
            fix: None,
        }
    }

    #[test]
    fn the_same_problems_reordered_or_shifted_are_no_change() {
        let a = problem("llm", "nodes[1].config.model", "has no model");
        let b = problem("agent", "nodes[2].config.tools", "has no tools");
        let shifted = problem("agent", "nodes[1].config.tools", "has no tools");
        let both = [a.clone(), b.clone()];
        let swapped = [b.clone(), a.clone()];
        assert!(!changed(&both, &swapped));
        assert!(!changed(std::slice::from_ref(&b), &[shifted]));
        assert!(changed(std::slice::from_ref(&a), &both));
        assert!(changed(&both, std::slice::from_ref(&a)));
        let other = problem("llm", "nodes[1].config.model", "names no known model");
        assert!(changed(&[a], &[other]));
    }
}
