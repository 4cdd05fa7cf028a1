//! Headers every response carries, so a browser treats Heddle's content
//! as no more than it is: no MIME sniffing, no framing by other sites, no
//! full URLs (share-link tokens) sent to other sites as referrers. Pages
//! set their own Content-Security-Policy with a nonce (the app's shell);
//! everything else (JSON, files) gets one that allows nothing to run.

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The policy of responses that are not pages.
const NOTHING_RUNS: &str = "default-src 'none'; frame-ancestors 'none'";

/// Adds the security headers to `response`.
pub async fn add(mut response: Response) -> Response {
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
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(NOTHING_RUNS),
        );
    }
    response
}
