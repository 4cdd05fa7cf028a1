//! The note on a graph too big to read whole at the canvas's size, while
//! the view is still the one it opened at. A graph that opened at its
//! start says so and offers the whole (as Fit and F do); shown whole
//! (after Show all or Fit), it offers the start again. Either way the
//! canvas and the minimap move around. It goes once the view is moved.

use leptos::prelude::*;

use super::gestures::Gestures;
use super::state::{Editor, Viewport};

/// Below this canvas width or height, the note is one short line.
const SHORT_WIDTH: f64 = 640.0;
const SHORT_HEIGHT: f64 = 360.0;

#[component]
pub fn StartFraming(editor: Editor, gestures: Gestures) -> impl IntoView {
    // `Some(true)`: at the start; `Some(false)`: whole, too small to read.
    let framing = move || {
        let zoom = editor.viewport.with(|view| view.zoom);
        if !editor.still_framed() {
            return None;
        }
        if editor.showing_start.get() {
            Some(true)
        } else if zoom < Viewport::READABLE {
            Some(false)
        } else {
            None
        }
    };
    let count = move || editor.nodes.with(Vec::len);
    // On a short or narrow canvas (a laptop's, with the run panel open)
    // the note says the same in one line, so it does not cover the graph.
    let short = move || {
        gestures
            .seen_size()
            .is_some_and(|(width, height)| width < SHORT_WIDTH || height < SHORT_HEIGHT)
    };
    move || {
        framing().map(|at_start| {
            let (text, button) = match (at_start, short()) {
                (true, false) => (
                    format!("The start of {} nodes: all at once would be too small to read. Drag to move around.", count()),
                    "Show all",
                ),
                (true, true) => (format!("The start of {} nodes.", count()), "Show all"),
                (false, false) => (
                    format!("All {} nodes, too small to read: zoom in, or go to where runs begin.", count()),
                    "Go to the start",
                ),
                (false, true) => (
                    format!("All {} nodes, too small to read.", count()),
                    "Go to the start",
                ),
            };
            view! {
                <div class="start-framing" class:short=short data-testid="start-framing">
                    <span>{text}</span>
                    <button class="button button-small" type="button" on:click=move |_| {
                        let (width, height) = gestures.size();
                        if at_start {
                            editor.fit(width, height);
                        } else {
                            editor.go_to_start(height);
                        }
                    }>{button}</button>
                </div>
            }
        })
    }
}
