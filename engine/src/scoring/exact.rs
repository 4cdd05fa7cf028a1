//! `exact`: the scored value equals the expected one.

use serde_json::Value;

use super::problem::{ScorerError, expression};
use super::{Names, Score, quote};
use crate::expr::Expr;

#[derive(Debug, Clone)]
pub(super) struct Exact {
    of: Expr,
    expected: Expr,
    ignore_case: bool,
    trim: bool,
}

impl Exact {
    pub(super) fn new(
        of: Option<&str>,
        expected: Option<&str>,
        ignore_case: bool,
        trim: bool,
    ) -> Result<Exact, Vec<ScorerError>> {
        let of = expression("of", of, "output");
        let expected = expression("expected", expected, "reference");
        match (of, expected) {
            (Ok(of), Ok(expected)) => Ok(Exact {
                of,
                expected,
                ignore_case,
                trim,
            }),
            (of, expected) => Err([of.err(), expected.err()].into_iter().flatten().collect()),
        }
    }

    pub(super) fn score(&self, names: &Names<'_>) -> Score {
        let got = match names.eval(&self.of) {
            Ok(value) => value,
            Err(problem) => return Score::fail(problem),
        };
        let want = match names.eval(&self.expected) {
            Ok(value) => value,
            Err(problem) => return Score::fail(problem),
        };
        if want.is_null() && names.example.reference.is_none() {
            return Score::fail("the example has no reference output to compare with");
        }
        Score::of(
            self.same(&got, &want),
            format!("equal to {}", quote(&want)),
            format!("expected {}, got {}", quote(&want), quote(&got)),
        )
    }

    /// JSON equality, numbers by value (`1` equals `1.0`), texts after the
    /// chosen normalisation, lists and objects part by part.
    fn same(&self, a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::String(a), Value::String(b)) => self.text(a) == self.text(b),
            (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| self.same(a, b))
            }
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, a)| b.get(key).is_some_and(|b| self.same(a, b)))
            }
            (a, b) => a == b,
        }
    }

    fn text(&self, text: &str) -> String {
        let text = if self.trim { text.trim() } else { text };
        if self.ignore_case {
            text.to_lowercase()
        } else {
            text.to_string()
        }
    }
}
