//! The graph bar's publishing control: which version calls from outside
//! run ("Live v7", or "Not published"), and for editors one click to make
//! the newest saved version live.

use leptos::prelude::*;

use super::local_time::timestamp;
use crate::publishing::Live;

#[component]
pub fn PublishControl(
    live: Live,
    /// The newest saved version.
    #[prop(into)]
    saved: Signal<i64>,
    /// Whether everything is saved (a version with unsaved edits on top
    /// is not what the editor sees).
    #[prop(into)]
    settled: Signal<bool>,
    can_edit: bool,
) -> impl IntoView {
    let badge = move || {
        live.publication.get().map(|loaded| match loaded {
            Ok(Some(publication)) => {
                let mut title = format!(
                    "Calls from outside (API keys, webhooks, schedules, the chat endpoint) run version {}. Published {}",
                    publication.version,
                    timestamp(&publication.published_at)
                );
                if let Some(by) = &publication.published_by {
                    title.push_str(&format!(" by {by}"));
                }
                view! {
                    <span class="badge badge-live" title=title data-testid="live-version">
                        <span class="dot" aria-hidden="true"></span>
                        {format!("Live v{}", publication.version)}
                    </span>
                }
                .into_any()
            }
            Ok(None) => view! {
                <span class="badge badge-offline" data-testid="live-version"
                    title="Calls from outside the editor are refused until a version is published">
                    "Not published"
                </span>
            }
            .into_any(),
            Err(_) => ().into_any(),
        })
    };
    let button = move || {
        let current = saved.get();
        let live_version = live.version();
        (can_edit && live.publication.get().is_some() && live_version != Some(current)).then(|| {
            let label = match live_version {
                Some(_) => format!("Publish v{current}"),
                None => "Publish".to_string(),
            };
            view! {
                <button class="button" type="button" data-testid="publish"
                    title=move || if settled.get() {
                        format!("Make version {} the one calls from outside run", saved.get())
                    } else {
                        "Wait for your changes to be saved".to_string()
                    }
                    disabled=move || live.pending.get() || !settled.get()
                    on:click=move |_| live.publish(saved.get_untracked())>
                    {label}
                </button>
            }
        })
    };
    view! {
        <Transition fallback=|| ()>{badge}{button}</Transition>
        {move || live.error.get().map(|message| view! {
            <span class="field-error" role="alert" data-testid="publish-error">{message}</span>
        })}
    }
}
