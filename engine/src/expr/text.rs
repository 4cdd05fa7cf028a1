//! The expression language's text and JSON functions: `split`, `join`,
//! `trim`, `parse_json` and `to_json`, the ones people reach for between a
//! model's text and a typed channel. Each is bounded: `split` by its input
//! and [`MAX_PARTS`], `join` by [`MAX_JOINED`] (a separator between every
//! two items could otherwise multiply a text's size).

use serde_json::Value;

use crate::state::kind_of as kind;

/// The most parts `split` makes.
pub const MAX_PARTS: usize = 10_000;

/// The longest text `join` makes, in bytes: a separator goes between every
/// two items, so the result could otherwise grow as items times separator.
pub const MAX_JOINED: usize = 1024 * 1024;

type Result<T> = std::result::Result<T, String>;

/// `split(text, separator)`: the parts of `text` between `separator`s.
pub(super) fn split(text: Value, separator: Value) -> Result<Value> {
    let text = match text {
        Value::String(text) => text,
        Value::Null => return Ok(Value::Array(Vec::new())),
        other => {
            return Err(format!(
                "split() needs a string to split, not {}",
                kind(&other)
            ));
        }
    };
    let Value::String(separator) = separator else {
        return Err(format!(
            "split() needs a string separator, not {}",
            kind(&separator)
        ));
    };
    if separator.is_empty() {
        return Err("split() needs a separator that is not empty".into());
    }
    let mut parts = Vec::new();
    for part in text.split(separator.as_str()) {
        if parts.len() == MAX_PARTS {
            return Err(format!("split() would make more than {MAX_PARTS} parts"));
        }
        parts.push(Value::String(part.to_string()));
    }
    Ok(Value::Array(parts))
}

/// `join(list, separator)`: the items as text, `separator` between them.
/// Strings go in as they are, `null` as nothing, anything else as JSON.
pub(super) fn join(list: Value, separator: Value) -> Result<Value> {
    let items = match list {
        Value::Array(items) => items,
        Value::Null => return Ok(Value::String(String::new())),
        other => return Err(format!("join() needs a list to join, not {}", kind(&other))),
    };
    let separator = match separator {
        Value::String(separator) => separator,
        Value::Null => String::new(),
        other => {
            return Err(format!(
                "join() needs a string separator, not {}",
                kind(&other)
            ));
        }
    };
    let mut joined = String::new();
    for (i, item) in items.into_iter().enumerate() {
        let text = match item {
            Value::String(text) => text,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let grows = text.len() + if i > 0 { separator.len() } else { 0 };
        if joined.len() + grows > MAX_JOINED {
            return Err(format!("join() would make more than {MAX_JOINED} bytes"));
        }
        if i > 0 {
            joined.push_str(&separator);
        }
        joined.push_str(&text);
    }
    Ok(Value::String(joined))
}

/// `trim(text)`: the text without white space at its ends.
pub(super) fn trim(text: Value) -> Result<Value> {
    match text {
        Value::String(text) => Ok(Value::String(text.trim().to_string())),
        Value::Null => Ok(Value::String(String::new())),
        other => Err(format!("trim() needs a string, not {}", kind(&other))),
    }
}

/// `parse_json(text)`: the value the JSON text writes (a model's reply, a
/// tool's result). Text that is not JSON is an error saying where.
pub(super) fn parse_json(text: Value) -> Result<Value> {
    match text {
        Value::String(text) => serde_json::from_str(text.trim())
            .map_err(|error| format!("parse_json(): the text is not JSON ({error})")),
        Value::Null => Ok(Value::Null),
        other => Err(format!("parse_json() needs a string, not {}", kind(&other))),
    }
}

/// `to_json(value)`: the value as compact JSON text.
pub(super) fn to_json(value: Value) -> Value {
    Value::String(value.to_string())
}
