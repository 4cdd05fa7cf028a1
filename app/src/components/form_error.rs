//! A form's last error, shown under it.

use leptos::prelude::*;

use crate::error::AppError;

/// The error of a form's last submission, if any.
#[component]
pub fn FormError(#[prop(into)] error: Signal<Option<String>>) -> impl IntoView {
    move || {
        error
            .get()
            .map(|error| view! { <p class="notice notice-error" role="alert">{error}</p> })
    }
}

/// The message of an action's last error, as a signal for [`FormError`].
/// An error the action did not dispatch here (`version` 0) was read from
/// the page's address (`__err`, a form the browser posted itself, sent
/// back by server_fn): anyone can write that address, so it is said in
/// fixed words for its kind, never its text.
pub fn action_error<T: Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
    version: RwSignal<usize>,
) -> Signal<Option<String>> {
    action_error_in(value, version, said_by_address)
}

/// [`action_error`] with a form's own fixed words for an error read from
/// the address (the log-in's "wrong username or password").
pub fn action_error_in<T: Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
    version: RwSignal<usize>,
    from_address: fn(&AppError) -> String,
) -> Signal<Option<String>> {
    Signal::derive(move || {
        let said = value.read();
        let error = said.as_ref()?.as_ref().err()?;
        Some(if version.get() > 0 {
            error.to_string()
        } else {
            from_address(error)
        })
    })
}

/// The fixed words for an error of `error`'s kind read from an address.
fn said_by_address(error: &AppError) -> String {
    match error {
        AppError::Unauthorized(_) => "log in to do this".into(),
        AppError::Forbidden(_) => "your role on this graph does not allow that".into(),
        AppError::NotFound { .. } => "that was not found".into(),
        AppError::TooManyRequests(_) => "too many requests: wait a minute, then try again".into(),
        _ => "that did not work: check the fields and try again".into(),
    }
}
