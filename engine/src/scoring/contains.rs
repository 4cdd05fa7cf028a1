//! `contains`: a text holds a piece of text, or a list holds an item.

use serde_json::Value;

use super::problem::{ScorerError, expression, problem};
use super::{Names, Score, as_text, quote};
use crate::expr::Expr;

/// The longest fixed text a `contains` scorer may look for.
const MAX_TEXT: usize = 10_000;

#[derive(Debug, Clone)]
pub(super) struct Contains {
    of: Expr,
    needle: Needle,
    ignore_case: bool,
}

#[derive(Debug, Clone)]
enum Needle {
    Text(String),
    Expected(Expr),
}

impl Contains {
    pub(super) fn new(
        of: Option<&str>,
        text: Option<String>,
        expected: Option<&str>,
        ignore_case: bool,
    ) -> Result<Contains, Vec<ScorerError>> {
        let mut problems = Vec::new();
        let of = expression("of", of, "output")
            .map_err(|e| problems.push(e))
            .ok();
        let needle = match (text, expected) {
            (Some(_), Some(_)) => {
                problems.push(problem("text", "give `text` or `expected`, not both"));
                None
            }
            (Some(text), None) if text.is_empty() => {
                problems.push(problem("text", "is empty"));
                None
            }
            (Some(text), None) if text.chars().count() > MAX_TEXT => {
                problems.push(problem(
                    "text",
                    format!("is longer than {MAX_TEXT} characters"),
                ));
                None
            }
            (Some(text), None) => Some(Needle::Text(text)),
            (None, expected) => expression("expected", expected, "reference")
                .map(Needle::Expected)
                .map_err(|e| problems.push(e))
                .ok(),
        };
        match (of, needle) {
            (Some(of), Some(needle)) if problems.is_empty() => Ok(Contains {
                of,
                needle,
                ignore_case,
            }),
            _ => Err(problems),
        }
    }

    pub(super) fn score(&self, names: &Names<'_>) -> Score {
        let haystack = match names.eval(&self.of) {
            Ok(value) => value,
            Err(problem) => return Score::fail(problem),
        };
        let needle = match &self.needle {
            Needle::Text(text) => Value::String(text.clone()),
            Needle::Expected(expr) => match names.eval(expr) {
                Ok(Value::Null) if names.example.reference.is_none() => {
                    return Score::fail("the example has no reference output to look for");
                }
                Ok(value) => value,
                Err(problem) => return Score::fail(problem),
            },
        };
        let found = match &haystack {
            Value::Array(items) => items.iter().any(|item| self.same(item, &needle)),
            other => {
                let needle = as_text(&needle);
                if self.ignore_case {
                    as_text(other)
                        .to_lowercase()
                        .contains(&needle.to_lowercase())
                } else {
                    as_text(other).contains(&*needle)
                }
            }
        };
        Score::of(
            found,
            format!("holds {}", quote(&needle)),
            format!("{} not found in {}", quote(&needle), quote(&haystack)),
        )
    }

    fn same(&self, item: &Value, needle: &Value) -> bool {
        match (item, needle) {
            (Value::String(a), Value::String(b)) if self.ignore_case => {
                a.to_lowercase() == b.to_lowercase()
            }
            (a, b) => a == b,
        }
    }
}
