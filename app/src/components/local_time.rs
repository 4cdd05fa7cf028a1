//! Times as the person reads them: in their own time zone. The server
//! knows only UTC, so a page is drawn first in UTC (the server's HTML and
//! the browser's first render agree, as hydration needs) and every time on
//! it turns local once the page is hydrated.

use crate::graphs::display_timestamp;
use leptos::prelude::*;

/// Whether times may be shown in the browser's time zone: false until the
/// page is hydrated.
#[derive(Clone, Copy)]
struct LocalClock(RwSignal<bool>);

/// Provides the clock for the whole app, turned local once hydrated.
pub fn provide_local_clock() {
    let local = RwSignal::new(false);
    provide_context(LocalClock(local));
    // Effects run only in the browser, after hydration.
    Effect::new(move |_| local.set(true));
}

/// `iso` (an ISO-8601 UTC timestamp) as a person reads it: `2026-11-21
/// 07:40` in their time zone once the page is hydrated, `2026-11-21 06:40
/// UTC` before (and on the server). Reactive: read it in a closure.
pub fn timestamp(iso: &str) -> String {
    let local = use_context::<LocalClock>().is_some_and(|clock| clock.0.get());
    local
        .then(|| in_this_zone(iso))
        .flatten()
        .unwrap_or_else(|| display_timestamp(iso))
}

/// A `<time>` element for `iso`: local text, the UTC time in its tooltip
/// and the machine-readable instant in `datetime`.
#[component]
pub fn LocalTime(#[prop(into)] at: String) -> impl IntoView {
    let utc = display_timestamp(&at);
    let text = {
        let at = at.clone();
        move || timestamp(&at)
    };
    view! { <time datetime=at title=utc>{text}</time> }
}

/// The instant in the browser's time zone (daylight saving as it was on
/// that date), or None where there is no browser or no valid instant.
#[cfg(not(feature = "ssr"))]
fn in_this_zone(iso: &str) -> Option<String> {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(iso));
    if date.get_time().is_nan() {
        return None;
    }
    Some(format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        date.get_full_year(),
        date.get_month() + 1,
        date.get_date(),
        date.get_hours(),
        date.get_minutes()
    ))
}

#[cfg(feature = "ssr")]
fn in_this_zone(_iso: &str) -> Option<String> {
    None
}
