//! Importing a graph: a file or pasted JSON is checked as it arrives (a
//! dry run on the server, the same validator as everywhere) and its report
//! shown: what would be created, its problems, the credentials it names
//! that you have not saved. Import creates it in one press, checking first
//! when the report has not come yet; a graph naming credentials you have
//! not saved is not created (its report says which).

use leptos::prelude::*;
use serde_json::Value;

use crate::components::CodeSpans;
use crate::graphs::{ImportPreview, check_import, import_graph};

/// How long typed (or pasted) JSON rests before it is checked.
const TYPING_REST_MS: u64 = 400;

/// What a dry run said.
#[derive(Clone, Debug, PartialEq)]
struct Report {
    name: String,
    nodes: usize,
    edges: usize,
    /// How many problems, and the lines they are listed in.
    count: usize,
    problems: Vec<String>,
    missing: Vec<String>,
}

impl From<ImportPreview> for Report {
    fn from(preview: ImportPreview) -> Self {
        Report {
            name: preview.name,
            nodes: preview.nodes,
            edges: preview.edges,
            count: preview.problems.len(),
            problems: grouped(&preview.problems),
            missing: preview.missing_credentials,
        }
    }
}

/// How many places of a problem said at many are named.
const NAMED_PLACES: usize = 3;

/// The problems as lines: one said at several places (a channel 66 nodes
/// read and none declares; 20 nodes after a missing edge that no path
/// reaches) is one line naming a few of them, as the editor's list has
/// it, not 66 lines.
fn grouped(problems: &[heddle_engine::validate::Problem]) -> Vec<String> {
    // Each message's line, looked up: linear in the problems however
    // many a hostile file has.
    let mut line_of: std::collections::HashMap<&str, usize> = Default::default();
    let mut lines: Vec<(&str, Vec<String>)> = Vec::new();
    for problem in problems {
        let (place, said) = said_of_any_node(problem);
        match line_of.get(said) {
            Some(&at) => lines[at].1.push(place),
            None => {
                line_of.insert(said, lines.len());
                lines.push((said, vec![place]));
            }
        }
    }
    lines
        .into_iter()
        .map(|(message, places)| match places.as_slice() {
            [one] => format!("{one}: {message}"),
            _ => {
                let named = places[..places.len().min(NAMED_PLACES)].join(", ");
                match places.len().saturating_sub(NAMED_PLACES) {
                    0 => format!("{named}: {message}"),
                    more => format!("{named} and {more} more: {message}"),
                }
            }
        })
        .collect()
}

/// Where a problem is, and what it says of any node there: "node `x`
/// can never run: …" is said of node `x` as "can never run: …", the same
/// words for every node no path reaches.
fn said_of_any_node(problem: &heddle_engine::validate::Problem) -> (String, &str) {
    let Some(node) = &problem.node else {
        return (problem.path.clone(), &problem.message);
    };
    let place = format!("`{node}`");
    let said = problem
        .message
        .strip_prefix("node ")
        .and_then(|rest| rest.strip_prefix(place.as_str()))
        .and_then(|rest| rest.strip_prefix(' '))
        .unwrap_or(&problem.message);
    (place, said)
}

/// The pasted or loaded text as JSON, or what is wrong with it.
fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("this is not JSON: {error}"))
}

#[component]
pub fn ImportButton() -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <button class="button" type="button" on:click=move |_| open.set(true)>"Import"</button>
        {move || open.get().then(|| view! { <ImportDialog open /> })}
    }
}

