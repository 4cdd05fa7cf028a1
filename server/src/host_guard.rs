//! Refuses requests addressed to a host name the server does not answer
//! to. A page on an attacker's domain can make that name resolve to a
//! Heddle server inside the visitor's network (DNS rebinding): the browser
//! then sends the page's requests, with the attacker's name as `Host` and
//! as `Origin`, and they look same-origin. A rebinding always names the
//! attacker's domain, so the server answers only to addresses written as
//! IP literals, `localhost`, the host of `--public-url`, and the names an
//! operator lists (`--allowed-hosts`). Anything else gets 421 Misdirected
//! Request, before any handler, page or websocket.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// Lets through requests for a host this server answers to.
pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|value| value.to_str().unwrap_or("\u{fffd}").to_string())
        .or_else(|| request.uri().host().map(str::to_string));
    match host {
        // No name at all (HTTP/1.0, a raw client): nothing to rebind.
        None => next.run(request).await,
        Some(host) if answers_to(&host, state.settings.allowed_hosts()) => next.run(request).await,
        Some(host) => misdirected(&host),
    }
}

/// Whether `host` (a `Host` header, port included) names this server: an
/// IP address, `localhost` (or a name under it), or one of `allowed`
/// (lowercase names, no port).
pub fn answers_to(host: &str, allowed: &[String]) -> bool {
    let name = name_of(host).to_ascii_lowercase();
    let name = name.trim_end_matches('.');
    if name.is_empty() {
        return false;
    }
    name.parse::<std::net::IpAddr>().is_ok()
        || name == "localhost"
        || name.ends_with(".localhost")
        || allowed.iter().any(|allowed| allowed == name)
}

/// The host name of a `Host` header: without its port, and an IPv6
/// literal without its brackets.
fn name_of(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        // An unclosed bracket names nothing.
        return rest.split_once(']').map_or("", |(name, _)| name);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

fn misdirected(host: &str) -> Response {
    let shown: String = host.chars().take(100).collect();
    (
        StatusCode::MISDIRECTED_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!(
            "this server does not answer to the host `{shown}`: reach it by its address, by \
             localhost, or by a name its operator allowed (--public-url, --allowed-hosts)"
        ),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::answers_to;

    #[test]
    fn addresses_localhost_and_allowed_names_pass() {
        let allowed = vec!["heddle.example.com".to_string()];
        for host in [
            "127.0.0.1:3000",
            "127.0.0.1",
            "[::1]:3000",
            "[::1]",
            "10.0.0.12:3000",
            "localhost:3000",
            "LOCALHOST",
            "app.localhost:8080",
            "heddle.example.com",
            "Heddle.Example.Com:443",
            "heddle.example.com.",
        ] {
            assert!(answers_to(host, &allowed), "{host}");
        }
    }

    #[test]
    fn other_names_are_refused() {
        let allowed = vec!["heddle.example.com".to_string()];
        for host in [
            "attacker.example",
            "attacker.example:3000",
            "heddle.example.com.attacker.example",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
            "",
            ":3000",
            "[::1",
        ] {
            assert!(!answers_to(host, &allowed), "{host}");
        }
        assert!(!answers_to("heddle.example.com", &[]));
    }
}
