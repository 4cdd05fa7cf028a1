//! A modal dialog: a backdrop that closes it when clicked, Escape that
//! closes it wherever the focus is (even after the button that had it went
//! away), and the panel, labelled by its heading.

use leptos::prelude::*;

#[component]
pub fn Dialog(
    /// Closes the dialog.
    on_close: Callback<()>,
    /// The id of the element naming the dialog (its heading).
    labelled_by: &'static str,
    /// More classes for the panel.
    #[prop(optional)]
    class: &'static str,
    children: Children,
) -> impl IntoView {
    let escape = window_event_listener(leptos::ev::keydown, move |event| {
        if event.key() == "Escape" {
            on_close.run(());
        }
    });
    on_cleanup(move || escape.remove());
    view! {
        <div class="dialog-backdrop" on:click=move |_| on_close.run(())></div>
        <div class=format!("dialog {class}") role="dialog" aria-modal="true" aria-labelledby=labelled_by>
            {children()}
        </div>
    }
}

/// Moves the focus into a dialog, onto `first`, so the keyboard goes on
/// from there: at once when it is in the page already, so keys typed
/// right after the press that opened it (Find, then "Step 120") land in
/// it, not on the button pressed; else a frame after it is drawn (its
/// elements are made before they are in the page, and a detached element
/// takes no focus).
///
/// Unless the focus is already in the same form or dialog: a person quick
/// to click the field they want (or a test filling it) keeps it. Taken
/// back a frame later, their typing went into the first field instead.
pub fn focus_when_drawn<E>(first: NodeRef<E>)
where
    E: leptos::html::ElementType + 'static,
    E::Output: wasm_bindgen::JsCast + Clone + 'static,
{
    use wasm_bindgen::JsCast;
    // Whether the focus went to `first` (or stays where it is, beside it).
    let focus = move || {
        let Some(element) = first.try_get_untracked().flatten() else {
            return false;
        };
        let element: &web_sys::HtmlElement = element.unchecked_ref();
        if !element.is_connected() {
            return false;
        }
        if !focused_beside(element) {
            let _ = element.focus();
        }
        true
    };
    Effect::new(move |_| {
        first.track();
        if focus() {
            return;
        }
        // The dialog may be gone by the next frame (closed at once): its
        // reference with it.
        request_animation_frame(move || {
            focus();
        });
    });
}

/// Whether the focus is on another element of `first`'s form or dialog.
fn focused_beside(first: &web_sys::HtmlElement) -> bool {
    let Some(focused) = document().active_element() else {
        return false;
    };
    let within = first.closest("form, [role=dialog]").ok().flatten();
    AsRef::<web_sys::Element>::as_ref(first) != &focused
        && within.is_some_and(|within| within.contains(Some(&focused)))
}

/// Puts the focus on the first element `selector` finds once it is in the
/// page, looking at each frame for up to `frames` frames: what was just
/// asked for (a node in a group opening, a page reached from another) is
/// drawn a few frames later, more under load.
pub fn focus_once_shown(selector: String, frames: u32) {
    request_animation_frame(move || {
        let shown = document()
            .query_selector(&selector)
            .ok()
            .flatten()
            .is_some_and(|element| element.is_connected());
        if shown {
            focus_first(&selector);
        } else if frames > 0 {
            focus_once_shown(selector, frames - 1);
        }
    });
}

/// Puts the focus on the first element `selector` finds (a node on the
/// canvas, a panel's first field), if there is one.
pub fn focus_first(selector: &str) {
    use wasm_bindgen::JsCast;
    let Some(element) = document().query_selector(selector).ok().flatten() else {
        return;
    };
    // An edge on the canvas is an SVG element: focusable, but not HTML.
    match element.dyn_into::<web_sys::HtmlElement>() {
        Ok(html) => {
            let _ = html.focus();
        }
        Err(element) => {
            if let Ok(svg) = element.dyn_into::<web_sys::SvgElement>() {
                let _ = svg.focus();
            }
        }
    }
}
