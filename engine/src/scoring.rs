//! Scorers: how well one run answered one example, as a number from 0 to 1
//! with a reason a person can read.
//!
//! An evaluation runs a graph over a dataset of examples (an input, and
//! maybe a reference output) and scores each run with the scorers it
//! names. A scorer is data ([`ScorerSpec`], JSON tagged by `kind`),
//! checked once by [`ScorerSpec::compile`] (every problem located at its
//! field) into a [`Scorer`], which scores an [`Example`] against what a run
//! did ([`Observed`]: its output, the nodes that ran, the tools its models
//! called, its tokens, cost and time).
//!
//! The kinds, one file each:
//! - `exact`: a value equals the expected one (`exact.rs`);
//! - `contains`: a text holds a piece of text, or a list an item (`contains.rs`);
//! - `regex`: a text matches a pattern (`pattern.rs`);
//! - `json_schema`: a value fits a schema of the channel subset (`fits.rs`);
//! - `expression`: an expression in the engine's language (`expression.rs`);
//! - `trajectory`: which nodes ran and which tools were called, with which
//!   arguments, in order or as a set (`trajectory.rs`);
//! - `threshold`: tokens, cost or latency under a ceiling (`threshold.rs`);
//! - `script`: a sandboxed Rhai script over the same names (`script.rs`;
//!   on the registry's script pool with [`Scorer::score_in`]);
//! - `judge`: a model grades the answer against a rubric, or, on the
//!   offline model, a heuristic over the rubric's terms that says so
//!   (`judge.rs`; scored with [`Scorer::score_with`]).
//!
//! What a scorer looks at is an expression too (`of`, default `output`),
//! over `output` (the run's final state, its channels), `reference` (the example's
//! reference output, `null` without one) and `input`: so
//! `last(output.messages).content` scores a chat graph's answer. Scoring
//! never fails: a value of the wrong type, or an expression that cannot be
//! evaluated, scores 0 with the reason.
//!
//! Every scorer's work is bounded by what it reads: expressions are
//! limited in size and depth by their parser, patterns in length and in
//! the size of the automaton they compile to (matching is linear in the
//! text), schemas by the subset's limits, trajectories by the run's own
//! bounded log.

mod contains;
mod exact;
mod expression;
mod fits;
mod judge;
mod observed;
mod pattern;
mod problem;
mod script;
mod spec;
mod threshold;
mod trajectory;

#[cfg(test)]
mod tests;

use serde_json::Value;

pub use judge::Judged;
pub use observed::{Observed, ToolCallMade};
pub use problem::ScorerError;
pub use spec::ScorerSpec;
pub use threshold::Metric;
pub use trajectory::{Order, ToolExpected};

/// How well a run did by one scorer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Score {
    /// From 0 (not at all) to 1 (fully).
    pub value: f64,
    /// Why, in a sentence.
    pub reason: String,
}

impl Score {
    fn pass(reason: impl Into<String>) -> Score {
        Score {
            value: 1.0,
            reason: reason.into(),
        }
    }

    fn fail(reason: impl Into<String>) -> Score {
        Score {
            value: 0.0,
            reason: reason.into(),
        }
    }

    fn of(passed: bool, yes: impl Into<String>, no: impl Into<String>) -> Score {
        if passed {
            Score::pass(yes)
        } else {
            Score::fail(no)
        }
    }

    /// A share of `total` matched, 1 when nothing was asked for.
    fn share(matched: usize, total: usize, reason: impl Into<String>) -> Score {
        let value = if total == 0 {
            1.0
        } else {
            matched as f64 / total as f64
        };
        Score {
            value,
            reason: reason.into(),
        }
    }
}

/// One example of a dataset, as a scorer sees it.
#[derive(Debug, Clone, Copy)]
pub struct Example<'a> {
    /// What the run was given.
    pub input: &'a Value,
    /// The output it should give, when the example has one.
    pub reference: Option<&'a Value>,
}

/// A checked scorer, ready to score runs.
#[derive(Debug, Clone)]
pub struct Scorer {
    name: String,
    kind: spec::Kind,
}

impl Scorer {
    /// Its name: the one given, or its kind's.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model a `judge` asks for (`Some(None)`: the default one); `None`
    /// for the other kinds, which need none.
    pub fn judge_model(&self) -> Option<Option<&str>> {
        match &self.kind {
            spec::Kind::Judge(judge) => Some(judge.model()),
            _ => None,
        }
    }

