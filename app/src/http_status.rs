//! Lets a page say which HTTP status its server-rendered response carries
//! (a 404 for a graph that does not exist). In the browser there is no
//! response to set, so the call does nothing there.

use crate::error::AppError;

/// Sets the status of the response being rendered, when there is one.
pub fn set_http_status(code: u16) {
    #[cfg(feature = "ssr")]
    {
        use leptos::prelude::use_context;
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

/// Passes `result` through, setting the response status from its error:
/// server functions answer a missing graph with 404, not a generic 500.
pub fn with_error_status<T>(result: Result<T, AppError>) -> Result<T, AppError> {
    if let Err(error) = &result {
        set_http_status(error.status_code());
    }
    result
}
