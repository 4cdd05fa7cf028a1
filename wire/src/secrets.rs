//! Secrets: model API keys and tool credentials, stored per user on the
//! server and referred to from graphs by name (`"credential": "openai"`).
//! A value is written once and never sent back: the browser only ever sees
//! names and dates, an export only ever holds the name.

use crate::error::AppError;
use serde::{Deserialize, Serialize};

/// A stored secret, without its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretSummary {
    pub name: String,
    pub created_at: String,
    pub updated_at: String,
}

/// The largest secret value accepted.
pub const MAX_SECRET_BYTES: usize = 16 * 1024;

/// Checks a secret's name: 1 to 64 letters, digits, `-`, `_` or `.`.
pub fn check_name(name: &str) -> Result<(), AppError> {
    let valid = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(AppError::InvalidInput(format!(
            "a secret's name is 1 to 64 letters, digits, `-`, `_` or `.`, not `{name}`"
        )))
    }
}
