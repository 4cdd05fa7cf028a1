//! Webhooks: secret URLs that start a run of a graph's published version
//! when something outside calls them (a form, GitHub, a monitoring alert).
//! The request's JSON body becomes the run's input through a mapping; a
//! signing secret (one of the maker's secrets, by name) makes the hook
//! refuse unsigned or replayed requests. A hook acts with its maker's
//! access to the graph, checked every time it is called.
//!
//! The URL holds a 256-bit token; only its SHA-256 is stored, so the URL
//! is shown when the hook is made or its URL regenerated, never again.

use crate::graphs::GraphId;
use heddle_engine::named_enum;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

named_enum! {
    /// What a call of the hook answers.
    #[derive(
        Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
    )]
    pub enum Respond {
        /// 202 with the run at once.
        #[default]
        Run = "run",
        /// Waits for the run (up to 30 s) and answers with its outcome.
        Result = "result",
    }
}

/// How a hook is set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// What it is for, e.g. `GitHub issues`: 1 to 64 characters.
    pub name: String,
    /// The run's input from the body: channel name to a JSON pointer into
    /// the body (`/issue/title`; `""` is the whole body). Without one, the
    /// body (an object) is the input.
    #[serde(default)]
    pub mapping: Option<BTreeMap<String, String>>,
    /// The name of one of the maker's secrets: calls must then be signed
    /// with it (HMAC-SHA256; see docs/deploy-agents.md).
    #[serde(default)]
    pub signing_secret: Option<String>,
    #[serde(default)]
    pub respond: Respond,
    #[serde(default = "enabled")]
    pub enabled: bool,
}

fn enabled() -> bool {
    true
}

/// A hook as listed: never its URL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Webhook {
    pub id: String,
    pub graph_id: GraphId,
    pub name: String,
    /// The URL token's first characters, to tell hooks apart.
    pub prefix: String,
    pub mapping: Option<BTreeMap<String, String>>,
    pub signing_secret: Option<String>,
    pub respond: Respond,
    pub enabled: bool,
    /// Who made it: its runs are theirs.
    pub created_by: Option<String>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

/// A hook with its URL: shown when made or regenerated, never again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WebhookUrl {
    pub webhook: Webhook,
    /// The path to call with `POST`, e.g. `/api/v1/hooks/9f2c…`.
    pub path: String,
}

/// The most channels one mapping may name.
pub const MAX_MAPPING: usize = 50;
