//! How a state changed between two points, channel by channel, in a form
//! that applies without the graph: items appended to a list, text added to
//! a string, keys of an object set or removed, or a whole new value.
//!
//! A step's event carries its changes, and a stored checkpoint is its
//! changes from the checkpoint before it (after a snapshot of the whole
//! state now and then), so what a long conversation stores and sends grows
//! with what was said, not with the square of it. Changes are computed by
//! comparing values, not from what nodes wrote, so applying them needs
//! neither the graph nor its reducers: a thread whose graph changed
//! between runs still loads, a checkpoint made by a resume, a fork's edits
//! or a run's start is stored like one made by a step, and the browser
//! rebuilds the state at any step with this same code (compiled to wasm).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How one channel's value changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Change {
    /// The channel's new value.
    Set { value: Value },
    /// Items added at the end of a list.
    Append { items: Vec<Value> },
    /// Text added at the end of a string.
    Concat { text: String },
    /// Keys of an object set to these values, and keys removed.
    Merge {
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        set: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed: Vec<String>,
    },
    /// The channel is no longer in the state.
    Remove,
}

/// The changes of a state: channel name to how it changed. Channels that
/// did not change are absent.
pub type Changes = BTreeMap<String, Change>;

/// Why changes do not apply to a state: they were made from another one
/// (a stored record that does not fit the records before it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot apply the change of `{channel}`: {message}")]
pub struct ChangeError {
    pub channel: String,
    pub message: String,
}

/// How `before` became `after`; `None` when they are equal.
pub fn change(before: &Value, after: &Value) -> Option<Change> {
    if before == after {
        return None;
    }
    Some(match (before, after) {
        (Value::Array(old), Value::Array(new))
            if new.len() > old.len() && new[..old.len()] == old[..] =>
        {
            Change::Append {
                items: new[old.len()..].to_vec(),
            }
        }
        (Value::String(old), Value::String(new)) if new.starts_with(old.as_str()) => {
            Change::Concat {
                text: new[old.len()..].to_string(),
            }
        }
        (Value::Object(old), Value::Object(new)) => {
            let mut set = Map::new();
            for (key, value) in new {
                if old.get(key) != Some(value) {
                    set.insert(key.clone(), value.clone());
                }
            }
            let removed: Vec<String> = old
                .keys()
                .filter(|key| !new.contains_key(*key))
                .cloned()
                .collect();
            // Most keys changed: the whole object says it as briefly.
            if set.len() + removed.len() > new.len() / 2 {
                Change::Set {
                    value: after.clone(),
                }
            } else {
                Change::Merge { set, removed }
            }
        }
        _ => Change::Set {
            value: after.clone(),
        },
    })
}

/// How the state `before` became `after`, channel by channel.
pub fn diff(before: &Map<String, Value>, after: &Map<String, Value>) -> Changes {
    let mut changes = Changes::new();
    for (channel, new) in after {
        let found = match before.get(channel) {
            Some(old) => change(old, new),
            None => Some(Change::Set { value: new.clone() }),
        };
        if let Some(found) = found {
            changes.insert(channel.clone(), found);
        }
    }
    for channel in before.keys() {
        if !after.contains_key(channel) {
            changes.insert(channel.clone(), Change::Remove);
        }
    }
    changes
}

/// Applies one channel's change to its value (`None`: not in the state).
pub fn apply_change(
    channel: &str,
    value: Option<&mut Value>,
    change: &Change,
) -> Result<Option<Value>, ChangeError> {
    let refuse = |message: String| ChangeError {
        channel: channel.to_string(),
        message,
    };
    let kind = |value: &Option<&mut Value>| match value {
        None => "a channel not in the state",
        Some(value) => super::kind_of(value),
    };
    match (change, value) {
        (Change::Set { value: new }, _) => Ok(Some(new.clone())),
        (Change::Remove, _) => Ok(None),
        (Change::Append { items }, Some(Value::Array(list))) => {
            list.extend(items.iter().cloned());
            Ok(None)
        }
        (Change::Concat { text }, Some(Value::String(old))) => {
            old.push_str(text);
            Ok(None)
        }
        (Change::Merge { set, removed }, Some(Value::Object(object))) => {
            for key in removed {
                object.remove(key);
            }
            for (key, value) in set {
                object.insert(key.clone(), value.clone());
            }
            Ok(None)
        }
        (Change::Append { .. }, value) => Err(refuse(format!(
            "items are appended to a list, not to {}",
            kind(&value)
        ))),
        (Change::Concat { .. }, value) => Err(refuse(format!(
            "text is added to a string, not to {}",
            kind(&value)
        ))),
        (Change::Merge { .. }, value) => Err(refuse(format!(
            "keys are merged into an object, not into {}",
            kind(&value)
        ))),
    }
}

