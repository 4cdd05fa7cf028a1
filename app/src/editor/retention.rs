//! What the server keeps of this graph's runs, where it should differ
//! from the server's policy (`retention` in the graph document; see
//! docs/runs.md, "Retention"): two numbers under the graph's settings, left
//! empty to follow the server.

use std::num::NonZeroU32;

use leptos::prelude::*;

use super::state::Editor;

/// The graph's retention fields.
#[component]
pub fn RetentionFields(editor: Editor) -> impl IntoView {
    let read_only = !editor.can_edit;
    let skeleton = editor.skeleton;
    view! {
        <fieldset class="field-group" aria-label="What is kept of its runs">
            <legend class="field-label">"What is kept of its runs"</legend>
            <label class="field">
                <span class="field-label">"Checkpoints kept per thread"</span>
                <input name="keep_checkpoints" type="number" min="1" placeholder="the server's policy"
                    readonly=read_only
                    prop:value=move || skeleton.with(|d| {
                        d.retention.keep_checkpoints.map(|n| n.to_string()).unwrap_or_default()
                    })
                    on:change=move |event| {
                        let kept = event_target_value(&event).trim().parse::<u32>().ok()
                            .and_then(NonZeroU32::new);
                        editor.change(|document| document.retention.keep_checkpoints = kept);
                    } />
                <span class="field-hint">
                    "The newest ones; pauses, fork points and each run's last are always kept."
                </span>
            </label>
            <label class="field">
                <span class="field-label">"Days a run's events are kept"</span>
                <input name="keep_events_days" type="number" min="1" placeholder="the server's policy"
                    readonly=read_only
                    prop:value=move || skeleton.with(|d| {
                        d.retention.keep_events_days.map(|n| n.to_string()).unwrap_or_default()
                    })
                    on:change=move |event| {
                        let days = event_target_value(&event).trim().parse::<u32>().ok()
                            .filter(|days| *days > 0);
                        editor.change(|document| document.retention.keep_events_days = days);
                    } />
                <span class="field-hint">
                    "After that, a run keeps how it started and how it ended; its steps go."
                </span>
            </label>
        </fieldset>
    }
}
