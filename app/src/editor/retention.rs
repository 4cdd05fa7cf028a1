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
            <CountField
                label="Checkpoints kept per thread"
                name="keep_checkpoints"
                hint="The newest ones; pauses, fork points and each run's last are always kept."
                read_only
                value=Signal::derive(move || {
                    skeleton.with(|d| d.retention.keep_checkpoints.map(NonZeroU32::get))
                })
                set=Callback::new(move |kept: Option<NonZeroU32>| {
                    editor.change(|document| document.retention.keep_checkpoints = kept);
                })
            />
            <CountField
                label="Days a run's events are kept"
                name="keep_events_days"
                hint="After that, a run keeps how it started and how it ended; its steps go."
                read_only
                value=Signal::derive(move || skeleton.with(|d| d.retention.keep_events_days))
                set=Callback::new(move |days: Option<NonZeroU32>| {
                    let days = days.map(NonZeroU32::get);
                    editor.change(|document| document.retention.keep_events_days = days);
                })
            />
        </fieldset>
    }
}

/// A whole number of at least 1, or empty for the server's policy.
#[component]
fn CountField(
    label: &'static str,
    name: &'static str,
    hint: &'static str,
    read_only: bool,
    value: Signal<Option<u32>>,
    set: Callback<Option<NonZeroU32>>,
) -> impl IntoView {
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <input name=name type="number" min="1" placeholder="the server's policy"
                readonly=read_only
                prop:value=move || value.get().map(|n| n.to_string()).unwrap_or_default()
                on:change=move |event| {
                    let count = event_target_value(&event).trim().parse::<u32>().ok()
                        .and_then(NonZeroU32::new);
                    set.run(count);
                } />
            <span class="field-hint">{hint}</span>
        </label>
    }
}
