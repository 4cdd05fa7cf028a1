//! The rubber band: the box a drag on empty canvas draws to select nodes.

use crate::editor::gestures::Gestures;
use leptos::prelude::*;

#[component]
pub(super) fn RubberBand(gestures: Gestures) -> impl IntoView {
    move || {
        gestures.rubber.get().map(|(a, b)| {
            let style = format!(
                "left: {}px; top: {}px; width: {}px; height: {}px",
                a.x.min(b.x),
                a.y.min(b.y),
                (a.x - b.x).abs(),
                (a.y - b.y).abs()
            );
            view! { <div class="editor-rubber" style=style></div> }
        })
    }
}
