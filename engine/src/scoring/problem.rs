//! What is wrong with a scorer's definition, at which field; shared by
//! every kind's checks.

use crate::expr::Expr;

/// A problem with a scorer, at a field of it (`pattern`, `schema.items`,
/// `tools[1].name`; empty for the scorer as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScorerError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ScorerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

pub(super) fn problem(path: impl Into<String>, message: impl Into<String>) -> ScorerError {
    ScorerError {
        path: path.into(),
        message: message.into(),
    }
}

/// Parses an optional expression field, defaulting to `default`.
pub(super) fn expression(
    field: &str,
    source: Option<&str>,
    default: &str,
) -> Result<Expr, ScorerError> {
    Expr::parse(source.unwrap_or(default)).map_err(|error| problem(field, error.to_string()))
}
