//! Bounds on the values of a run: how deeply they nest and how large they
//! are. A value that enters a run (an input, a webhook body, a script's or
//! a hook's result, a model's JSON, a tool's result, a node's update) is
//! checked here before anything else touches it, so nothing later (a
//! reducer, the store, a websocket, the browser) meets a value it cannot
//! serialise, parse back or drop. The walk is a loop with its own stack,
//! never recursion: a hostile value can be deeper than any thread's stack.
//!
//! The depth counts nested containers: `1` and `"a"` are 0 deep, `[]` and
//! `{}` are 1, `{"a": [1]}` is 2. JSON parsers (serde_json's among them)
//! refuse values deeper than 128; runs keep well under it, with room for
//! the envelopes events and checkpoints wrap values in.

use serde_json::Value;

/// The deepest a run's value may nest by default.
pub const DEFAULT_MAX_DEPTH: usize = 64;
/// The largest a run's value may be by default, as JSON text: 16 MiB.
pub const DEFAULT_MAX_BYTES: usize = 16 << 20;
/// The deepest any limit may be set to: values of runs must stay readable
/// by JSON parsers (128 levels) inside the events that carry them.
pub const MAX_DEPTH_CEILING: usize = 100;

/// How deep and how large a run's values may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueLimits {
    /// The most nested arrays and objects (at most [`MAX_DEPTH_CEILING`]).
    pub max_depth: usize,
    /// The most bytes of the value written as compact JSON (an estimate
    /// that never undercounts by more than a number's digits).
    pub max_bytes: usize,
}

