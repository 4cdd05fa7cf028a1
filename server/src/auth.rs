//! The guards every request passes on its way in:
//!
//! - [`same_origin`]: a request that changes state (POST, PUT, DELETE, ...)
//!   from another site is refused. Browsers say where a request comes from
//!   (`Sec-Fetch-Site`, `Origin`); a request with neither is not from a
//!   browser (a script) and cannot carry a victim's cookie by accident.
//!   Together with `SameSite=Lax` cookies this is the CSRF protection.
//!   The chat widget's endpoints are the exception: they take no cookie
//!   and check the page's origin against the widget's own list.
//! - the session layer (tower-sessions over [`crate::sessions`]), then
//!   [`identify`]: reads the session (or, on the JSON API only, an API
//!   key) once and puts a [`Caller`] in the request's extensions for
//!   handlers and server functions.
//! - [`login_wall`], on pages only: an anonymous visitor is sent to the
//!   log-in page, and comes back after.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::ConnectInfo;
use heddle_store::accounts::{ClientAddress, session_user};
use heddle_store::api_keys;
use heddle_store::caller::Caller;
use heddle_wire::accounts::{User, encode_component};
use heddle_wire::error::AppError;
use serde_json::json;
use tower_sessions::cookie::SameSite;
use tower_sessions::cookie::time::Duration;
use tower_sessions::{Expiry, Session, SessionManagerLayer};

use crate::api::error::ApiError;
use crate::sessions::DbSessions;
use crate::state::AppState;

/// How long a session lasts without being used.
pub const SESSION_IDLE_DAYS: i64 = 14;

/// The session layer: an HttpOnly, SameSite=Lax cookie (Secure when the
/// server's public URL is https) naming a session stored in SQLite.
pub fn session_layer(state: &AppState) -> SessionManagerLayer<DbSessions> {
    SessionManagerLayer::new(DbSessions::new(state.db.clone()))
        .with_name("heddle_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.settings.secure_cookies())
        .with_expiry(Expiry::OnInactivity(Duration::days(SESSION_IDLE_DAYS)))
}

/// Puts the request's [`Caller`] and [`ClientAddress`] in its extensions.
pub async fn identify(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let client = client_address(&request, state.settings.trust_proxy);
    request.extensions_mut().insert(ClientAddress(client));
    let caller = match bearer(&request) {
        Some(secret) => match api_keys::grant(&state.db, secret).await {
            Ok(key) => Caller::Key(Arc::new(key)),
            // A key that does not work is refused, not ignored: the
            // caller meant to use it.
            Err(error) => return ApiError(error).into_response(),
        },
        None => match request.extensions().get::<Session>() {
            Some(session) => match session_user(&state.db, session).await {
                Ok(Some(user)) => Caller::User(user),
                Ok(None) => Caller::Nobody,
                Err(error) => return ApiError(error).into_response(),
            },
            None => Caller::Nobody,
        },
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Where API keys are read: the JSON API and the OpenAI-compatible
/// endpoints. Pages and the browser's server functions never take one.
const KEY_PATHS: &[&str] = &["/api/v1/", "/v1/"];

/// The secret of an `Authorization: Bearer` header, on the paths that take
/// API keys.
fn bearer(request: &Request) -> Option<&str> {
    let path = request.uri().path();
    if !KEY_PATHS.iter().any(|prefix| path.starts_with(prefix)) {
        return None;
    }
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, secret) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| secret.trim())
}

/// The address a request came from: the proxy's last `X-Forwarded-For`
/// entry when the proxy is trusted, else the connection's peer.
fn client_address(request: &Request, trust_proxy: bool) -> Option<IpAddr> {
    if trust_proxy
        && let Some(forwarded) = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|entry| entry.trim().parse::<IpAddr>().ok())
            .next_back()
    {
        return Some(forwarded);
    }
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip())
}

/// Where the chat widget's public endpoints are (see [`crate::widget`]).
const WIDGET_PATHS: &str = "/api/v1/widget/";

/// Refuses cross-site requests that change state.
pub async fn same_origin(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    // The chat widget is called from other sites by design: it reads no
    // cookie and checks the page's origin against its own allowed list.
    // So is a request with an API key: it carries no cookie a foreign page
    // could ride on (and its key alone says who calls).
    if safe || request.uri().path().starts_with(WIDGET_PATHS) || bearer(&request).is_some() {
        return next.run(request).await;
    }
    if let Err(reason) = check_origin(request.headers(), state.settings.public_origin()) {
        return cross_site(reason);
    }
    next.run(request).await
}

