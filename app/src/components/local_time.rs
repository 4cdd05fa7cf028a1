//! Times as the person reads them: in their own time zone. The server
//! knows only UTC, so a page is drawn first in UTC (the server's HTML and
//! the browser's first render agree, as hydration needs) and every time on
//! it turns local once the page is hydrated. A time of the last week
//! then reads as people say it ("5 min ago"), kept current by one clock
//! for the page that ticks every half minute; the exact time is in its
//! tooltip.

use crate::graphs::display_timestamp;
use leptos::prelude::*;

/// Whether times may be shown in the browser's time zone (false until the
/// page is hydrated), and the time now, in milliseconds since the epoch,
/// once it is (ticking).
#[derive(Clone, Copy)]
struct LocalClock {
    local: RwSignal<bool>,
    now: RwSignal<Option<f64>>,
}

/// How often the clock ticks: "5 min ago" stays true to the minute.
const TICK_MS: u64 = 30_000;

/// Provides the clock for the whole app, turned local once hydrated.
pub fn provide_local_clock() {
    let local = RwSignal::new(false);
    let now = RwSignal::new(None);
    provide_context(LocalClock { local, now });
    // Effects run only in the browser, after hydration.
    Effect::new(move |_| {
        local.set(true);
        now.set(now_ms());
        let _ = set_interval_with_handle(
            move || {
                let _ = now.try_set(now_ms());
            },
            std::time::Duration::from_millis(TICK_MS),
        );
    });
}

/// How long ago, as people say it, for a past time of the last week:
/// "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago". None
/// for a time to come or further back (then it reads as a date).
fn ago(elapsed_ms: f64) -> Option<String> {
    const MINUTE: f64 = 60_000.0;
    const HOUR: f64 = 60.0 * MINUTE;
    const DAY: f64 = 24.0 * HOUR;
    // A clock a little ahead of the server's still says "just now".
    if !(-MINUTE..7.0 * DAY).contains(&elapsed_ms) {
        return None;
    }
    let whole = |unit: f64| (elapsed_ms / unit).floor() as u64;
    Some(match elapsed_ms {
        t if t < MINUTE => "just now".to_string(),
        t if t < HOUR => format!("{} min ago", whole(MINUTE)),
        t if t < DAY => format!("{} h ago", whole(HOUR)),
        t if t < 2.0 * DAY => "yesterday".to_string(),
        _ => format!("{} days ago", whole(DAY)),
    })
}

/// `iso` as a person reads it in a list: how long ago for a time of the
/// last week, else as [`timestamp`] says. Reactive: read it in a closure.
pub fn when(iso: &str) -> String {
    let now = use_context::<LocalClock>().and_then(|clock| clock.now.get());
    now.zip(instant_ms(iso))
        .and_then(|(now, at)| ago(now - at))
        .unwrap_or_else(|| timestamp(iso))
}

/// `iso` (an ISO-8601 UTC timestamp) as a person reads it: `2026-11-21
/// 07:40` in their time zone once the page is hydrated, `2026-11-21 06:40
/// UTC` before (and on the server). Reactive: read it in a closure.
pub fn timestamp(iso: &str) -> String {
    let local = use_context::<LocalClock>().is_some_and(|clock| clock.local.get());
    local
        .then(|| in_this_zone(iso))
        .flatten()
        .unwrap_or_else(|| display_timestamp(iso))
}

/// A `<time>` element for `iso`: how long ago (or the local date), the
/// exact local time and the UTC time in its tooltip, and the
/// machine-readable instant in `datetime`.
#[component]
pub fn LocalTime(#[prop(into)] at: String) -> impl IntoView {
    let utc = display_timestamp(&at);
    let text = {
        let at = at.clone();
        move || when(&at)
    };
    let title = {
        let at = at.clone();
        move || match timestamp(&at) {
            local if local == utc => utc.clone(),
            local => format!("{local} ({utc})"),
        }
    };
    view! { <time datetime=at title=title>{text}</time> }
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

/// The instant `iso` names, in milliseconds since the epoch.
#[cfg(not(feature = "ssr"))]
fn instant_ms(iso: &str) -> Option<f64> {
    let at = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(iso)).get_time();
    (!at.is_nan()).then_some(at)
}

#[cfg(feature = "ssr")]
fn instant_ms(_iso: &str) -> Option<f64> {
    None
}

#[cfg(not(feature = "ssr"))]
fn now_ms() -> Option<f64> {
    Some(js_sys::Date::now())
}

#[cfg(feature = "ssr")]
fn now_ms() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn a_time_of_the_last_week_says_how_long_ago() {
        const MINUTE: f64 = 60_000.0;
        assert_eq!(ago(5_000.0).as_deref(), Some("just now"));
        assert_eq!(ago(-20_000.0).as_deref(), Some("just now"));
        assert_eq!(ago(5.5 * MINUTE).as_deref(), Some("5 min ago"));
        assert_eq!(ago(3.2 * 60.0 * MINUTE).as_deref(), Some("3 h ago"));
        assert_eq!(ago(30.0 * 60.0 * MINUTE).as_deref(), Some("yesterday"));
        assert_eq!(
            ago(4.5 * 24.0 * 60.0 * MINUTE).as_deref(),
            Some("4 days ago")
        );
        assert_eq!(ago(8.0 * 24.0 * 60.0 * MINUTE), None, "a date");
        assert_eq!(ago(-5.0 * MINUTE), None, "to come");
    }
}
