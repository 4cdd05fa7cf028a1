//! The version history: every save, with its time and author; preview one
//! (drawn read-only), and restore it (saved as the newest version, so
//! nothing in between is lost).

use leptos::prelude::*;

use super::persist::Persistence;
use crate::components::GraphPreview;
use crate::graphs::{
    VersionSummary, display_timestamp, get_version, list_versions, restore_version,
};
use crate::publishing::Live;

#[component]
pub fn VersionHistory(
    persistence: Persistence,
    graph_id: String,
    can_edit: bool,
    /// Which version is live, with Publish on the others (a rollback when
    /// older) and "Take offline" on it.
    #[prop(default = None)]
    live: Option<Live>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let list_id = graph_id.clone();
    let versions = Resource::new(
        move || (open.get(), persistence.version.get()),
        move |(open, _)| {
            let graph_id = list_id.clone();
            async move {
                if open {
                    list_versions(graph_id).await
                } else {
                    Ok(Vec::new())
                }
            }
        },
    );
    let preview = RwSignal::new(None::<(i64, String)>);
    let error = RwSignal::new(None::<String>);
    let show = {
        let graph_id = graph_id.clone();
        move |version: i64| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match get_version(graph_id, version).await {
                    Ok(document) => preview.set(Some((version, document))),
                    Err(failure) => error.set(Some(failure.to_string())),
                }
            });
        }
    };
    let restore = {
        let graph_id = graph_id.clone();
        move |version: i64| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match restore_version(graph_id, version).await {
                    Ok(_) => {
                        preview.set(None);
                        persistence.reload_theirs();
                    }
                    Err(failure) => error.set(Some(failure.to_string())),
                }
            });
        }
    };
    let restore_from_preview = restore.clone();
    view! {
        <details class="history" on:toggle=move |event| {
            open.set(event_target::<web_sys::HtmlDetailsElement>(&event).open());
        }>
            <summary>"Version history"</summary>
            {move || error.get().map(|message| view! { <p class="field-error" role="alert">{message}</p> })}
            <Transition fallback=|| view! { <p class="loading">"Loading versions…"</p> }>
                {move || {
                    let show = show.clone();
                    let restore = restore.clone();
                    Suspend::new(async move {
                        let list: Vec<VersionSummary> = versions.await.unwrap_or_default();
                        let current = persistence.version.get_untracked();
                        view! {
                            <ul class="version-list">
                                {list
                                    .into_iter()
                                    .map(|version| {
                                        let number = version.version;
                                        let show = show.clone();
                                        let restore = restore.clone();
                                        view! {
                                            <li class="version-row" data-version=number>
                                                <span class="version-number">{format!("v{number}")}</span>
                                                {live.map(|live| move || (live.version() == Some(number)).then(|| view! {
                                                    <span class="badge badge-live" data-testid="live-marker"
                                                        title="Calls from outside the editor run this version">"Live"</span>
                                                }))}
                                                <span class="version-meta">
                                                    {display_timestamp(&version.created_at)}
                                                    {version.author.map(|author| format!(" · {author}"))}
                                                </span>
                                                <span class="version-actions">
                                                    <button class="button button-small" type="button" on:click=move |_| show(number)>"Preview"</button>
                                                    {(can_edit && number != current).then(|| view! {
                                                        <button class="button button-small" type="button" on:click=move |_| restore(number)>"Restore"</button>
                                                    })}
                                                    {live.filter(|_| can_edit).map(|live| move || match live.version() == Some(number) {
                                                        true => view! {
                                                            <button class="button button-small" type="button" disabled=move || live.pending.get()
                                                                title="Refuse calls from outside until a version is published again"
                                                                on:click=move |_| live.unpublish()>"Take offline"</button>
                                                        }.into_any(),
                                                        false => view! {
                                                            <button class="button button-small" type="button" disabled=move || live.pending.get()
                                                                title=format!("Make version {number} the one calls from outside run")
                                                                on:click=move |_| live.publish(number)>"Publish"</button>
                                                        }.into_any(),
                                                    })}
                                                </span>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                    })
                }}
            </Transition>
        </details>
        {move || {
            let restore = restore_from_preview.clone();
            preview.get().map(|(number, document)| view! {
                <div class="help-overlay" role="dialog" aria-label="Version preview" on:click=move |_| preview.set(None)>
                    <div class="help-card preview-card" on:click=|event| event.stop_propagation()>
                        <h2>{format!("Version {number}")}</h2>
                        <div class="preview-frame"><GraphPreview document /></div>
                        <div class="conflict-actions">
                            <button class="button" type="button" on:click=move |_| preview.set(None)>"Close"</button>
                            {can_edit.then(|| view! {
                                <button class="button button-primary" type="button" on:click=move |_| restore(number)>"Restore this version"</button>
                            })}
                        </div>
                    </div>
                </div>
            })
        }}
    }
}
