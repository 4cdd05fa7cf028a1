//! Importing a graph: a file or pasted JSON is checked first (a dry run on
//! the server, the same validator as everywhere) and its report shown:
//! what would be created, its problems, the credentials it names that you
//! have not saved. Only then is it created.

use leptos::prelude::*;
use serde_json::Value;

/// What a dry run said.
#[derive(Clone, Debug, PartialEq)]
struct Report {
    name: String,
    nodes: u64,
    edges: u64,
    problems: Vec<String>,
    missing: Vec<String>,
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn read_report(body: &Value) -> Report {
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => text.clone(),
                        other => format!(
                            "{}: {}",
                            other["path"].as_str().unwrap_or_default(),
                            other["message"].as_str().unwrap_or_default()
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    Report {
        name: body["would_create"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        nodes: body["would_create"]["nodes"].as_u64().unwrap_or(0),
        edges: body["would_create"]["edges"].as_u64().unwrap_or(0),
        problems: strings(&body["problems"]),
        missing: strings(&body["missing_credentials"]),
    }
}

/// Sends the import (dry run or for real); the JSON answer or the error.
#[cfg(feature = "hydrate")]
async fn send(text: &str, dry_run: bool) -> Result<Value, String> {
    let document: Value =
        serde_json::from_str(text).map_err(|error| format!("this is not JSON: {error}"))?;
    let url = if dry_run {
        "/api/v1/graphs/import?dry_run=true"
    } else {
        "/api/v1/graphs/import"
    };
    let response = gloo_net::http::Request::post(url)
        .json(&document)
        .map_err(|error| error.to_string())?
        .send()
        .await
        .map_err(|_| "the server cannot be reached".to_string())?;
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if response.ok() {
        Ok(body)
    } else {
        Err(body["error"]["message"]
            .as_str()
            .unwrap_or("the import was refused")
            .to_string())
    }
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
    let check = move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            busy.set(true);
            match send(&text.get_untracked(), true).await {
                Ok(body) => {
                    error.set(None);
                    report.set(Some(read_report(&body)));
                }
                Err(message) => {
                    report.set(None);
                    error.set(Some(message));
                }
            }
            busy.set(false);
        });
    };
    let create = move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            busy.set(true);
            match send(&text.get_untracked(), false).await {
                Ok(body) => {
                    if let Some(id) = body["id"].as_str() {
                        let _ = window().location().set_href(&format!("/graphs/{id}"));
                    }
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
                    Ok(value) => {
                        text.set(value.as_string().unwrap_or_default());
                        report.set(None);
                    }
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
                <p class="page-sub">"A file exported from Heddle, or its JSON pasted below. It is checked before anything is created."</p>
                <label class="field">
                    <span class="field-label">"File"</span>
                    <input type="file" accept=".json,application/json" on:change=pick_file />
                </label>
                <label class="field">
                    <span class="field-label">"Or paste the JSON"</span>
                    <textarea class="mono" rows="8" name="import-json" prop:value=move || text.get()
                        on:input=move |event| { text.set(event_target_value(&event)); report.set(None); }></textarea>
                </label>
                {move || error.get().map(|message| view! { <p class="notice notice-error" role="alert">{message}</p> })}
                {move || report.get().map(|report| view! {
                    <div class="import-report" data-testid="import-report">
                        <p><strong>{report.name.clone()}</strong> {format!(": {} nodes, {} edges", report.nodes, report.edges)}</p>
                        {if report.problems.is_empty() {
                            view! { <p class="empty-note">"No problems."</p> }.into_any()
                        } else {
                            view! {
                                <p>{format!("{} problem(s); it can be imported and fixed in the editor:", report.problems.len())}</p>
                                <ul class="notice-list">{report.problems.iter().map(|p| view! { <li>{p.clone()}</li> }).collect_view()}</ul>
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
                    <button class="button" type="button" disabled=move || busy.get() || text.with(String::is_empty) on:click=check>"Check"</button>
                    <button class="button button-primary" type="button"
                        disabled=move || busy.get() || report.with(|r| r.as_ref().is_none_or(|r| !r.missing.is_empty()))
                        on:click=create>"Import"</button>
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::read_report;

    #[test]
    fn a_dry_run_reads_as_a_report() {
        let report = read_report(&json!({
            "dry_run": true,
            "would_create": {"name": "g", "nodes": 3, "edges": 2, "channels": 1},
            "problems": [{"path": "nodes[1].config", "message": "bad"}],
            "missing_credentials": ["openai"]
        }));
        assert_eq!(
            (report.name.as_str(), report.nodes, report.edges),
            ("g", 3, 2)
        );
        assert_eq!(report.problems, ["nodes[1].config: bad"]);
        assert_eq!(report.missing, ["openai"]);
    }
}
