//! Headers every response carries, so a browser treats Heddle's content
//! as no more than it is: no MIME sniffing, no framing by other sites, no
//! full URLs (share-link tokens) sent to other sites as referrers, and a
//! Content-Security-Policy: pages may run Heddle's own scripts and the
//! inline ones carrying this response's nonce; everything else (JSON,
//! files) allows nothing to run.
//!
//! The nonce is made here, before the request reaches the router, and
//! handed to the page's renderer as a request extension ([`PageNonce`]);
//! the policy is set here too, from the response's content type. (It used
//! to be set by the shell while rendering, through leptos_axum's response
//! options; under load a page's headers could be sent before the shell had
//! set them, and the page went out with the nothing-runs policy and never
//! hydrated.)

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The policy of responses that are not pages.
const NOTHING_RUNS: &str = "default-src 'none'; frame-ancestors 'none'";

/// The nonce of this request's inline scripts, should its response be a
/// page. The page renderer provides it to the app (see `routes`), whose
/// hydration scripts carry it.
#[derive(Clone, Debug)]
pub struct PageNonce(pub Arc<str>);

/// Gives `request` its nonce and its response the security headers.
pub async fn add(mut request: Request, next: Next) -> Response {
    let nonce = leptos::nonce::Nonce::new().to_string();
    request
        .extensions_mut()
        .insert(PageNonce(Arc::from(nonce.as_str())));
    let mut response = next.run(request).await;
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    let policy = if is_page {
        HeaderValue::from_str(&page_policy(&nonce))
            .unwrap_or_else(|_| HeaderValue::from_static(NOTHING_RUNS))
    } else {
        HeaderValue::from_static(NOTHING_RUNS)
    };
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    response
}

/// A page's policy: scripts only from Heddle itself or inline with this
/// response's nonce (the hydration scripts), wasm allowed to compile,
/// nothing framing the page. Styles allow inline `style` attributes, which
/// the canvas sets on every node.
fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Provides this request's [`PageNonce`] to the page being rendered, in
/// place of the one leptos_axum makes up (which no header would name).
/// Called from the renderer's context, where leptos_axum has provided the
/// request's parts.
pub fn provide_page_nonce() {
    use leptos::prelude::{provide_context, use_context};
    let nonce = use_context::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<PageNonce>().cloned());
    if let Some(PageNonce(nonce)) = nonce {
        provide_context(leptos::nonce::Nonce::from_value(nonce));
    }
}
