//! F6 and Shift+F6: the focus from one of the editor's panels to the next
//! (the node kinds, the canvas, the inspector, the run panel), where each
//! one's work is done. A folded run panel F6 comes to is opened on its
//! first tab; F6 passing on from it, nothing done there, folds it again
//! (on a 1024 px window an open panel takes half the canvas).

use std::cell::RefCell;

use leptos::prelude::*;

thread_local! {
    /// Where F6 put the focus in the run panel it opened: pressed again
    /// from there, with nothing typed, it folds the panel back.
    static PASSED: RefCell<Option<web_sys::Element>> = const { RefCell::new(None) };
}

/// Whether `element` is a text field holding something typed.
fn holds_text(element: &web_sys::Element) -> bool {
    use wasm_bindgen::JsCast;
    if let Some(field) = element.dyn_ref::<web_sys::HtmlTextAreaElement>() {
        return !field.value().is_empty();
    }
    element
        .dyn_ref::<web_sys::HtmlInputElement>()
        .is_some_and(|field| !field.value().is_empty())
}

/// The editor's panels, in the order F6 visits them.
const REGIONS: [&str; 4] = [".palette", ".editor-canvas", ".inspector", ".run-panel"];

/// What in a panel takes the focus when F6 arrives there (unless the
/// panel is its own stop, `data-region-stop`), first found
/// first: where its work is done (`data-first-stop`: the chat's box), its
/// chosen tab, else its first field or button that is a Tab stop (the
/// canvas itself takes it).
const PREFERRED_STOPS: [&str; 2] = ["[data-first-stop]", "[role=tab][aria-selected=true]"];
const FIRST_STOP: &str = "[role=tab][aria-selected=true], input:not([type=hidden]), select, \
     textarea, button:not([tabindex='-1']), a[href], [tabindex='0']";

/// Moves the focus to the next panel shown (the previous with `back`)
/// after the one holding it; whether there was one to go to.
pub fn go_to_region(back: bool) -> bool {
    use wasm_bindgen::JsCast;
    let page = document();
    let shown: Vec<(usize, web_sys::HtmlElement)> = REGIONS
        .iter()
        .enumerate()
        .filter_map(|(i, selector)| {
            let region = page.query_selector(selector).ok().flatten()?;
            let region = region.dyn_into::<web_sys::HtmlElement>().ok()?;
            (!region.hidden() && region.offset_width() > 0).then_some((i, region))
        })
        .collect();
    if shown.is_empty() {
        return false;
    }
    let active = page.active_element();
    let here = active.as_ref().and_then(|active| {
        shown
            .iter()
            .position(|(i, _)| active.closest(REGIONS[*i]).ok().flatten().is_some())
    });
    let passed = PASSED.with_borrow_mut(Option::take);
    if let (Some(stop), Some(active)) = (passed, &active)
        && stop == *active
        && !holds_text(active)
        && let Some(toggle) = active
            .closest(".run-panel.open")
            .ok()
            .flatten()
            .and_then(|panel| panel.query_selector(".run-panel-toggle").ok().flatten())
            .and_then(|toggle| toggle.dyn_into::<web_sys::HtmlElement>().ok())
    {
        toggle.click();
    }
    let next = match (here, back) {
        (None, false) => 0,
        (None, true) => shown.len() - 1,
        (Some(at), false) => (at + 1) % shown.len(),
        (Some(at), true) => (at + shown.len() - 1) % shown.len(),
    };
    let region = shown[next].1.clone();
    // A folded run panel is opened on its first tab (the chat, in a chat
    // graph): going to it means to use it. Its stop is there a frame on.
    if region.matches(".run-panel:not(.open)").unwrap_or(false)
        && let Some(tab) = region
            .query_selector("[role=tab]")
            .ok()
            .flatten()
            .and_then(|tab| tab.dyn_into::<web_sys::HtmlElement>().ok())
    {
        tab.click();
        let _ = tab.focus();
        request_animation_frame(move || {
            if focus_in(&region) {
                PASSED.set(document().active_element());
            }
        });
        return true;
    }
    focus_in(&region)
}

/// Puts the focus where F6 stops in `region`; whether there was a stop.
/// A region that is its own stop (the inspector) takes the focus itself:
/// F6 passing through never lands in a field, where the next keys typed
/// (a message meant for the chat) would change the graph. Tab goes on
/// into its fields.
fn focus_in(region: &web_sys::HtmlElement) -> bool {
    use wasm_bindgen::JsCast;
    let target = if region.tab_index() >= 0 || region.has_attribute("data-region-stop") {
        Some(region.clone())
    } else {
        PREFERRED_STOPS
            .iter()
            .chain([&FIRST_STOP])
            .find_map(|stop| region.query_selector(stop).ok().flatten())
            .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
    };
    target.is_some_and(|target| target.focus().is_ok())
}
