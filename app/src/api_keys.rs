//! API keys: how scripts and other services call a user's graphs without a
//! browser session. A key names the graphs it works on and a scope; it
//! acts with its owner's access to those graphs, never more, and only on
//! the JSON API (`Authorization: Bearer`), never for pages. Keys start
//! runs of the *published* version only (docs/deploy-agents.md).
//!
//! The secret is shown once, when the key is made; the server keeps only
//! its SHA-256. Keys can expire and be revoked, and say when they were
//! last used.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
use crate::graphs::GraphId;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// What a key may do on its graphs.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KeyScope {
    /// Start runs of the published version; read, resume and cancel the
    /// runs this key started.
    #[default]
    Run,
    /// Also read the graphs and all their runs and threads.
    Read,
}

impl KeyScope {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyScope::Run => "run",
            KeyScope::Read => "read",
        }
    }

    pub fn parse(text: &str) -> Option<KeyScope> {
        match text {
            "run" => Some(KeyScope::Run),
            "read" => Some(KeyScope::Read),
            _ => None,
        }
    }

    /// The scope in words, for the settings page.
    pub fn describe(self) -> &'static str {
        match self {
            KeyScope::Run => "runs the published version; reads the runs it started",
            KeyScope::Read => "also reads the graphs and all their runs",
        }
    }
}

/// A graph a key works on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeyGraph {
    pub id: GraphId,
    pub name: String,
}

/// A key as listed: never its secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApiKeySummary {
    pub id: String,
    pub name: String,
    /// The secret's first characters, to tell keys apart.
    pub prefix: String,
    pub scope: KeyScope,
    pub graphs: Vec<KeyGraph>,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
    /// Whether it works now: neither revoked nor expired.
    pub active: bool,
}

/// A request to make a key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    /// What the key is for, e.g. `support site`: 1 to 64 characters.
    pub name: String,
    #[serde(default)]
    pub scope: KeyScope,
    /// The graphs it works on (1 to 100); the caller must be able to run
    /// each (editor or owner).
    pub graphs: Vec<GraphId>,
    /// Days until it stops working (1 to 3650); never when absent.
    #[serde(default)]
    pub expires_in_days: Option<u32>,
}

/// A key just made, with its secret: the only time it is shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CreatedApiKey {
    pub key: ApiKeySummary,
    /// `Authorization: Bearer <secret>`.
    pub secret: String,
}

/// The most graphs one key may name.
pub const MAX_KEY_GRAPHS: usize = 100;

/// The logged-in user's keys, newest first.
#[server(endpoint = "list_api_keys")]
pub async fn list_api_keys() -> Result<Vec<ApiKeySummary>, AppError> {
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(ssr::list(&crate::db::from_context()?, &user).await)
}

/// Makes a key; the answer holds its secret, shown this once.
#[server(endpoint = "create_api_key")]
pub async fn create_api_key(request: NewApiKey) -> Result<CreatedApiKey, AppError> {
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(ssr::create(&crate::db::from_context()?, &user, request).await)
}

/// Revokes a key: calls with it are refused from now on.
#[server(endpoint = "revoke_api_key")]
pub async fn revoke_api_key(id: String) -> Result<(), AppError> {
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(ssr::revoke(&crate::db::from_context()?, &user, &id).await)
}

#[cfg(feature = "ssr")]
pub mod ssr;
