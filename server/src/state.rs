//! What every request handler can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use heddle_store::accounts::{Auth, SignupPolicy};
use heddle_store::db::Db;
use leptos::config::LeptosOptions;
use tokio::sync::watch;

use crate::runs::Runs;

/// The server's shared state.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    pub runs: Runs,
    /// Becomes `true` when the server shuts down: websockets close.
    pub shutdown: watch::Receiver<bool>,
    /// Sign-up policy, the log-in limiter, access-change announcements.
    pub auth: Auth,
    pub settings: Arc<Settings>,
}

/// How the server treats accounts and the web.
#[derive(Clone, Debug)]
pub struct Settings {
    pub signup: SignupPolicy,
    /// The scheme, host and port browsers use to reach the server, when it
    /// is behind a proxy (`https://heddle.example.com`): cookies are
    /// Secure when it is https, and requests from it are same-origin.
    public_origin: Option<String>,
    /// How many runs one user may have queued or running at once.
    pub max_runs_per_user: usize,
    /// How many runs one account may have queued or running at once,
    /// however started.
    pub max_runs_per_owner: usize,
    /// Whether a request's client address comes from the proxy's
    /// `X-Forwarded-For` (else it is the connection's peer).
    pub trust_proxy: bool,
    /// The bearer token `/metrics` asks for; `None`: no `/metrics`.
    pub metrics_token: Option<String>,
    /// Host names the server answers to besides IP addresses and
    /// `localhost` (lowercase, no port): `--allowed-hosts` and the public
    /// URL's host (see [`crate::host_guard`]).
    allowed_hosts: Vec<String>,
    /// The site this binary carries, served instead of the site folder
    /// (release builds; see [`crate::embedded_site`]).
    pub embedded_site: Option<crate::embedded_site::Site>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            signup: SignupPolicy::Open,
            public_origin: None,
            max_runs_per_user: 4,
            max_runs_per_owner: crate::runs::DEFAULT_MAX_PER_OWNER,
            trust_proxy: false,
            metrics_token: None,
            allowed_hosts: Vec::new(),
            embedded_site: None,
        }
    }
}

impl Settings {
    /// Settings with a public URL (only its origin is kept).
    pub fn with_public_url(mut self, url: Option<&str>) -> Self {
        self.public_origin = url.map(|url| {
            let url = url.trim().trim_end_matches('/');
            let scheme_end = url.find("://").map_or(0, |i| i + 3);
            match url[scheme_end..].find('/') {
                Some(path) => url[..scheme_end + path].to_string(),
                None => url.to_string(),
            }
        });
        let host = self
            .public_origin
            .as_deref()
            .map(|origin| origin.rsplit("://").next().unwrap_or(origin).to_string());
        self.with_allowed_hosts(host.as_deref())
    }

    /// Settings that also answer to `hosts` (names, ports ignored).
    pub fn with_allowed_hosts<'a>(mut self, hosts: impl IntoIterator<Item = &'a str>) -> Self {
        for host in hosts {
            let name = host.trim().trim_end_matches('.').to_ascii_lowercase();
            let name = match name.rsplit_once(':') {
                Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
                _ => name,
            };
            if !name.is_empty() && !self.allowed_hosts.contains(&name) {
                self.allowed_hosts.push(name);
            }
        }
        self
    }

    /// The names the server answers to besides addresses and `localhost`.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    pub fn public_origin(&self) -> Option<&str> {
        self.public_origin.as_deref()
    }

    /// Cookies carry `Secure` when browsers reach the server over https.
    pub fn secure_cookies(&self) -> bool {
        self.public_origin
            .as_deref()
            .is_some_and(|origin| origin.starts_with("https://"))
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

impl AppState {
    /// The state for a site built into `site_root` (see `cargo xtask build`).
    pub fn new(
        db: Db,
        runs: Runs,
        shutdown: watch::Receiver<bool>,
        site_root: &std::path::Path,
        site_addr: std::net::SocketAddr,
    ) -> Self {
        let leptos_options = LeptosOptions::builder()
            .output_name("heddle")
            .site_root(site_root.to_string_lossy().into_owned())
            .site_pkg_dir("pkg")
            .site_addr(site_addr)
            .build();
        AppState {
            leptos_options,
            auth: Auth::new(SignupPolicy::Open, &db),
            db,
            runs,
            shutdown,
            settings: Arc::new(Settings::default()),
        }
    }

    /// The same state with other settings.
    pub fn with_settings(mut self, settings: Settings) -> Self {
        self.auth = Auth::new(settings.signup, &self.db);
        self.runs.set_max_per_user(settings.max_runs_per_user);
        self.runs.set_max_per_owner(settings.max_runs_per_owner);
        self.settings = Arc::new(settings);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Settings;

    #[test]
    fn the_public_url_gives_the_origin_and_cookie_security() {
        let settings = Settings::default().with_public_url(Some("https://heddle.example/app/"));
        assert_eq!(settings.public_origin(), Some("https://heddle.example"));
        assert!(settings.secure_cookies());
        let plain = Settings::default().with_public_url(Some("http://10.0.0.2:3000"));
        assert_eq!(plain.public_origin(), Some("http://10.0.0.2:3000"));
        assert!(!plain.secure_cookies());
        assert!(!Settings::default().secure_cookies());
    }
}