/// Applies `changes` to `state`, in place. On an error the state may have
/// taken some of the changes.
pub fn apply(state: &mut Map<String, Value>, changes: &Changes) -> Result<(), ChangeError> {
    for (channel, change) in changes {
        let replaced = apply_change(channel, state.get_mut(channel), change)?;
        match (change, replaced) {
            (Change::Remove, _) => {
                state.remove(channel);
            }
            (_, Some(value)) => {
                state.insert(channel.clone(), value);
            }
            (_, None) => {}
        }
    }
    Ok(())
}

/// The size of `changes` as JSON text, in bytes: what storing them costs.
pub fn json_size(value: &impl Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail; a value that cannot be encoded
    // counts as what was written before it.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn each_kind_of_change_is_found_and_applies_back() {
        let before = object(json!({
            "messages": [{"role": "user", "content": "hi"}],
            "text": "Hello",
            "memory": {"a": 1, "b": 2, "c": 3, "d": 4},
            "count": 1,
            "gone": true,
            "same": [1, 2],
        }));
        let after = object(json!({
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
            "text": "Hello, world",
            "memory": {"a": 1, "b": 5, "c": 3, "d": 4},
            "count": 2,
            "new": "x",
            "same": [1, 2],
        }));
        let changes = diff(&before, &after);
        assert_eq!(
            serde_json::to_value(&changes).unwrap(),
            json!({
                "messages": {"op": "append", "items": [{"role": "assistant", "content": "yo"}]},
                "text": {"op": "concat", "text": ", world"},
                "memory": {"op": "merge", "set": {"b": 5}},
                "count": {"op": "set", "value": 2},
                "gone": {"op": "remove"},
                "new": {"op": "set", "value": "x"},
            })
        );
        let mut rebuilt = before.clone();
        apply(&mut rebuilt, &changes).unwrap();
        assert_eq!(rebuilt, after);
    }

    #[test]
    fn a_list_that_is_not_extended_is_set_whole() {
        let before = object(json!({"list": [1, 2, 3]}));
        for after in [json!({"list": [1, 9, 3, 4]}), json!({"list": [1, 2]})] {
            let after = object(after);
            let changes = diff(&before, &after);
            assert!(matches!(changes["list"], Change::Set { .. }), "{changes:?}");
            let mut rebuilt = before.clone();
            apply(&mut rebuilt, &changes).unwrap();
            assert_eq!(rebuilt, after);
        }
    }

    #[test]
    fn an_object_with_most_keys_changed_is_set_whole() {
        let before = object(json!({"o": {"a": 1, "b": 2}}));
        let after = object(json!({"o": {"a": 3, "b": 4}}));
        assert!(matches!(diff(&before, &after)["o"], Change::Set { .. }));
    }

    #[test]
    fn a_change_that_does_not_fit_its_value_is_refused_naming_the_channel() {
        let mut state = object(json!({"n": 3}));
        let changes = Changes::from([(
            "n".to_string(),
            Change::Append {
                items: vec![json!(1)],
            },
        )]);
        let error = apply(&mut state, &changes).unwrap_err();
        assert_eq!(error.channel, "n");
        assert!(error.to_string().contains("not to a number"), "{error}");
        let missing = Changes::from([("absent".to_string(), Change::Concat { text: "x".into() })]);
        let error = apply(&mut state, &missing).unwrap_err();
        assert!(error.to_string().contains("not in the state"), "{error}");
    }

    #[test]
    fn the_size_counts_the_json_text() {
        let value = json!({"a": [1, 2], "b": "x"});
        assert_eq!(
            json_size(&value),
            serde_json::to_string(&value).unwrap().len()
        );
    }
}
