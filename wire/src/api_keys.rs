//! API keys: how scripts and other services call a user's graphs without a
//! browser session. A key names the graphs it works on and a scope; it
//! acts with its owner's access to those graphs, never more, and only on
//! the JSON API (`Authorization: Bearer`), never for pages. Keys start
//! runs of the *published* version only (docs/deploy-agents.md).
//!
//! The secret is shown once, when the key is made; the server keeps only
//! its SHA-256. Keys can expire and be revoked, and say when they were
//! last used.

use crate::graphs::GraphId;
use heddle_engine::named_enum;
use serde::{Deserialize, Serialize};

named_enum! {
    /// What a key may do on its graphs.
    #[derive(
        Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
    )]
    pub enum KeyScope {
        /// Start runs of the published version; read, resume and cancel the
        /// runs this key started.
        #[default]
        Run = "run",
        /// Also read the graphs and all their runs and threads.
        Read = "read",
    }
}

impl KeyScope {
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
    /// An `input` for the key's first graph that runs as it is: each of its
    /// start inputs with a value of its type, from the version the key runs
    /// (the published one; the newest while none is).
    #[serde(default)]
    pub example_input: serde_json::Map<String, serde_json::Value>,
    /// Whether that graph has a published version. A key runs only the
    /// published version, so until there is one its calls are refused.
    #[serde(default)]
    pub published: bool,
}

/// The most graphs one key may name.
pub const MAX_KEY_GRAPHS: usize = 100;