#[component]
fn ImportDialog(open: RwSignal<bool>) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let report = RwSignal::new(None::<Report>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    // Each text checked is numbered: a report of a text since replaced is
    // not shown.
    let checked_text = RwSignal::new(0u64);
    let check_now = move || async move {
        let number = checked_text.get_untracked();
        busy.set(true);
        let checked = match parse(&text.get_untracked()) {
            Ok(document) => check_import(document).await.map_err(|e| e.to_string()),
            Err(message) => Err(message),
        };
        busy.set(false);
        if checked_text.get_untracked() != number {
            return None;
        }
        match checked {
            Ok(preview) => {
                error.set(None);
                let checked = Report::from(preview);
                report.set(Some(checked.clone()));
                Some(checked)
            }
            Err(message) => {
                report.set(None);
                error.set(Some(message));
                None
            }
        }
    };
    // A new text: its report goes, and comes again once typing rests (at
    // once for a file).
    let text_changed = move |value: String, rest_ms: u64| {
        text.set(value);
        report.set(None);
        let number = checked_text.get_untracked() + 1;
        checked_text.set(number);
        if text.with_untracked(|text| text.trim().is_empty()) {
            error.set(None);
            return;
        }
        set_timeout(
            move || {
                if checked_text.try_get_untracked() == Some(number) {
                    leptos::task::spawn_local(async move {
                        check_now().await;
                    });
                }
            },
            std::time::Duration::from_millis(rest_ms),
        );
    };
    let create = move |_| {
        leptos::task::spawn_local(async move {
            let ready = match report.get_untracked() {
                Some(ready) => Some(ready),
                None => check_now().await,
            };
            // Credentials it names and you lack: the report says which.
            if ready.is_none_or(|ready| !ready.missing.is_empty()) {
                return;
            }
            busy.set(true);
            let imported = match parse(&text.get_untracked()) {
                Ok(document) => import_graph(document).await.map_err(|e| e.to_string()),
                Err(message) => Err(message),
            };
            match imported {
                Ok(saved) => {
                    let _ = window().location().set_href(&saved.id.href());
                }
                Err(message) => error.set(Some(message)),
            }
            busy.set(false);
        });
    };
    let pick_file = move |event: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(input) = event
                .target()
                .and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            let Some(file) = input.files().and_then(|files| files.get(0)) else {
                return;
            };
            leptos::task::spawn_local(async move {
                let promise = file.text();
                match wasm_bindgen_futures::JsFuture::from(promise).await {
                    Ok(value) => text_changed(value.as_string().unwrap_or_default(), 0),
                    Err(_) => error.set(Some("the file could not be read".into())),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = event;
    };
    view! {
        <div class="help-overlay" role="dialog" aria-label="Import a graph" on:click=move |_| open.set(false)>
            <div class="help-card import-card" on:click=|event| event.stop_propagation()>
                <h2>"Import a graph"</h2>
                <p class="page-sub">"A file exported from Heddle, or its JSON pasted below. It is checked as it comes, before anything is created."</p>
                <label class="field">
                    <span class="field-label">"File"</span>
                    <input type="file" accept=".json,application/json" on:change=pick_file />
                </label>
                <label class="field">
                    <span class="field-label">"Or paste the JSON"</span>
                    <textarea class="mono" rows="8" name="import-json" prop:value=move || text.get()
                        on:input=move |event| text_changed(event_target_value(&event), TYPING_REST_MS)></textarea>
                </label>
                {move || error.get().map(|message| view! { <p class="notice notice-error" role="alert">{message}</p> })}
                {move || report.get().map(|report| view! {
                    <div class="import-report" data-testid="import-report">
                        <p><strong>{report.name.clone()}</strong> {format!(": {} nodes, {} edges", report.nodes, report.edges)}</p>
                        {if report.problems.is_empty() {
                            view! { <p class="empty-note">"No problems."</p> }.into_any()
                        } else {
                            view! {
                                <p>{match report.count {
                                    1 => "1 problem; it can be imported and fixed in the editor:".to_string(),
                                    n => format!("{n} problems; it can be imported and fixed in the editor:"),
                                }}</p>
                                <ul class="notice-list">{report.problems.iter().map(|p| view! { <li><CodeSpans text=p.clone() /></li> }).collect_view()}</ul>
                            }.into_any()
                        }}
                        {(!report.missing.is_empty()).then(|| view! {
                            <p class="field-error">
                                {format!("It names credentials you have not saved: {}. Save secrets with these names in Settings first.", report.missing.join(", "))}
                            </p>
                        })}
                    </div>
                })}
                <div class="conflict-actions">
                    <button class="button" type="button" on:click=move |_| open.set(false)>"Cancel"</button>
                    <button class="button button-primary" type="button"
                        disabled=move || busy.get() || text.with(|text| text.trim().is_empty())
                            || report.with(|r| r.as_ref().is_some_and(|r| !r.missing.is_empty()))
                        on:click=create>"Import"</button>
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::validate::Problem;
    use serde_json::json;

    use super::{Report, parse};
    use crate::graphs::ImportPreview;

    #[test]
    fn a_dry_run_reads_as_a_report() {
        let problem: Problem = serde_json::from_value(json!({
            "severity": "error", "path": "nodes[1].config", "message": "bad",
            "kind": {"code": "bad_config", "message": "bad"}
        }))
        .unwrap();
        let report = Report::from(ImportPreview {
            name: "g".into(),
            nodes: 3,
            edges: 2,
            channels: 1,
            problems: vec![problem],
            missing_credentials: vec!["openai".into()],
        });
        assert_eq!(
            (report.name.as_str(), report.nodes, report.edges),
            ("g", 3, 2)
        );
        assert_eq!(report.problems, ["nodes[1].config: bad"]);
        // The same words at many nodes: one line, a few of them named.
        let at = |node: &str| -> Problem {
            serde_json::from_value(json!({
                "severity": "error", "path": "nodes[1].config.messages", "node": node,
                "message": "`messages` is not a channel of this graph's state",
                "kind": {"code": "bad_config", "message": "x"}
            }))
            .unwrap()
        };
        let many: Vec<Problem> = ["a", "b", "c", "d", "e"].into_iter().map(at).collect();
        assert_eq!(
            super::grouped(&many),
            ["`a`, `b`, `c` and 2 more: `messages` is not a channel of this graph's state"]
        );
        // Words naming their node: one line for all the nodes they name.
        let unreached = |node: &str| -> Problem {
            serde_json::from_value(json!({
                "severity": "warning", "path": "nodes[4]", "node": node,
                "message": format!("node `{node}` can never run: no path leads to it from the entry"),
                "kind": {"code": "unreachable", "node": node}
            }))
            .unwrap()
        };
        let cut: Vec<Problem> = ["s21", "s22", "s23", "s24"]
            .into_iter()
            .map(unreached)
            .collect();
        assert_eq!(
            super::grouped(&cut),
            ["`s21`, `s22`, `s23` and 1 more: can never run: no path leads to it from the entry"]
        );
        assert_eq!(
            super::grouped(&cut[..1]),
            ["`s21`: can never run: no path leads to it from the entry"]
        );
        assert_eq!(report.missing, ["openai"]);
        assert!(parse("{oops").unwrap_err().starts_with("this is not JSON"));
    }
}
