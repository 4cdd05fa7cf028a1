//! What every request handler can reach.

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::SqlitePool;
use tokio::sync::watch;

use crate::runs::Runs;

/// The server's shared state.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub pool: SqlitePool,
    pub runs: Runs,
    /// Becomes `true` when the server shuts down: websockets close.
    pub shutdown: watch::Receiver<bool>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

impl AppState {
    /// The state for a site built into `site_root` (see `cargo xtask build`).
    pub fn new(
        pool: SqlitePool,
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
            pool,
            runs,
            shutdown,
        }
    }
}
