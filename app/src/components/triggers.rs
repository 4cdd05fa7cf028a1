//! The graph page's Triggers section: what starts runs of the published
//! version from outside the editor. Webhooks, schedules and chat widgets
//! are listed (to everyone who can see the graph) and managed (by
//! editors) here; API keys live under Settings, since a key can span
//! graphs.

mod schedules;
mod trigger_list;
mod webhooks;
mod widgets;

use leptos::prelude::*;

/// The Triggers section; its lists load when it is opened.
#[component]
pub fn TriggersPanel(graph_id: String, can_edit: bool) -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <details class="history triggers" on:toggle=move |event| {
            open.set(event_target::<web_sys::HtmlDetailsElement>(&event).open());
        }>
            <summary>"Triggers"</summary>
            <p class="field-hint">
                "Webhooks, schedules and chat widgets run the published version, as the person who made them. "
                "Scripts and OpenAI clients use an API key: "
                <a href="/settings">"Settings"</a> "."
            </p>
            <webhooks::Webhooks graph_id=graph_id.clone() can_edit open />
            <schedules::Schedules graph_id=graph_id.clone() can_edit open />
            <widgets::Widgets graph_id can_edit open />
        </details>
    }
}

/// Asks the browser to confirm `question` (always yes on the server,
/// where nothing is clicked).
fn confirmed(question: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        window().confirm_with_message(question).unwrap_or(false)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = question;
        true
    }
}
