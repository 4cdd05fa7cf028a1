//! The note on a graph too big to read whole at the canvas's size, while
//! the view is still the one it opened at. A graph that opened at its
//! start says so and offers the whole (as Fit and F do); shown whole
//! (after Show all or Fit), it offers the start again. Either way the
//! canvas and the minimap move around. It goes once the view is moved.

use leptos::prelude::*;

use super::gestures::Gestures;
use super::state::{Editor, Viewport};

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
    move || {
        framing().map(|at_start| {
            let (text, button) = if at_start {
                (
                    format!("The start of {} nodes: all at once would be too small to read. Drag to move around.", count()),
                    "Show all",
                )
            } else {
                (
                    format!("All {} nodes, too small to read: zoom in, or go to where runs begin.", count()),
                    "Go to the start",
                )
            };
            view! {
                <div class="start-framing" role="status" data-testid="start-framing">
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
