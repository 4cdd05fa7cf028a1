//! Live validation: the engine's own validator (compiled to wasm) runs on
//! every committed change, against the server's catalog of tools and
//! models (so it reports what the server would, no more); problems show on
//! their nodes and in this list, and clicking one selects its node. A
//! problem validation knows the fix for has a button that makes it.

use std::collections::BTreeSet;

use heddle_engine::validate::{Problem, Severity};
use heddle_engine::{Catalog, Registry};
use heddle_engine::{EdgeId, NodeId};
use leptos::prelude::*;

use super::state::Editor;
use crate::components::CodeSpans;
use crate::error::AppError;

/// The document's problems, recomputed when a change is committed (not
/// while something is being dragged) and when the catalog arrives. Until
/// it does, the engine's built-in tools and models are all there is.
pub fn problems(
    editor: Editor,
    catalog: Resource<Result<Catalog, AppError>>,
) -> Memo<Vec<Problem>> {
    let registry = Memo::new(move |_| {
        catalog
            .get()
            .and_then(Result::ok)
            .map(|catalog| Registry::for_validation(&catalog))
            .map(RegistryCell)
            .unwrap_or_default()
    });
    // What validation reads: the document less where its nodes are drawn,
    // built again only when more than positions may have changed. Dropping
    // a dragged node changes only positions, and building and validating a
    // 500-node graph again would take tens of milliseconds of the drop's
    // frame.
    let content = Memo::new(move |_| {
        editor.content.track();
        let mut document = editor.document();
        for node in &mut document.nodes {
            node.position = None;
        }
        document
    });
    Memo::new(move |_| {
        content.with(|document| {
            registry.with(|registry| heddle_engine::validate(document, &registry.0).problems)
        })
    })
}

/// A registry in a memo: equal when made from the same catalog is all a
/// memo needs, and a new catalog is rare (once per page).
#[derive(Clone, Default)]
struct RegistryCell(Registry);

impl PartialEq for RegistryCell {
    fn eq(&self, other: &Self) -> bool {
        self.0.catalog() == other.0.catalog()
    }
}

#[component]
pub fn ProblemList(editor: Editor, problems: Memo<Vec<Problem>>) -> impl IntoView {
    let errors =
        move || problems.with(|all| all.iter().filter(|p| p.severity == Severity::Error).count());
    // A fix's button goes with the problem it fixed. So that the focus is
    // not dropped to the page (a keyboard user would start again from the
    // top), it goes to the next fix (the problem now at that place or
    // after), else the list's heading; only when it was lost, never taken.
    let none = Memo::new(move |_| problems.with(Vec::is_empty));
    let section = NodeRef::<leptos::html::Section>::new();
    let refocus = StoredValue::new(None::<usize>);
    Effect::new(move |_| {
        problems.track();
        if let Some(at) = refocus.try_update_value(Option::take).flatten() {
            request_animation_frame(move || focus_after_fix(section, at));
        }
    });
    view! {
        <section class="problems" aria-label="Problems" node_ref=section>
            <h2 class="inspector-title" tabindex="-1">
                "Problems "
                <span class="badge" data-testid="problem-count">{move || problems.with(Vec::len)}</span>
                // Errors and warnings told apart: the graph bar counts only
                // what stops the run.
                {move || {
                    let (all, errors) = (problems.with(Vec::len), errors());
                    (errors > 0 && errors < all).then(|| view! {
                        <span class="problems-split" data-testid="problems-split">
                            {format!(" {errors} stop the run, {} {}", all - errors,
                                if all - errors == 1 { "warning" } else { "warnings" })}
                        </span>
                    })
                }}
            </h2>
            {move || {
                if none.get() {
                    return view! { <p class="empty-note problems-none">"None: the graph can run."</p> }.into_any();
                }
                // Keyed by what each is: a problem still there after an
                // edit keeps its element, so a fix pressed while a field
                // was being typed in (its change, applied as the press
                // began, redraws the list) is not a new button under the
                // release, and the click lands.
                view! {
                    <ul class="problem-list">
                        <For each=move || problems.with(|all| lines_of(all)) key=Listed::key let:listed>
                            {problem_item(editor, problems, refocus, listed)}
                        </For>
                    </ul>
                    {move || (errors() > 0).then(|| view! { <p class="field-hint">"Saving works with problems; running needs none."</p> })}
                }
                .into_any()
            }}
        </section>
    }
}

/// What tells a problem from the others in the list: all of it, its fix
/// included (the same words may come with a fix that does something else
/// now: "Add a start node" before the node just placed).
pub(crate) fn problem_key(problem: &Problem) -> String {
    format!("{problem:?}")
}

