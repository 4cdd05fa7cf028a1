//! Lets a page say which HTTP status its server-rendered response carries
//! (a 404 for a graph that does not exist). In the browser there is no
//! response to set, so the call does nothing there.
//!
//! A form the browser posts itself (pressed before the page's script has
//! started, or with none) keeps its redirect: server_fn sends it back to
//! the form's page with the error in the address, where the form shows
//! it. An error status there replaced the redirect, and the browser
//! showed the error's raw JSON (`{"Unauthorized":"wrong username or
//! password"}`) on `/api/log_in`.

use crate::error::AppError;

/// Sets the status of the response being rendered, when there is one.
pub fn set_http_status(code: u16) {
    #[cfg(feature = "ssr")]
    {
        use leptos::prelude::use_context;
        if is_plain_form_post() {
            return;
        }
        if let (Some(options), Ok(status)) = (
            use_context::<leptos_axum::ResponseOptions>(),
            http::StatusCode::from_u16(code),
        ) {
            options.set_status(status);
        }
    }
    #[cfg(not(feature = "ssr"))]
    let _ = code;
}

/// A form posted by the browser, not by the app: a POST that accepts a
/// page in answer (the app's own calls accept their encoding's type).
#[cfg(feature = "ssr")]
fn is_plain_form_post() -> bool {
    leptos::prelude::use_context::<http::request::Parts>().is_some_and(|parts| {
        parts.method == http::Method::POST
            && parts
                .headers
                .get(http::header::ACCEPT)
                .and_then(|accept| accept.to_str().ok())
                .is_some_and(|accept| accept.contains("text/html"))
    })
}

/// Passes `result` through, setting the response status from its error:
/// server functions answer a missing graph with 404, not a generic 500.
pub fn with_error_status<T>(result: Result<T, AppError>) -> Result<T, AppError> {
    if let Err(error) = &result {
        set_http_status(error.status_code());
    }
    result
}
