//! `json_schema`: the scored value fits a schema of the subset channels
//! take (`crate::schema`), so one checker serves both.

use serde_json::Value;

use super::problem::{ScorerError, expression, problem};
use super::{Names, Score};
use crate::expr::Expr;
use crate::schema::ValueSchema;

#[derive(Debug, Clone)]
pub(super) struct Fits {
    of: Expr,
    schema: ValueSchema,
}

impl Fits {
    pub(super) fn new(of: Option<&str>, schema: &Value) -> Result<Fits, Vec<ScorerError>> {
        let mut problems = Vec::new();
        let of = expression("of", of, "output")
            .map_err(|e| problems.push(e))
            .ok();
        let schema = ValueSchema::parse(schema)
            .map_err(|errors| {
                problems.extend(errors.into_iter().map(|error| {
                    let path = if error.path.is_empty() {
                        "schema".to_string()
                    } else {
                        format!("schema.{}", error.path)
                    };
                    problem(path, error.message)
                }))
            })
            .ok();
        match (of, schema) {
            (Some(of), Some(schema)) => Ok(Fits { of, schema }),
            _ => Err(problems),
        }
    }

    pub(super) fn score(&self, names: &Names<'_>) -> Score {
        let value = match names.eval(&self.of) {
            Ok(value) => value,
            Err(problem) => return Score::fail(problem),
        };
        match self.schema.check(&value) {
            Ok(()) => Score::pass("fits the schema"),
            Err(mismatch) => Score::fail(format!("at {}: {}", mismatch.path, mismatch.message)),
        }
    }
}
