//! Evaluates an expression tree against the state. Every failure (a type
//! mismatch, a division by zero) is an [`EvalError`]; missing values are
//! `null`.

use std::cmp::Ordering;

use serde_json::Value;

use super::parser::{BinaryOp, Expr, Function, Node, UnaryOp};
use crate::state::kind_of as kind;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot evaluate `{expression}`: {message}")]
pub struct EvalError {
    /// The expression's source text.
    pub expression: String,
    /// What went wrong.
    pub message: String,
}

type Result<T> = std::result::Result<T, String>;

impl Expr {
    /// Evaluates the expression; `channel` looks up a state channel by name.
    pub fn eval(
        &self,
        channel: &dyn Fn(&str) -> Option<Value>,
    ) -> std::result::Result<Value, EvalError> {
        eval(&self.node, channel).map_err(|message| EvalError {
            expression: self.source().to_string(),
            message,
        })
    }

    /// Evaluates the expression and takes its truth (see the module docs).
    pub fn is_true(
        &self,
        channel: &dyn Fn(&str) -> Option<Value>,
    ) -> std::result::Result<bool, EvalError> {
        self.eval(channel).map(|value| truthy(&value))
    }
}

/// The truth of a value: `false`, `null`, `0`, `""`, `[]` and `{}` are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn eval(node: &Node, channel: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
    Ok(match node {
        Node::Literal(value) => value.clone(),
        Node::List(items) => Value::Array(
            items
                .iter()
                .map(|item| eval(item, channel))
                .collect::<Result<_>>()?,
        ),
        Node::Object(fields) => {
            let mut map = serde_json::Map::new();
            for (key, value) in fields {
                map.insert(key.clone(), eval(value, channel)?);
            }
            Value::Object(map)
        }
        Node::Channel(name) => channel(name).unwrap_or(Value::Null),
        Node::Field(inner, field) => match eval(inner, channel)? {
            Value::Object(mut map) => map.remove(field).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        Node::Index(inner, index) => index_into(eval(inner, channel)?, &eval(index, channel)?)?,
        Node::Call(function, args) => {
            let args = args
                .iter()
                .map(|arg| eval(arg, channel))
                .collect::<Result<Vec<_>>>()?;
            call(*function, args)?
        }
        Node::Unary(UnaryOp::Not, inner) => Value::Bool(!truthy(&eval(inner, channel)?)),
        Node::Unary(UnaryOp::Neg, inner) => {
            arithmetic(BinaryOp::Sub, &Value::from(0), &eval(inner, channel)?)?
        }
        Node::Binary(BinaryOp::And, left, right) => {
            let left = eval(left, channel)?;
            if truthy(&left) {
                eval(right, channel)?
            } else {
                left
            }
        }
        Node::Binary(BinaryOp::Or, left, right) => {
            let left = eval(left, channel)?;
            if truthy(&left) {
                left
            } else {
                eval(right, channel)?
            }
        }
        Node::Binary(op, left, right) => {
            binary(*op, &eval(left, channel)?, &eval(right, channel)?)?
        }
    })
}

fn index_into(value: Value, index: &Value) -> Result<Value> {
    match (value, index) {
        (Value::Array(mut items), Value::Number(n)) => {
            let Some(i) = n.as_i64() else {
                return Err(format!("list index {n} is not a whole number"));
            };
            let len = items.len() as i64;
            let i = if i < 0 { len + i } else { i };
            if (0..len).contains(&i) {
                Ok(items.swap_remove(i as usize))
            } else {
                Ok(Value::Null)
            }
        }
        (Value::Object(mut map), Value::String(key)) => Ok(map.remove(key).unwrap_or(Value::Null)),
        (Value::Null, _) => Ok(Value::Null),
        (value, index) => Err(format!(
            "cannot index {} with {}",
            kind(&value),
            kind(index)
        )),
    }
}

