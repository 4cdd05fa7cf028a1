//! The HTML document around every page, and the router that picks the page.

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    SsrMode,
    components::{Route, Router, Routes},
    path,
};

use crate::components::{Header, SkipLink};
use crate::pages::{GraphPage, HomePage, LoginPage, NotFound, SettingsPage, SharePage, SignupPage};

/// The whole HTML document, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="dark light" />
                <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The application: header, routes and the fallback page.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    crate::session::provide_session_user();
    crate::components::provide_local_clock();

    // Browsers (and the end-to-end tests) can tell when the page has
    // become interactive: effects only ever run in the browser.
    Effect::new(move |_| {
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-hydrated", "true");
        }
    });

    view! {
        <Stylesheet id="heddle" href="/pkg/heddle.css" />
        <Title formatter=|title: String| {
            let title = if title.is_empty() {
                "Heddle".to_string()
            } else {
                format!("{title} · Heddle")
            };
            escape_title(title)
        } />
        <Router>
            <SkipLink />
            <Header />
            <main class="main" id="content" tabindex="-1">
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=HomePage />
                    // Async: the page waits for its graph, so a missing one is a real 404.
                    <Route path=path!("/graphs/:id") view=GraphPage ssr=SsrMode::Async />
                    <Route path=path!("/login") view=LoginPage />
                    <Route path=path!("/signup") view=SignupPage />
                    // Async: its lists (secrets, keys, graphs) arrive with the page.
                    <Route path=path!("/settings") view=SettingsPage ssr=SsrMode::Async />
                    // Async: an unusable link answers with its real status.
                    <Route path=path!("/share/:token") view=SharePage ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}

/// The title as it goes into the page. leptos_meta writes the server's
/// `<title>` without escaping it (and graph names are anyone's text), so on
/// the server it is escaped here; in the browser it becomes
/// `document.title`, which is text already.
fn escape_title(title: String) -> String {
    #[cfg(feature = "ssr")]
    {
        title
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }
    #[cfg(not(feature = "ssr"))]
    {
        title
    }
}