/// A line of the list: a problem, with the other nodes that have the same
/// one with the same fix. A channel 99 nodes read and none declares is one
/// line with one fix, not 99 buttons that all do the same.
#[derive(Clone, Debug, PartialEq)]
struct Listed {
    problem: Problem,
    /// The other nodes with it, in the list's order.
    more: Vec<NodeId>,
}

impl Listed {
    fn key(&self) -> String {
        format!("{}{:?}", problem_key(&self.problem), self.more)
    }
}

/// `problems` as the list shows them: those of the same kind with the same
/// fix at several nodes as one line, where the first of them was.
fn lines_of(problems: &[Problem]) -> Vec<Listed> {
    use std::collections::{HashMap, HashSet};
    // Each shared problem's line by what it is (its kind, fix and
    // severity), and the nodes already on a line: linear however many
    // problems a hostile graph has (the list is drawn on the server too).
    let mut line_of: HashMap<String, usize> = HashMap::new();
    let mut on_line: HashSet<(usize, &NodeId)> = HashSet::new();
    let mut lines: Vec<Listed> = Vec::new();
    for problem in problems {
        let shared = match (&problem.fix, &problem.node, &problem.edge) {
            (Some(fix), Some(node), None) => Some((
                format!("{:?}|{:?}|{fix:?}", problem.severity, problem.kind),
                node,
            )),
            _ => None,
        };
        if let Some((key, node)) = &shared
            && let Some(&at) = line_of.get(key)
            && on_line.insert((at, node))
        {
            lines[at].more.push((*node).clone());
            continue;
        }
        if let Some((key, node)) = shared {
            line_of.entry(key).or_insert(lines.len());
            on_line.insert((lines.len(), node));
        }
        lines.push(Listed {
            problem: problem.clone(),
            more: Vec::new(),
        });
    }
    lines
}

/// "2 problems, 1 warning": how many problems and warnings, said.
pub fn counted(errors: usize, warnings: usize) -> String {
    let said = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    match (errors, warnings) {
        (0, warnings) => said(warnings, "warning", "warnings"),
        (errors, 0) => said(errors, "problem", "problems"),
        (errors, warnings) => format!(
            "{}, {}",
            said(errors, "problem", "problems"),
            said(warnings, "warning", "warnings")
        ),
    }
}

/// How many of a line's other nodes are named before "and N more".
const NAMED_MORE: usize = 2;

/// One line of the list: where and what (a click selects its node or
/// nodes, edge or setting), and its fix when validation knows one.
fn problem_item(
    editor: Editor,
    problems: Memo<Vec<Problem>>,
    refocus: StoredValue<Option<usize>>,
    listed: Listed,
) -> impl IntoView {
    let Listed { problem, more } = listed;
    let node = problem.node.clone();
    let edge = problem.edge.clone();
    let path = problem.path.clone();
    let others = more.clone();
    let select = move |_| {
        if let Some(node) = node.clone() {
            // Shown, not only selected: it may be far off the view, or in
            // a collapsed group. The focus stays in the list.
            super::groups::reveal(editor, &node);
            if let Some(canvas) = document().query_selector(".editor-canvas").ok().flatten() {
                let rect = canvas.get_bounding_client_rect();
                editor.reveal(&node, rect.width(), rect.height());
            }
            let mut selected = BTreeSet::from([node]);
            selected.extend(others.iter().cloned());
            editor.selected.set(selected);
            editor.selected_edge.set(None);
        } else if let Some(edge) = edge.clone() {
            editor.selected.set(BTreeSet::new());
            editor.selected_edge.set(Some(edge));
        } else {
            // The graph's own: its setting, in the graph's settings.
            editor.selected.set(BTreeSet::new());
            editor.selected_edge.set(None);
            let path = path.clone();
            request_animation_frame(move || focus_graph_setting(&path));
        }
    };
    let severity = match problem.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    // The fix, when validation knows one: one click, one undo step.
    let key = problem_key(&problem);
    let fix = problem.fix.clone().filter(|_| editor.can_edit).map(|fix| {
        let label = editor.named(&fix.label());
        view! {
            <button type="button" class="button button-small fix-button"
                on:click=move |_| {
                    // Its place in the list now: the focus goes to the
                    // fix at that place once the list is drawn again.
                    let at = problems.with_untracked(|all| {
                        lines_of(all).iter().position(|line| problem_key(&line.problem) == key)
                    });
                    refocus.set_value(at);
                    let fix = fix.clone();
                    editor.change(|document| fix.apply(document));
                }><CodeSpans text=label /></button>
        }
    });
    // People read nodes by their labels; the id stays beside it.
    let named = |node: &NodeId| match editor.label_of(node.as_str()) {
        Some(label) => format!("{label} ({node})"),
        None => node.to_string(),
    };
    let place = match (&problem.node, &problem.edge) {
        (Some(node), _) if more.is_empty() => named(node),
        (Some(node), _) => {
            let shown: Vec<String> = std::iter::once(node)
                .chain(more.iter().take(NAMED_MORE))
                .map(named)
                .collect();
            match more.len().saturating_sub(NAMED_MORE) {
                0 => {
                    let (last, first) = shown
                        .split_last()
                        .map_or((String::new(), &[][..]), |(l, f)| (l.clone(), f));
                    format!("{} and {last}", first.join(", "))
                }
                rest => format!(
                    "{} and {rest} more {}",
                    shown.join(", "),
                    if rest == 1 { "node" } else { "nodes" }
                ),
            }
        }
        (None, Some(edge)) => edge_place(editor, edge).unwrap_or_else(|| problem.path.clone()),
        (None, None) => problem.path.clone(),
    };
    let message = editor.named(&problem.message);
    view! {
        <li>
            <button type="button" class=format!("problem problem-{severity}") on:click=select>
                <span class="problem-where mono">{place}</span>
                <span class="problem-message"><CodeSpans text=message /></span>
            </button>
            {fix}
        </li>
    }
}

