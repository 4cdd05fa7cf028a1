//! `regex`: the scored text matches a regular expression. Rust's `regex`
//! has no look-around or back-references, so a match takes time linear in
//! the text; the pattern's length and its compiled size are bounded.

use super::problem::{ScorerError, expression, problem};
use super::{Names, Score, as_text, quote};
use crate::expr::Expr;

/// The longest pattern a scorer may have.
const MAX_PATTERN: usize = 1_000;
/// The most memory a compiled pattern may take.
const MAX_COMPILED_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub(super) struct Pattern {
    of: Expr,
    pattern: regex::Regex,
}

impl Pattern {
    pub(super) fn new(of: Option<&str>, pattern: &str) -> Result<Pattern, Vec<ScorerError>> {
        let mut problems = Vec::new();
        let of = expression("of", of, "output")
            .map_err(|e| problems.push(e))
            .ok();
        let compiled = if pattern.is_empty() {
            problems.push(problem("pattern", "is empty"));
            None
        } else if pattern.chars().count() > MAX_PATTERN {
            problems.push(problem(
                "pattern",
                format!("is longer than {MAX_PATTERN} characters"),
            ));
            None
        } else {
            regex::RegexBuilder::new(pattern)
                .size_limit(MAX_COMPILED_BYTES)
                .dfa_size_limit(MAX_COMPILED_BYTES)
                .build()
                .map_err(|error| problems.push(problem("pattern", error.to_string())))
                .ok()
        };
        match (of, compiled) {
            (Some(of), Some(pattern)) => Ok(Pattern { of, pattern }),
            _ => Err(problems),
        }
    }

    pub(super) fn score(&self, names: &Names<'_>) -> Score {
        let value = match names.eval(&self.of) {
            Ok(value) => value,
            Err(problem) => return Score::fail(problem),
        };
        Score::of(
            self.pattern.is_match(&as_text(&value)),
            format!("matches /{}/", self.pattern.as_str()),
            format!(
                "{} does not match /{}/",
                quote(&value),
                self.pattern.as_str()
            ),
        )
    }
}
