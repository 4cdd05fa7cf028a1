//! What a node kind does, said at once beside the kind under the pointer:
//! the palette's summaries are cut to a line, and on a narrow window the
//! kinds are icons alone. The browser's own tooltip (`title`) waits a
//! second and more, too long to learn a rail of icons by. One tip for the
//! whole palette, placed from the kind's box (the palette scrolls, so a
//! tip inside it would be cut off); the kinds carry no listener of their
//! own.

use heddle_engine::kinds::BuiltinKind;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The tip shown: its text and where it points (the page's coordinates:
/// the kind's right edge and middle).
#[derive(Clone, Debug, PartialEq)]
pub struct Tip {
    text: String,
    x: f64,
    y: f64,
}

/// The kind under `target` (an element in a palette row), as its tip.
pub fn tip_for(target: Option<web_sys::EventTarget>) -> Option<Tip> {
    let item = target?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest(".palette-item")
        .ok()??;
    let name = item.get_attribute("data-kind")?;
    let kind = BuiltinKind::ALL.iter().find(|kind| kind.name() == name)?;
    let rect = item.get_bounding_client_rect();
    Some(Tip {
        text: format!("{}: {}", kind.name(), kind.summary()),
        x: rect.right() + 8.0,
        y: rect.top() + rect.height() / 2.0,
    })
}

/// The tip, when there is one: not a control, and hidden from screen
/// readers (each row's name says the same).
#[component]
pub fn PaletteTip(tip: RwSignal<Option<Tip>>) -> impl IntoView {
    move || {
        tip.get().map(|Tip { text, x, y }| {
            view! {
                <div class="palette-tip" aria-hidden="true" data-testid="palette-tip"
                    style=format!("left: {x:.0}px; top: {y:.0}px")>{text}</div>
            }
        })
    }
}