/// An edge as people read it: “Triage → A person”, by its ends' labels.
fn edge_place(editor: Editor, edge: &EdgeId) -> Option<String> {
    let (from, to) = editor.edges.with_untracked(|edges| {
        edges
            .iter()
            .find(|spec| &spec.id == edge)
            .map(|spec| (spec.from.clone(), spec.to.clone()))
    })?;
    let name = |node: &NodeId| {
        editor
            .label_of(node.as_str())
            .unwrap_or_else(|| node.to_string())
    };
    Some(format!("{} → {}", name(&from), name(&to)))
}

/// Puts the focus on the list's first fix, else its first problem (Run on
/// a graph that cannot run sends the keyboard there).
pub fn focus_first_fix() {
    let fixable = document()
        .query_selector(".problems .fix-button")
        .ok()
        .flatten()
        .is_some();
    crate::components::focus_first(if fixable {
        ".problems .fix-button"
    } else {
        ".problems .problem"
    });
}

/// After a fix at problem `at`: focuses the first fix at or after that
/// place, else the first fix, else the heading, else (the inspector gone)
/// the canvas; unless the focus is somewhere already (the fix did not take
/// its button away).
fn focus_after_fix(section: NodeRef<leptos::html::Section>, at: usize) {
    use wasm_bindgen::JsCast;
    let lost = document()
        .active_element()
        .is_none_or(|element| element.tag_name().eq_ignore_ascii_case("body"));
    let Some(section) = section.get_untracked() else {
        return;
    };
    if !lost {
        return;
    }
    let target = [
        format!(".problem-list > li:nth-child(n+{}) .fix-button", at + 1),
        ".problem-list .fix-button".to_string(),
        ".inspector-title".to_string(),
    ]
    .iter()
    .find_map(|selector| section.query_selector(selector).ok().flatten());
    if let Some(target) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = target.focus();
    }
    // The last problem fixed on a narrow window, the inspector goes with
    // it (nothing selected): the canvas takes the focus, never the page.
    let still_lost = document()
        .active_element()
        .is_none_or(|element| element.tag_name().eq_ignore_ascii_case("body"));
    if still_lost
        && let Some(canvas) = document()
            .query_selector(".editor-canvas")
            .ok()
            .flatten()
            .and_then(|canvas| canvas.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = canvas.focus();
    }
}

