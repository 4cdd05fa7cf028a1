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
pub fn action_error<T: Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
) -> Signal<Option<String>> {
    Signal::derive(move || {
        value
            .read()
            .as_ref()
            .and_then(|result| result.as_ref().err())
            .map(ToString::to_string)
    })
}
