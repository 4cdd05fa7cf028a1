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
//! - Functions: `len(x)` (or `length(x)`), `contains(haystack, needle)`,
//!   `starts_with(s, p)`, `ends_with(s, p)`, `lower(s)`, `upper(s)`,
//!   `trim(s)`, `split(s, separator)`, `join(list, separator)`,
//!   `first(list)`, `last(list)`, `exists(x)` (not null), `number(x)`,
//!   `string(x)`, `sum(list)`, `parse_json(text)`, `to_json(x)`.
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

mod error;
mod eval;
mod lexer;
mod parser;
mod rename;
mod text;

pub use error::ParseError;
pub use eval::EvalError;
pub use parser::Expr;
pub use rename::rename_channel;

/// Longest accepted source text, in bytes.
pub const MAX_SOURCE_LEN: usize = 4096;
/// Deepest accepted nesting of sub-expressions.
pub const MAX_DEPTH: usize = 48;
/// Most operators, fields, indexes and calls in one expression.
pub const MAX_OPERATIONS: usize = 256;

#[cfg(test)]
mod tests {
    use super::Expr;
    use serde_json::{Value, json};

    fn eval(source: &str) -> Result<Value, String> {
        let state = json!({
            "n": 7, "f": 2.5, "s": "Hello", "list": [1, 2, 3],
            "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}],
            "obj": {"a": {"b": true}}
        });
        let expr = Expr::parse(source).map_err(|e| e.to_string())?;
        expr.eval(&|name| state.get(name).cloned())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn precedence_and_arithmetic() {
        assert_eq!(eval("1 + 2 * 3").unwrap(), json!(7));
        assert_eq!(eval("(1 + 2) * 3").unwrap(), json!(9));
        assert_eq!(eval("7 / 2").unwrap(), json!(3.5));
        assert_eq!(eval("6 / 2").unwrap(), json!(3));
        assert_eq!(eval("-n + 1").unwrap(), json!(-6));
        assert_eq!(eval("n % 4").unwrap(), json!(3));
        assert_eq!(eval("f * 2").unwrap(), json!(5.0));
        assert_eq!(eval("'a' + \"b\"").unwrap(), json!("ab"));
    }

    #[test]
    fn logic_short_circuits_and_compares() {
        assert_eq!(eval("n > 5 && s == 'Hello'").unwrap(), json!(true));
        assert_eq!(eval("n > 5 and not (s == 'Hello')").unwrap(), json!(false));
        assert_eq!(
            eval("false || missing.deep.field == null").unwrap(),
            json!(true)
        );
        // The right side is not evaluated, so its error never happens.
        assert_eq!(eval("false && 1 / 0").unwrap(), json!(false));
        assert_eq!(eval("1 == 1.0").unwrap(), json!(true));
        assert_eq!(eval("'abc' < 'abd'").unwrap(), json!(true));
        assert_eq!(eval("2 in list").unwrap(), json!(true));
        assert_eq!(eval("'ell' in s").unwrap(), json!(true));
    }

    #[test]
    fn text_and_json_functions() {
        assert_eq!(
            eval("split('a, b, c', ', ')").unwrap(),
            json!(["a", "b", "c"])
        );
        assert_eq!(eval("split(nothing, ',')").unwrap(), json!([]));
        assert_eq!(eval("join(list, '-')").unwrap(), json!("1-2-3"));
        assert_eq!(
            eval("join(['a', null, {x: 1}], ' ')").unwrap(),
            json!("a  {\"x\":1}")
        );
        assert_eq!(eval("trim('  padded\n')").unwrap(), json!("padded"));
        assert_eq!(eval("upper(trim(' x '))").unwrap(), json!("X"));
        assert_eq!(eval("length(s) == len(s)").unwrap(), json!(true));
        assert_eq!(
            eval("parse_json('{\"topics\": [\"a\", \"b\"]}').topics[1]").unwrap(),
            json!("b")
        );
        assert_eq!(eval("to_json(obj)").unwrap(), json!("{\"a\":{\"b\":true}}"));
        assert_eq!(
            eval("parse_json(to_json(list)) == list").unwrap(),
            json!(true)
        );
        // Errors say which function and why.
        assert!(eval("parse_json('{oops')").unwrap_err().contains(
            "parse_json(): the text is not JSON (key must be a string at line 1 column 2)"
        ));
        assert!(eval("split(s, '')").unwrap_err().contains("not empty"));
        assert!(
            eval("split(n, ',')")
                .unwrap_err()
                .contains("split() needs a string")
        );
        assert!(
            eval("join(s, ',')")
                .unwrap_err()
                .contains("join() needs a list")
        );
        assert!(
            eval("trim(list)")
                .unwrap_err()
                .contains("trim() needs a string")
        );
    }

    #[test]
    fn join_is_bounded() {
        let state = json!({"parts": vec![""; 1000], "sep": "x".repeat(2000)});
        let expr = Expr::parse("join(parts, sep)").unwrap();
        let error = expr.eval(&|name| state.get(name).cloned()).unwrap_err();
        assert!(
            error.to_string().contains("more than 1048576 bytes"),
            "{error}"
        );
    }

    #[test]
    fn split_is_bounded() {
        let state = json!({"long": ",".repeat(super::text::MAX_PARTS)});
        let expr = Expr::parse("split(long, ',')").unwrap();
        let error = expr.eval(&|name| state.get(name).cloned()).unwrap_err();
        assert!(
            error.to_string().contains("more than 10000 parts"),
            "{error}"
        );
        let state = json!({"long": ",".repeat(super::text::MAX_PARTS - 1)});
        let parts = expr.eval(&|name| state.get(name).cloned()).unwrap();
        assert_eq!(parts.as_array().map(Vec::len), Some(super::text::MAX_PARTS));
    }

    #[test]
    fn paths_functions_and_negative_indexes() {
        assert_eq!(eval("messages[-1].role").unwrap(), json!("tool"));
        assert_eq!(eval("last(messages).content").unwrap(), json!("42"));
        assert_eq!(eval("obj.a.b").unwrap(), json!(true));
        assert_eq!(eval("obj['a']['b']").unwrap(), json!(true));
        assert_eq!(eval("list[10]").unwrap(), Value::Null);
        assert_eq!(eval("len(list) + len(s)").unwrap(), json!(8));
        assert_eq!(eval("sum(list)").unwrap(), json!(6));
        assert_eq!(eval("lower(s)").unwrap(), json!("hello"));
        assert_eq!(eval("number('12') + 1").unwrap(), json!(13));
        assert_eq!(
            eval("contains(s, 'He') && starts_with(s, 'H') && ends_with(s, 'o')").unwrap(),
            json!(true)
        );
        assert_eq!(eval("exists(obj) && !exists(nope)").unwrap(), json!(true));
        assert_eq!(eval("[1, n][1]").unwrap(), json!(7));
        assert_eq!(
            eval("{role: 'tool', 'the n': n}").unwrap(),
            json!({"role": "tool", "the n": 7})
        );
        assert_eq!(eval("{}").unwrap(), json!({}));
    }

    #[test]
    fn errors_say_what_and_where() {
        assert_eq!(
            eval("n +").unwrap_err(),
            "expression ends too early (at offset 3)"
        );
        assert_eq!(
            eval("n = 1").unwrap_err(),
            "`=` is not an operator here; compare with `==` (at offset 2)"
        );
        assert_eq!(
            eval("frob(n)").unwrap_err(),
            "unknown function `frob` (at offset 0)"
        );
        assert_eq!(
            eval("len(n, n)").unwrap_err(),
            "`len` takes 1 argument, not 2 (at offset 0)"
        );
        assert_eq!(
            eval("'open").unwrap_err(),
            "string is not closed (at offset 0)"
        );
        assert_eq!(
            eval("n n").unwrap_err(),
            "unexpected text after the expression (at offset 2)"
        );
        assert_eq!(eval("").unwrap_err(), "expression is empty (at offset 0)");
        assert!(eval("n / 0").unwrap_err().contains("division by zero"));
        assert!(
            eval("s < 3")
                .unwrap_err()
                .contains("cannot compare a string with a number")
        );
        assert!(
            eval("list.x + 1")
                .unwrap_err()
                .contains("cannot apply `+` to null and a number")
        );
        assert!(
            eval("9223372036854775807 + 1").is_ok(),
            "overflow falls back to floating point"
        );
    }

    #[test]
    fn channels_read_are_listed_once() {
        let expr = Expr::parse("a > 1 && len(b) == a || c.d").unwrap();
        assert_eq!(expr.channels(), ["a", "b", "c"]);
    }
}
