//! Lets a page say which HTTP status its server-rendered response carries
//! (a 404 for a graph that does not exist). In the browser there is no
//! response to set, so the call does nothing there.

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
