//! A past run drawn on the version it ran. The canvas holds the draft;
//! a run opened from the history (or a shared link) may have run an older
//! version, with other nodes and edges. When the watched run's version is
//! not what the editor shows, that version is drawn over the canvas with
//! the run's states, under a notice saying so, until the person goes back
//! to the draft. Decided once per watched run: edits made afterwards never
//! swap the canvas away.

use heddle_engine::ids::RunId;
use leptos::prelude::*;

use super::persist::{Persistence, SaveState};
use crate::components::GraphPreview;
use crate::live::RunView;

/// The version a run ran, when the canvas does not show it.
#[derive(Clone, Debug, PartialEq)]
struct Elsewhere {
    run_id: RunId,
    version: i64,
    /// The version's document (JSON), once fetched.
    document: Option<String>,
}

/// The notice, and the run's version over the canvas.
#[component]
pub fn RunVersion(
    live: RwSignal<RunView>,
    persistence: Persistence,
    graph_id: String,
) -> impl IntoView {
    let elsewhere = RwSignal::new(None::<Elsewhere>);
    let dismissed = RwSignal::new(false);
    // The version the page opened with, and whether the run it opened on
    // is yet to be compared: that run came to be watched as the page
    // loaded, and on a slow answer the person may have edited by then.
    let opened_with = persistence.version.get_untracked();
    let first = StoredValue::new(true);
    Effect::new(move |shown: Option<Option<RunId>>| {
        let run_id = live.with(|view| view.run_id.clone());
        if shown.as_ref() == Some(&run_id) {
            return run_id;
        }
        elsewhere.set(None);
        dismissed.set(false);
        if let Some(asked) = run_id.clone() {
            let graph_id = graph_id.clone();
            // What the canvas held as the run came to be watched: the run
            // is compared with that, not with what it holds once the run's
            // record arrives. Edited meanwhile (a slow answer, a page still
            // loading), it was swapped for the run's older version under
            // the person's hands: the draft they were editing was hidden.
            let on_screen = persistence.version.get_untracked();
            let draft_is_saved = persistence.status.get_untracked() == SaveState::Saved;
            // The run the page opened on is compared with the version the
            // page opened with too: it ran what was on screen then.
            let page_opened_on_it = first.try_update_value(std::mem::take).unwrap_or(false);
            leptos::task::spawn_local(async move {
                let Ok(run) = crate::live::api::run(&asked).await else {
                    return;
                };
                if (run.graph_version == on_screen && draft_is_saved)
                    || (page_opened_on_it && run.graph_version == opened_with)
                {
                    return;
                }
                let still = || live.with_untracked(|view| view.run_id.as_ref() == Some(&asked));
                if !still() {
                    return;
                }
                let _ = elsewhere.try_set(Some(Elsewhere {
                    run_id: asked.clone(),
                    version: run.graph_version,
                    document: None,
                }));
                let document = crate::graphs::get_version(graph_id, run.graph_version)
                    .await
                    .ok();
                if still() {
                    let _ = elsewhere.try_update(|shown| {
                        if let Some(shown) = shown.as_mut().filter(|s| s.run_id == asked) {
                            shown.document = document;
                        }
                    });
                }
            });
        }
        run_id
    });
    move || {
        let shown = elsewhere.get()?;
        let draft = match persistence.status.get() {
            SaveState::Saved => format!("version {}", persistence.version.get()),
            _ => "your unsaved changes".to_string(),
        };
        let over = !dismissed.get();
        Some(view! {
            <div class="run-version-notice notice" class:draft-shown=!over role="status"
                data-testid="run-version-notice">
                // Back on the draft, one short line: it sits over the
                // canvas's bottom edge.
                <span>
                    {if over {
                        format!(
                            "This run ran version {}; the editor holds {draft}. Shown: the version it ran.",
                            shown.version
                        )
                    } else {
                        format!("This run ran version {}, not the graph shown.", shown.version)
                    }}
                </span>
                <button class="button button-small" type="button" data-testid="run-version-toggle"
                    on:click=move |_| dismissed.update(|d| *d = !*d)>
                    {if over { "Back to the draft".to_string() } else { format!("Show version {}", shown.version) }}
                </button>
            </div>
            {over.then(|| view! {
                <div class="run-version-overlay" data-testid="run-version-overlay">
                    {match shown.document.clone() {
                        Some(document) => view! { <GraphPreview document live /> }.into_any(),
                        None => view! { <p class="muted">"Loading the version it ran…"</p> }.into_any(),
                    }}
                </div>
            })}
        })
    }
}
