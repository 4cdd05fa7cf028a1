//! `expression`: a score computed in the engine's expression language.

use serde_json::Value;

use super::problem::{ScorerError, expression};
use super::{Names, Score, quote};
use crate::expr::Expr;

#[derive(Debug, Clone)]
pub(super) struct Expression {
    expr: Expr,
}

impl Expression {
    pub(super) fn new(source: &str) -> Result<Expression, Vec<ScorerError>> {
        expression("expr", Some(source), "")
            .map(|expr| Expression { expr })
            .map_err(|error| vec![error])
    }

    pub(super) fn score(&self, names: &Names<'_>) -> Score {
        let source = self.expr.source();
        match names.eval(&self.expr) {
            Ok(Value::Bool(true)) => Score::pass(format!("`{source}` holds")),
            Ok(Value::Bool(false)) => Score::fail(format!("`{source}` does not hold")),
            Ok(Value::Number(number)) => match number.as_f64() {
                Some(value) if (0.0..=1.0).contains(&value) => Score {
                    value,
                    reason: format!("`{source}` is {value}"),
                },
                _ => Score::fail(format!(
                    "`{source}` gave {number}; a score is from 0 to 1, or true or false"
                )),
            },
            Ok(other) => Score::fail(format!(
                "`{source}` gave {}; a score is a number from 0 to 1, or true or false",
                quote(&other)
            )),
            Err(problem) => Score::fail(problem),
        }
    }
}