/// The graph's setting at `path`, in the graph's settings, takes the
/// focus: a channel's card (opened, at the field the problem names), a
/// limit's field, else the settings' title. A problem of the graph's own
/// has no node to select; its button goes to where it is fixed.
fn focus_graph_setting(path: &str) {
    use wasm_bindgen::JsCast;
    let Some(section) = document()
        .query_selector(r#"section[aria-label="Graph settings"]"#)
        .ok()
        .flatten()
    else {
        return;
    };
    let target = match graph_setting(path) {
        GraphSetting::Channel { name, field } => channel_field(&section, &name, field),
        GraphSetting::Field(name) => section
            .query_selector(&format!(r#"[name="{name}"]"#))
            .ok()
            .flatten(),
        GraphSetting::Title => None,
    }
    .or_else(|| section.query_selector(".inspector-title").ok().flatten());
    if let Some(target) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        target.scroll_into_view_with_bool(false);
        let _ = target.focus();
    }
}

/// A channel's card by its name, opened, and its control `field` in it.
fn channel_field(section: &web_sys::Element, name: &str, field: &str) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    let cards = section.query_selector_all("details.channel-card").ok()?;
    let card = (0..cards.length())
        .filter_map(|at| cards.item(at))
        .filter_map(|card| card.dyn_into::<web_sys::HtmlDetailsElement>().ok())
        .find(|card| {
            card.query_selector(".channel-name")
                .ok()
                .flatten()
                .and_then(|label| label.text_content())
                .is_some_and(|text| text == name)
        })?;
    card.set_open(true);
    card.query_selector(&format!(r#"[name="{field}"]"#))
        .ok()
        .flatten()
}

/// Where in the graph's settings a graph-level problem is fixed.
#[derive(Debug, PartialEq)]
enum GraphSetting {
    /// A channel's card, at one of its controls.
    Channel { name: String, field: &'static str },
    /// A control of the settings by its name (a limit).
    Field(&'static str),
    /// Nowhere more precise: the settings' title.
    Title,
}

fn graph_setting(path: &str) -> GraphSetting {
    if let Some(rest) = path.strip_prefix("state.channels.") {
        // A channel's name may hold dots; what follows it is a known field.
        let (name, field) = [
            (".default", "channel-default"),
            (".reducer", "channel-reducer"),
            (".schema", "channel-type"),
            (".scope", "channel-scope"),
            (".id", "channel-name"),
        ]
        .iter()
        .find_map(|(suffix, field)| {
            rest.find(suffix)
                .map(|at| (&rest[..at], *field))
                .filter(|(name, _)| !name.is_empty())
        })
        .unwrap_or((rest, "channel-name"));
        return GraphSetting::Channel {
            name: name.to_string(),
            field,
        };
    }
    match path {
        "limits.max_steps" => GraphSetting::Field("max_steps"),
        "limits.max_tokens" => GraphSetting::Field("max_tokens"),
        "limits.max_cost" => GraphSetting::Field("max_cost"),
        "name" => GraphSetting::Field("graph-name"),
        _ => GraphSetting::Title,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_problem_with_the_same_fix_at_many_nodes_is_one_line() {
        use heddle_engine::{GraphDocument, Registry};
        // Three model nodes read a conversation no channel holds; a router
        // routes to nowhere (a problem of its own, with no shared fix).
        let document: GraphDocument = serde_json::from_value(serde_json::json!({
            "format_version": 2,
            "name": "Many",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "a", "kind": "llm", "label": "A"},
                {"id": "b", "kind": "llm", "label": "B"},
                {"id": "c", "kind": "llm", "label": "C"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "a"},
                {"id": "e2", "from": "a", "to": "b"},
                {"id": "e3", "from": "b", "to": "c"},
                {"id": "e4", "from": "c", "to": "end"}
            ]
        }))
        .expect("a document");
        let problems = heddle_engine::validate(&document, &Registry::default()).problems;
        let same = |problem: &heddle_engine::validate::Problem| {
            problem.fix.is_some() && problem.message.contains("`messages`")
        };
        assert!(
            problems.iter().filter(|problem| same(problem)).count() >= 3,
            "{problems:#?}"
        );
        let lines = super::lines_of(&problems);
        let shared: Vec<_> = lines.iter().filter(|line| same(&line.problem)).collect();
        assert_eq!(shared.len(), 1, "{lines:#?}");
        let mut nodes: Vec<String> = shared[0].more.iter().map(ToString::to_string).collect();
        nodes.extend(shared[0].problem.node.as_ref().map(ToString::to_string));
        nodes.sort();
        assert_eq!(nodes, ["a", "b", "c"]);
        // Every problem is on a line: none lost by the grouping.
        let counted: usize = lines.iter().map(|line| 1 + line.more.len()).sum();
        assert_eq!(counted, problems.len());
    }

    #[test]
    fn a_graph_level_problem_names_the_setting_that_fixes_it() {
        use super::{GraphSetting, graph_setting};
        assert_eq!(
            graph_setting("state.channels.topic.default"),
            GraphSetting::Channel {
                name: "topic".into(),
                field: "channel-default"
            }
        );
        assert_eq!(
            graph_setting("state.channels.a.b.reducer"),
            GraphSetting::Channel {
                name: "a.b".into(),
                field: "channel-reducer"
            }
        );
        assert_eq!(
            graph_setting("state.channels.topic"),
            GraphSetting::Channel {
                name: "topic".into(),
                field: "channel-name"
            }
        );
        assert_eq!(
            graph_setting("limits.max_cost"),
            GraphSetting::Field("max_cost")
        );
        assert_eq!(graph_setting("entry"), GraphSetting::Title);
    }
}
