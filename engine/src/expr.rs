//! The condition language: small, safe expressions over a run's state.
//!
//! Conditional edges carry an expression such as
//! `attempts < 3 && last(messages).role == "tool"`; it is parsed once when
//! the graph is compiled and evaluated after every step. The language has
//! no loops, no assignment and no I/O, so evaluation always ends, in time
//! proportional to the expression's size; source length and nesting depth
//! are limited, and every failure is an error value, never a panic.
//!
//! # Syntax
//! - Literals: `12`, `-3.5`, `"text"` or `'text'` (with `\"`, `\\`, `\n`
//!   escapes), `true`, `false`, `null`, lists `[1, 2]`.
//! - Names: a bare name is a state channel (`counter`); `.field` and
//!   `[index]` reach inside (`messages[-1].content`; negative indexes count
//!   from the end). Anything missing is `null`, never an error.
//! - Operators, loosest first: `||` (or `or`), `&&` (or `and`), `!` (or
//!   `not`), comparisons `== != < <= > >=` and `in`, `+ -`, `* / %`, unary `-`.
//!   `+` also joins strings and lists.
//! - Functions: `len(x)`, `contains(haystack, needle)`, `starts_with(s, p)`,
//!   `ends_with(s, p)`, `lower(s)`, `upper(s)`, `first(list)`, `last(list)`,
//!   `exists(x)` (not null), `number(x)`, `string(x)`, `sum(list)`.
//! - In a node's expressions, `item` is the item a fan-out sent the node
//!   (when it was started by one).
//! - Truth: `false`, `null`, `0`, `""`, `[]` and `{}` are false; all else true.
//!
//! ```
//! use heddle_engine::expr::Expr;
//! use serde_json::json;
//!
//! let expr = Expr::parse("count < 3 && last(messages).role == 'tool'").unwrap();
//! let state = json!({"count": 1, "messages": [{"role": "user"}, {"role": "tool"}]});
//! let lookup = |name: &str| state.get(name).cloned();
//! assert!(expr.is_true(&lookup).unwrap());
//! ```

mod eval;
mod lexer;
mod parser;

pub use eval::EvalError;
pub use parser::{Expr, ParseError};

/// Longest accepted source text, in bytes.
pub const MAX_SOURCE_LEN: usize = 4096;
/// Deepest accepted nesting of sub-expressions.
pub const MAX_DEPTH: usize = 48;
/// Most operators, fields, indexes and calls in one expression.
pub const MAX_OPERATIONS: usize = 256;