fn call(function: Function, args: Vec<Value>) -> Result<Value> {
    // The parser checked each function's arity; a missing argument is null.
    let mut args = args.into_iter();
    let arg = |args: &mut std::vec::IntoIter<Value>| args.next().unwrap_or(Value::Null);
    Ok(match function {
        Function::Len => match arg(&mut args) {
            Value::String(s) => Value::from(s.chars().count()),
            Value::Array(a) => Value::from(a.len()),
            Value::Object(o) => Value::from(o.len()),
            Value::Null => Value::from(0),
            other => {
                return Err(format!(
                    "len() needs a string, list or object, not {}",
                    kind(&other)
                ));
            }
        },
        Function::Contains => {
            let haystack = arg(&mut args);
            let needle = arg(&mut args);
            Value::Bool(contains(&haystack, &needle)?)
        }
        Function::StartsWith | Function::EndsWith => {
            let (Value::String(s), Value::String(p)) = (arg(&mut args), arg(&mut args)) else {
                return Err("starts_with() and ends_with() need two strings".into());
            };
            Value::Bool(if function == Function::StartsWith {
                s.starts_with(&p)
            } else {
                s.ends_with(&p)
            })
        }
        Function::Lower | Function::Upper => match arg(&mut args) {
            Value::String(s) => Value::String(if function == Function::Lower {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            }),
            Value::Null => Value::Null,
            other => {
                return Err(format!(
                    "lower() and upper() need a string, not {}",
                    kind(&other)
                ));
            }
        },
        Function::First | Function::Last => match arg(&mut args) {
            Value::Array(mut items) => {
                let item = if function == Function::First {
                    items.drain(..).next()
                } else {
                    items.pop()
                };
                item.unwrap_or(Value::Null)
            }
            Value::Null => Value::Null,
            other => {
                return Err(format!(
                    "first() and last() need a list, not {}",
                    kind(&other)
                ));
            }
        },
        Function::Sum => match arg(&mut args) {
            Value::Array(items) => {
                let mut total = Value::from(0);
                for item in &items {
                    total = arithmetic(BinaryOp::Add, &total, item)?;
                }
                total
            }
            Value::Null => Value::from(0),
            other => {
                return Err(format!(
                    "sum() needs a list of numbers, not {}",
                    kind(&other)
                ));
            }
        },
        Function::Split => {
            let text = arg(&mut args);
            super::text::split(text, arg(&mut args))?
        }
        Function::Join => {
            let list = arg(&mut args);
            super::text::join(list, arg(&mut args))?
        }
        Function::Trim => super::text::trim(arg(&mut args))?,
        Function::ParseJson => super::text::parse_json(arg(&mut args))?,
        Function::ToJson => super::text::to_json(arg(&mut args)),
        Function::Exists => Value::Bool(!arg(&mut args).is_null()),
        Function::Number => match arg(&mut args) {
            Value::Number(n) => Value::Number(n),
            Value::String(s) => s
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .ok()
                .or_else(|| {
                    s.trim()
                        .parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                        .map(Value::Number)
                })
                .unwrap_or(Value::Null),
            Value::Bool(b) => Value::from(i64::from(b)),
            _ => Value::Null,
        },
        Function::String => match arg(&mut args) {
            Value::String(s) => Value::String(s),
            Value::Null => Value::String(String::new()),
            other => Value::String(other.to_string()),
        },
    })
}

fn contains(haystack: &Value, needle: &Value) -> Result<bool> {
    match (haystack, needle) {
        (Value::String(s), Value::String(n)) => Ok(s.contains(n.as_str())),
        (Value::Array(items), needle) => Ok(items.iter().any(|item| equal(item, needle))),
        (Value::Object(map), Value::String(key)) => Ok(map.contains_key(key)),
        (Value::Null, _) => Ok(false),
        (h, n) => Err(format!("cannot look for {} in {}", kind(n), kind(h))),
    }
}

fn binary(op: BinaryOp, left: &Value, right: &Value) -> Result<Value> {
    Ok(match op {
        BinaryOp::Eq => Value::Bool(equal(left, right)),
        BinaryOp::Ne => Value::Bool(!equal(left, right)),
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let ordering = compare(left, right)?;
            Value::Bool(match op {
                BinaryOp::Lt => ordering == Ordering::Less,
                BinaryOp::Le => ordering != Ordering::Greater,
                BinaryOp::Gt => ordering == Ordering::Greater,
                _ => ordering != Ordering::Less,
            })
        }
        BinaryOp::In => Value::Bool(contains(right, left)?),
        BinaryOp::Add => match (left, right) {
            (Value::String(a), Value::String(b)) => Value::String(format!("{a}{b}")),
            (Value::Array(a), Value::Array(b)) => {
                Value::Array(a.iter().chain(b).cloned().collect())
            }
            _ => arithmetic(op, left, right)?,
        },
        _ => arithmetic(op, left, right)?,
    })
}

/// Equality where `1 == 1.0`; otherwise JSON equality.
fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => left == right,
    }
}

fn compare(left: &Value, right: &Value) -> Result<Ordering> {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => {
            if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
                return Ok(a.cmp(&b));
            }
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            a.partial_cmp(&b)
                .ok_or_else(|| "numbers cannot be compared".to_string())
        }
        (Value::String(a), Value::String(b)) => Ok(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => Ok(a.cmp(b)),
        (a, b) => Err(format!("cannot compare {} with {}", kind(a), kind(b))),
    }
}

fn arithmetic(op: BinaryOp, left: &Value, right: &Value) -> Result<Value> {
    let (Value::Number(a), Value::Number(b)) = (left, right) else {
        return Err(format!(
            "cannot apply {} to {} and {}",
            symbol(op),
            kind(left),
            kind(right)
        ));
    };
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        let exact = match op {
            BinaryOp::Add => a.checked_add(b),
            BinaryOp::Sub => a.checked_sub(b),
            BinaryOp::Mul => a.checked_mul(b),
            BinaryOp::Div if b == 0 => return Err("division by zero".into()),
            BinaryOp::Div if a % b == 0 => a.checked_div(b),
            BinaryOp::Rem if b == 0 => return Err("division by zero".into()),
            BinaryOp::Rem => a.checked_rem(b),
            _ => None,
        };
        if let Some(n) = exact {
            return Ok(Value::from(n));
        }
    }
    let (a, b) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    let n = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div if b == 0.0 => return Err("division by zero".into()),
        BinaryOp::Div => a / b,
        BinaryOp::Rem if b == 0.0 => return Err("division by zero".into()),
        BinaryOp::Rem => a % b,
        _ => return Err(format!("{} is not arithmetic", symbol(op))),
    };
    serde_json::Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| "the result is not a finite number".to_string())
}

fn symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "`+`",
        BinaryOp::Sub => "`-`",
        BinaryOp::Mul => "`*`",
        BinaryOp::Div => "`/`",
        BinaryOp::Rem => "`%`",
        _ => "this operator",
    }
}