impl Default for ValueLimits {
    fn default() -> Self {
        ValueLimits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Why a value was refused: which limit, and where in the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueLimitError {
    /// The value nests deeper than the limit; `path` is where it crosses it
    /// (`$.a.b[0]`, cut short when long).
    #[error("the value nests deeper than {limit} levels (at {path})")]
    TooDeep { limit: usize, path: String },
    /// The value is larger than the limit, in bytes of JSON.
    #[error("the value is larger than {} (the limit)", human_bytes(*limit))]
    TooLarge { limit: usize },
}

fn human_bytes(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// One step of a path into a value.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A container being walked, with the step that led into it.
enum Frame<'a> {
    Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
    Object(serde_json::map::Iter<'a>),
}

impl ValueLimits {
    /// A limit of `max_depth` (clamped to 1 ..= [`MAX_DEPTH_CEILING`]) and
    /// `max_bytes` (at least 1 KiB).
    pub fn new(max_depth: usize, max_bytes: usize) -> ValueLimits {
        ValueLimits {
            max_depth: max_depth.clamp(1, MAX_DEPTH_CEILING),
            max_bytes: max_bytes.max(1 << 10),
        }
    }

    /// Checks `value` against both limits, without recursion.
    pub fn check(&self, value: &Value) -> Result<(), ValueLimitError> {
        let mut bytes = 0usize;
        let mut path: Vec<Step<'_>> = Vec::new();
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next: Option<&Value> = Some(value);
        loop {
            if let Some(value) = next.take() {
                bytes = bytes.saturating_add(scalar_bytes(value));
                if bytes > self.max_bytes {
                    return Err(ValueLimitError::TooLarge {
                        limit: self.max_bytes,
                    });
                }
                let frame = match value {
                    Value::Array(items) => Frame::Array(items.iter().enumerate()),
                    Value::Object(fields) => Frame::Object(fields.iter()),
                    _ => continue,
                };
                if stack.len() >= self.max_depth {
                    return Err(ValueLimitError::TooDeep {
                        limit: self.max_depth,
                        path: render_path(&path),
                    });
                }
                stack.push(frame);
                continue;
            }
            let Some(top) = stack.last_mut() else {
                return Ok(());
            };
            let child = match top {
                Frame::Array(items) => items.next().map(|(i, item)| (Step::Index(i), item)),
                Frame::Object(fields) => fields.next().map(|(key, item)| {
                    bytes = bytes.saturating_add(key.len() + 3);
                    (Step::Key(key.as_str()), item)
                }),
            };
            match child {
                Some((step, item)) => {
                    // The path holds one step per open container: the one
                    // of the child being visited replaces its sibling's.
                    path.truncate(stack.len() - 1);
                    path.push(step);
                    next = Some(item);
                }
                None => {
                    stack.pop();
                    path.truncate(stack.len());
                }
            }
        }
    }

    /// The depth of `value` (see the module's doc), without recursion;
    /// counts no further than `cap`.
    pub fn depth(value: &Value, cap: usize) -> usize {
        let mut deepest = 0;
        let mut pending: Vec<(&Value, usize)> = vec![(value, 0)];
        while let Some((value, depth)) = pending.pop() {
            let children: Box<dyn Iterator<Item = &Value>> = match value {
                Value::Array(items) => Box::new(items.iter()),
                Value::Object(fields) => Box::new(fields.values()),
                _ => continue,
            };
            deepest = deepest.max(depth + 1);
            if deepest >= cap {
                return cap;
            }
            pending.extend(children.map(|child| (child, depth + 1)));
        }
        deepest
    }
}

/// The bytes a value adds as JSON, not counting its children.
fn scalar_bytes(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        // Digits, sign, point and exponent of the longest f64.
        Value::Number(_) => 24,
        Value::String(text) => text.len() + 2,
        // Brackets, and a separator per item (counted here, once).
        Value::Array(items) => 2 + items.len(),
        Value::Object(fields) => 2 + fields.len(),
    }
}

/// `$.a.b[0]`, with the middle left out past a few dozen steps.
fn render_path(path: &[Step<'_>]) -> String {
    const KEEP: usize = 8;
    let mut text = String::from("$");
    let push = |step: &Step<'_>, text: &mut String| match step {
        Step::Key(key) if is_plain_key(key) => {
            text.push('.');
            text.push_str(key);
        }
        Step::Key(key) => {
            text.push_str(&format!("[{}]", Value::String(clip(key).to_string())));
        }
        Step::Index(i) => text.push_str(&format!("[{i}]")),
    };
    if path.len() <= 2 * KEEP {
        for step in path {
            push(step, &mut text);
        }
    } else {
        for step in &path[..KEEP] {
            push(step, &mut text);
        }
        text.push_str(&format!("…({} levels)…", path.len() - 2 * KEEP));
        for step in &path[path.len() - KEEP..] {
            push(step, &mut text);
        }
    }
    text
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 40
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn clip(key: &str) -> &str {
    match key.char_indices().nth(40) {
        Some((end, _)) => &key[..end],
        None => key,
    }
}

/// Takes `value` apart without recursion, so a value of any depth is
/// dropped without overflowing the stack (serde_json's own drop recurses).
pub fn drop_flat(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(fields) => pending.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// What a value cut by [`cut_deep_json`] reads as.
pub const CUT_MARKER: &str =
    "[cut: nested deeper than a run's values may be; stored before the limit held]";

/// JSON text whose arrays and objects nested deeper than `max_depth` are
/// each replaced by the string [`CUT_MARKER`], or `None` when nothing is
/// that deep. For records stored before values were bounded: JSON parsers
/// refuse them (serde_json past 128 levels), and this makes them readable
/// without a parser that recurses. A scan of the text, not a parse: text
/// that is not JSON stays as broken as it was.
pub fn cut_deep_json(text: &str, max_depth: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut copied = 0usize;
    let mut cut = false;
    let mut i = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = skip_string(bytes, i),
            b'[' | b'{' if depth == max_depth => {
                let end = skip_container(bytes, i);
                out.push_str(&text[copied..i]);
                out.push_str(&Value::String(CUT_MARKER.to_string()).to_string());
                copied = end;
                cut = true;
                i = end;
            }
            b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    if !cut {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// A record stored as JSON text, read back. Text nested deeper than JSON
/// parsers go (a record stored before values were bounded) is read with
/// its too-deep parts cut ([`cut_deep_json`] at [`MAX_DEPTH_CEILING`]),
/// so every stored run still opens.
pub fn from_stored_json<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    match serde_json::from_str(text) {
        Err(error) if error.to_string().starts_with("recursion limit exceeded") => {
            match cut_deep_json(text, MAX_DEPTH_CEILING) {
                Some(cut) => serde_json::from_str(&cut),
                None => Err(error),
            }
        }
        parsed => parsed,
    }
}

/// The index just past the string that starts at `start` (a quote).
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index just past the array or object that starts at `start`.
fn skip_container(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{CUT_MARKER, ValueLimitError, ValueLimits, cut_deep_json, drop_flat};

    fn nested(depth: usize) -> Value {
        let mut value = json!(1);
        for _ in 0..depth {
            value = json!({ "a": value });
        }
        value
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(ValueLimits::depth(&json!(1), 100), 0);
        assert_eq!(ValueLimits::depth(&json!([]), 100), 1);
        assert_eq!(ValueLimits::depth(&json!({"a": [1]}), 100), 2);
        assert_eq!(ValueLimits::depth(&nested(70), 100), 70);
        assert_eq!(ValueLimits::depth(&nested(70), 10), 10);
    }

    #[test]
    fn a_value_at_the_limit_passes_and_one_deeper_is_located() {
        let limits = ValueLimits::new(4, 1 << 20);
        assert_eq!(limits.check(&nested(4)), Ok(()));
        assert_eq!(
            limits.check(&json!({"x": [1, {"y": {"z": {"w": 1}}}]})),
            Err(ValueLimitError::TooDeep {
                limit: 4,
                path: "$.x[1].y.z".into()
            })
        );
        // A sibling's key does not linger in the path.
        assert_eq!(
            limits.check(&json!({"a": {"b": 1}, "c": [[[[1]]]]})),
            Err(ValueLimitError::TooDeep {
                limit: 4,
                path: "$.c[0][0][0]".into()
            })
        );
    }

    #[test]
    fn a_long_path_keeps_its_ends() {
        let limits = ValueLimits::new(64, 1 << 20);
        let Err(ValueLimitError::TooDeep { path, .. }) = limits.check(&nested(1000)) else {
            panic!("a value 1,000 deep passed");
        };
        assert_eq!(path, "$.a.a.a.a.a.a.a.a…(48 levels)….a.a.a.a.a.a.a.a");
        let odd = json!({"a key with spaces": {"b": {}}});
        let Err(ValueLimitError::TooDeep { path, .. }) = ValueLimits::new(2, 1 << 20).check(&odd)
        else {
            panic!("passed");
        };
        assert_eq!(path, "$[\"a key with spaces\"].b");
    }

    #[test]
    fn size_counts_json_bytes() {
        let limits = ValueLimits::new(64, 1 << 10);
        assert_eq!(limits.check(&json!("x".repeat(1000))), Ok(()));
        assert_eq!(
            limits.check(&json!(["x".repeat(600), "y".repeat(600)])),
            Err(ValueLimitError::TooLarge { limit: 1 << 10 })
        );
        let many: Value = (0..2000).map(|_| json!(null)).collect();
        assert!(limits.check(&many).is_err());
        let keys: serde_json::Map<String, Value> =
            (0..100).map(|i| (format!("key{i:04}"), json!(1))).collect();
        // 100 keys of 7 characters, quoted, with a colon and a separator.
        assert!(limits.check(&Value::Object(keys)).is_err());
    }

    #[test]
    fn values_far_deeper_than_a_stack_are_checked_and_dropped() {
        // Built without recursion; serde_json's drop would overflow.
        let mut value = json!(null);
        for _ in 0..1_000_000 {
            value = Value::Array(vec![value]);
        }
        let limits = ValueLimits::default();
        assert!(matches!(
            limits.check(&value),
            Err(ValueLimitError::TooDeep { limit: 64, .. })
        ));
        assert_eq!(ValueLimits::depth(&value, usize::MAX), 1_000_000);
        drop_flat(value);
    }

    #[test]
    fn limits_are_clamped_to_what_stays_readable() {
        assert_eq!(ValueLimits::new(1000, 0), ValueLimits::new(100, 1024));
        assert_eq!(ValueLimits::new(0, 5000).max_depth, 1);
    }

    #[test]
    fn stored_text_too_deep_to_parse_is_cut_where_it_crosses_the_depth() {
        assert_eq!(cut_deep_json(r#"{"a": [1, 2]}"#, 2), None);
        let text = r#"{"s": "[{\"[", "a": [1, {"b": [[2]]}], "c": {"d": 3}}"#;
        let cut = cut_deep_json(text, 2).expect("a value 4 deep was left");
        let value: Value = serde_json::from_str(&cut).expect("the cut text parses");
        assert_eq!(
            value,
            json!({"s": "[{\"[", "a": [1, CUT_MARKER], "c": {"d": 3}})
        );
        // Far past what serde_json parses (128), made readable.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        let cut = cut_deep_json(&format!(r#"{{"events": {deep}}}"#), 100).expect("cut");
        let value: Value = serde_json::from_str(&cut).expect("parses once cut");
        assert_eq!(ValueLimits::depth(&value, usize::MAX), 100);
    }
}
