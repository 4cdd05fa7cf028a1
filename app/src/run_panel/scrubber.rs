//! Replay controls: a slider over the run's steps, step back and forward,
//! play and pause at a chosen speed, and "Live" to go back to the run as
//! it is. Moving the scrubber changes what the canvas and every panel
//! show; the run itself is untouched.

use leptos::prelude::*;

use crate::live::Watch;

/// How long one step shows at 1× speed, in milliseconds.
const STEP_MS: f64 = 700.0;

#[component]
pub fn Scrubber(watch: Watch) -> impl IntoView {
    let last = Memo::new(move |_| watch.log.with(|log| log.last_step()));
    let first = Memo::new(move |_| watch.log.with(|log| log.first_step()).unwrap_or(0));
    let playing = RwSignal::new(false);
    let speed = RwSignal::new(1.0_f64);
    let position = move || watch.cursor.get().or(last.get()).unwrap_or(0);
    // Where a fork's replay starts: the step it branched at.
    let clamp = move |step: u32| step.max(first.get_untracked());
    // Moves to `step`; the last step is the run as it is (following it).
    let go = move |step: u32| {
        let Some(last) = last.get_untracked() else {
            return;
        };
        if step >= last {
            watch.seek(None);
            playing.set(false);
        } else {
            watch.seek(Some(step));
        }
    };
    let back = move |_| {
        let at = watch
            .cursor
            .get_untracked()
            .or(last.get_untracked())
            .unwrap_or(0);
        go(clamp(at.saturating_sub(1)));
    };
    let forward = move |_| {
        if let Some(at) = watch.cursor.get_untracked() {
            go(at + 1);
        }
    };
    let play = move |_| {
        if playing.get_untracked() {
            playing.set(false);
            return;
        }
        if watch.cursor.get_untracked().is_none() {
            go(first.get_untracked());
        }
        playing.set(true);
    };
    // One step per tick while playing; the speed sets the tick.
    Effect::new(move |_| {
        if !playing.get() {
            return;
        }
        let period = std::time::Duration::from_millis((STEP_MS / speed.get()) as u64);
        let handle = set_interval_with_handle(
            move || match watch.cursor.get_untracked() {
                Some(at) => go(at + 1),
                None => playing.set(false),
            },
            period,
        );
        if let Ok(handle) = handle {
            on_cleanup(move || handle.clear());
        }
    });
    let has_run = move || last.get().is_some();
    view! {
        <div class="scrubber" data-testid="scrubber" class:hidden=move || !has_run()>
            <button type="button" class="tool" title="Step back" aria-label="Step back" data-testid="scrub-back"
                on:click=back disabled=move || position() <= first.get()>{icon("M11 3 5 8l6 5z M3 3h2v10H3z")}</button>
            <button type="button" class="tool" data-testid="scrub-play"
                title=move || if playing.get() { "Pause" } else { "Play the run step by step" }
                aria-label=move || if playing.get() { "Pause" } else { "Play" }
                on:click=play>
                {move || if playing.get() { icon("M4 3h3v10H4z M9 3h3v10H9z") } else { icon("M4 2.5 13 8l-9 5.5z") }}
            </button>
            <button type="button" class="tool" title="Step forward" aria-label="Step forward" data-testid="scrub-forward"
                on:click=forward disabled=move || watch.cursor.get().is_none()>{icon("M5 3l6 5-6 5z M11 3h2v10h-2z")}</button>
            <input
                type="range"
                class="scrubber-range"
                aria-label="Step"
                data-testid="scrub-range"
                min=move || first.get().to_string()
                max=move || last.get().unwrap_or(0).to_string()
                prop:value=move || position().to_string()
                on:input=move |event| {
                    if let Ok(step) = event_target_value(&event).parse::<u32>() {
                        go(step);
                    }
                }
            />
            <span class="scrubber-step" data-testid="scrub-step">
                // Steps by the engine's numbers (from 0, as the trace and
                // the events name them), as a range: "Step 2 of 0–5", and
                // while following the run, "Steps 0–5" (a fork's start at
                // the step it branched at).
                {move || {
                    let range = |last: u32| format!("{}–{last}", first.get().min(last));
                    match (watch.cursor.get(), last.get()) {
                        (Some(at), Some(last)) => format!("Step {at} of {}", range(last)),
                        (None, Some(last)) => format!("Steps {}", range(last)),
                        _ => String::new(),
                    }
                }}
            </span>
            <select class="scrubber-speed" aria-label="Speed" data-testid="scrub-speed"
                on:change=move |event| {
                    if let Ok(value) = event_target_value(&event).parse::<f64>() {
                        speed.set(value);
                    }
                }>
                {[0.5, 1.0, 2.0, 4.0].map(|value| view! {
                    <option value=value.to_string() selected=value == 1.0>{format!("{value}×")}</option>
                })}
            </select>
            {move || watch.cursor.get().is_some().then(|| view! {
                <button type="button" class="button button-small" data-testid="scrub-live"
                    title="Show the run as it is now" on:click=move |_| go(u32::MAX)>"Latest"</button>
            })}
        </div>
    }
}

/// A 16×16 icon drawn with one path (fonts differ in which media glyphs
/// they have; a path looks the same everywhere).
fn icon(path: &'static str) -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
            <path d=path fill="currentColor" />
        </svg>
    }
}