/// The reason a request is cross-site, or `Ok` when it is not (or is not
/// from a browser). Websocket upgrades are checked with this too.
pub fn check_origin(headers: &HeaderMap, public_origin: Option<&str>) -> Result<(), String> {
    if let Some(site) = headers.get("sec-fetch-site") {
        return match site.to_str() {
            Ok("same-origin" | "none") => Ok(()),
            Ok(other) => Err(format!("the request came from another site ({other})")),
            Err(_) => Err("the request's Sec-Fetch-Site is unreadable".into()),
        };
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("null");
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or_default();
    // Heddle itself serves plain http; https reaches it only through a
    // proxy, whose origin is the configured public one. Scheme, host and
    // port must all match.
    let same_origin = !host.is_empty() && origin == format!("http://{host}");
    if same_origin || public_origin == Some(origin) {
        Ok(())
    } else {
        Err(format!("the request came from {origin}"))
    }
}

fn cross_site(reason: String) -> Response {
    (
        StatusCode::FORBIDDEN,
        axum::Json(json!({"error": {
            "code": "cross_site",
            "message": format!("cross-site request refused: {reason}"),
        }})),
    )
        .into_response()
}

/// Pages anyone may open without an account.
const PUBLIC_PAGES: &[&str] = &["/login", "/signup"];

/// Sends anonymous visitors of a page to `/login?next=<the page>`.
pub async fn login_wall(request: Request, next: Next) -> Response {
    let anonymous = request
        .extensions()
        .get::<Caller>()
        .is_none_or(|caller| caller.session_user().is_none());
    let path = request.uri().path();
    // Server functions share this router; they answer 401 themselves.
    let page =
        matches!(*request.method(), Method::GET | Method::HEAD) && !path.starts_with("/api/");
    if !anonymous || !page || PUBLIC_PAGES.contains(&path) {
        return next.run(request).await;
    }
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    Redirect::to(&format!("/login?next={}", encode_component(target))).into_response()
}

/// The caller of an API handler. Pass `&who.0` to the access checks;
/// [`Who::user`] is for what only a logged-in user may do.
pub struct Who(pub Caller);

impl Who {
    /// The user logged in with a session: 401 for nobody, 403 for an API
    /// key (keys work only on the runs of the graphs they name).
    pub fn user(&self) -> Result<&User, ApiError> {
        match &self.0 {
            Caller::User(user) => Ok(user),
            Caller::Nobody => Err(ApiError(AppError::login_required())),
            Caller::Key(key) => Err(ApiError(AppError::Forbidden(format!(
                "API key `{}` cannot do this: keys run and read the graphs they name; \
                 everything else needs a logged-in session",
                key.name
            )))),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Who {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Who(parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or_default()))
    }
}

/// Whether two secrets are equal, in a time that does not depend on where
/// they differ (both are hashed to the same length first).
pub fn same_secret(offered: &str, expected: &str) -> bool {
    use sha2::{Digest, Sha256};
    let (a, b) = (
        Sha256::digest(offered.as_bytes()),
        Sha256::digest(expected.as_bytes()),
    );
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue};

    use super::check_origin;
    use heddle_wire::accounts::encode_component;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn same_origin_requests_pass_and_cross_site_ones_do_not() {
        assert!(check_origin(&headers(&[]), None).is_ok(), "not a browser");
        assert!(check_origin(&headers(&[("sec-fetch-site", "same-origin")]), None).is_ok());
        assert!(check_origin(&headers(&[("sec-fetch-site", "cross-site")]), None).is_err());
        assert!(check_origin(&headers(&[("sec-fetch-site", "same-site")]), None).is_err());
        let local = [
            ("host", "127.0.0.1:3000"),
            ("origin", "http://127.0.0.1:3000"),
        ];
        assert!(check_origin(&headers(&local), None).is_ok());
        let evil = [
            ("host", "127.0.0.1:3000"),
            ("origin", "https://evil.example"),
        ];
        assert!(check_origin(&headers(&evil), None).is_err());
        assert!(check_origin(&headers(&[("host", "a"), ("origin", "null")]), None).is_err());
        let proxied = [
            ("host", "10.0.0.2:3000"),
            ("origin", "https://heddle.example"),
        ];
        assert!(check_origin(&headers(&proxied), Some("https://heddle.example")).is_ok());
    }

    #[test]
    fn next_paths_are_encoded() {
        assert_eq!(
            encode_component("/graphs/a?run=r&step=2"),
            "/graphs/a%3Frun%3Dr%26step%3D2"
        );
    }
}
