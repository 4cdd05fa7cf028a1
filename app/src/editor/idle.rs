//! Work the editor leaves for when the page has time: each piece runs in an
//! idle moment with room enough for it, so it never makes a frame late (a
//! piece started with too little of the moment left runs past the next
//! frame's start, and the frame waits for it).

/// Runs `work` in the browser's next idle moment that has at least
/// `needs_ms` left before the next frame is due, or once `patience_ms` have
/// passed, whatever the moment. (On the server, never.)
#[cfg_attr(not(feature = "hydrate"), allow(unused_variables))]
pub fn when_idle(needs_ms: f64, patience_ms: u32, work: impl FnOnce() + 'static) {
    #[cfg(feature = "hydrate")]
    ask(
        needs_ms,
        js_sys::Date::now() + f64::from(patience_ms),
        Box::new(work),
    );
}

#[cfg(feature = "hydrate")]
fn ask(needs_ms: f64, give_up_at: f64, work: Box<dyn FnOnce()>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    use web_sys::{IdleDeadline, IdleRequestOptions};

    let window = leptos::prelude::window();
    if !js_sys::Reflect::has(&window, &"requestIdleCallback".into()).unwrap_or(false) {
        // A browser without idle callbacks (Safari): soon, then.
        leptos::prelude::set_timeout(work, std::time::Duration::from_millis(50));
        return;
    }
    let left = (give_up_at - js_sys::Date::now()).max(0.0);
    let callback = Closure::once_into_js(move |deadline: IdleDeadline| {
        if deadline.time_remaining() >= needs_ms
            || deadline.did_timeout()
            || js_sys::Date::now() >= give_up_at
        {
            work();
        } else {
            ask(needs_ms, give_up_at, work);
        }
    });
    let options = IdleRequestOptions::new();
    options.set_timeout(left as u32);
    let _ = window.request_idle_callback_with_options(callback.unchecked_ref(), &options);
}