    /// Scores what a run did against an example with `model` for a
    /// `judge` (the others score as [`Scorer::score`] does).
    pub async fn score_with(
        &self,
        example: &Example<'_>,
        observed: &Observed,
        model: &dyn crate::model::ChatModel,
    ) -> Judged {
        match &self.kind {
            spec::Kind::Judge(judge) => judge.score(&Names { example, observed }, model).await,
            _ => Judged {
                score: self.score(example, observed),
                usage: crate::usage::UsageTotals::default(),
            },
        }
    }

    /// Scores what a run did against an example, a `judge` with the model
    /// it names in `registry` (or 0, naming the models there are).
    pub async fn score_in(
        &self,
        example: &Example<'_>,
        observed: &Observed,
        registry: &crate::Registry,
    ) -> Judged {
        #[cfg(feature = "runtime")]
        if let spec::Kind::Script(script) = &self.kind {
            let names = Names { example, observed };
            let pool = registry.script_pool();
            return Judged {
                score: script
                    .score_on(&names, &pool, registry.value_limits())
                    .await,
                usage: crate::usage::UsageTotals::default(),
            };
        }
        let Some(name) = self.judge_model() else {
            return Judged {
                score: self.score(example, observed),
                usage: crate::usage::UsageTotals::default(),
            };
        };
        match registry.gated_model(name) {
            Some(model) => self.score_with(example, observed, &*model).await,
            None => Judged {
                score: Score::fail(format!(
                    "no model `{}` is configured to judge with (known: {})",
                    name.unwrap_or("default"),
                    registry.model_names().join(", ")
                )),
                usage: crate::usage::UsageTotals::default(),
            },
        }
    }

    /// Scores what a run did against an example; a `judge` as it would on
    /// the offline model (its heuristic, saying so), a `script` on the
    /// calling thread.
    pub fn score(&self, example: &Example<'_>, observed: &Observed) -> Score {
        let names = Names { example, observed };
        match &self.kind {
            spec::Kind::Judge(judge) => judge.score_offline(&names),
            spec::Kind::Exact(scorer) => scorer.score(&names),
            spec::Kind::Contains(scorer) => scorer.score(&names),
            spec::Kind::Regex(scorer) => scorer.score(&names),
            spec::Kind::JsonSchema(scorer) => scorer.score(&names),
            spec::Kind::Expression(scorer) => scorer.score(&names),
            spec::Kind::Trajectory(scorer) => scorer.score(observed),
            spec::Kind::Threshold(scorer) => scorer.score(observed),
            spec::Kind::Script(scorer) => {
                scorer.score(&names, &crate::state::ValueLimits::default())
            }
        }
    }
}

/// The names a scorer's expressions read: `output`, `reference`, `input`,
/// `tokens`, `cost_usd` and `latency_ms`.
struct Names<'a> {
    example: &'a Example<'a>,
    observed: &'a Observed,
}

impl Names<'_> {
    fn lookup(&self, name: &str) -> Option<Value> {
        match name {
            "output" => Some(self.observed.output.clone()),
            "reference" => Some(self.example.reference.cloned().unwrap_or(Value::Null)),
            "input" => Some(self.example.input.clone()),
            "tokens" => Some(Value::from(self.observed.usage.tokens())),
            "cost_usd" => Some(Value::from(self.observed.usage.cost_usd)),
            "latency_ms" => Some(Value::from(self.observed.latency_ms)),
            _ => None,
        }
    }

    /// Evaluates `expr` over these names.
    fn eval(&self, expr: &crate::expr::Expr) -> Result<Value, String> {
        expr.eval(&|name| self.lookup(name))
            .map_err(|error| error.to_string())
    }
}

/// A value as a reason quotes it: strings as they are, others as JSON,
/// cut to 120 characters.
fn quote(value: &Value) -> String {
    const MAX: usize = 120;
    let text = match value {
        Value::String(text) => format!("\"{text}\""),
        other => other.to_string(),
    };
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// A value as text for text scorers: a string as it is, anything else as
/// its compact JSON.
fn as_text(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(text) => std::borrow::Cow::Borrowed(text),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}
