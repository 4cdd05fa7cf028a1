//! Reducers: how an update combines with a channel's current value.

use serde_json::Value;

use crate::format::{ChannelType, Reducer};

/// Why an update could not be applied to a channel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("channel `{channel}` ({ty:?}, {reducer:?}): {message}")]
pub struct ReduceError {
    pub channel: String,
    pub ty: ChannelType,
    pub reducer: Reducer,
    pub message: String,
}

/// Whether `reducer` makes sense for a channel of type `ty`.
pub fn fits(reducer: Reducer, ty: ChannelType) -> bool {
    match reducer {
        Reducer::Replace => true,
        Reducer::Append => matches!(ty, ChannelType::List | ChannelType::Messages),
        Reducer::Merge => matches!(ty, ChannelType::Object),
        Reducer::AddMessages => matches!(ty, ChannelType::Messages),
        Reducer::Sum => matches!(ty, ChannelType::Number | ChannelType::Integer),
    }
}

/// The empty value of a type: what a channel holds before any update.
pub(crate) fn empty(ty: ChannelType) -> Value {
    match ty {
        ChannelType::Any => Value::Null,
        ChannelType::String => Value::String(String::new()),
        ChannelType::Number | ChannelType::Integer => Value::from(0),
        ChannelType::Boolean => Value::Bool(false),
        ChannelType::List | ChannelType::Messages => Value::Array(Vec::new()),
        ChannelType::Object => Value::Object(serde_json::Map::new()),
    }
}

/// Whether `value` is of type `ty` (`null` fits any type: it clears).
pub fn is_of_type(value: &Value, ty: ChannelType) -> bool {
    match (ty, value) {
        (_, Value::Null) | (ChannelType::Any, _) => true,
        (ChannelType::String, Value::String(_)) => true,
        (ChannelType::Number, Value::Number(_)) => true,
        (ChannelType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (ChannelType::Boolean, Value::Bool(_)) => true,
        (ChannelType::List, Value::Array(_)) => true,
        (ChannelType::Object, Value::Object(_)) => true,
        (ChannelType::Messages, Value::Array(items)) => items.iter().all(is_message),
        _ => false,
    }
}

fn is_message(value: &Value) -> bool {
    value.get("role").is_some_and(Value::is_string)
}

/// Combines `update` into `current`. `message_id` names the n-th message
/// of this update that arrived without an id, so ids are deterministic.
pub fn reduce(
    channel: &str,
    ty: ChannelType,
    reducer: Reducer,
    current: &mut Value,
    update: Value,
    message_id: &dyn Fn(usize) -> String,
) -> Result<(), ReduceError> {
    let fail = |message: String| ReduceError {
        channel: channel.to_string(),
        ty,
        reducer,
        message,
    };
    match reducer {
        Reducer::Replace => {
            if !is_of_type(&update, ty) {
                return Err(fail(format!(
                    "expected {}, got {}",
                    describe(ty),
                    kind(&update)
                )));
            }
            *current = update;
        }
        Reducer::Append => {
            let items = match update {
                Value::Array(items) => items,
                item => vec![item],
            };
            if ty == ChannelType::Messages && !items.iter().all(is_message) {
                return Err(fail("a message needs a string `role`".into()));
            }
            as_list(current).extend(items);
        }
        Reducer::Merge => {
            let Value::Object(fields) = update else {
                return Err(fail(format!(
                    "expected an object to merge, got {}",
                    kind(&update)
                )));
            };
            if !current.is_object() {
                *current = Value::Object(serde_json::Map::new());
            }
            if let Value::Object(map) = current {
                map.extend(fields);
            }
        }
        Reducer::AddMessages => {
            let messages = match update {
                Value::Array(items) => items,
                message => vec![message],
            };
            let list = as_list(current);
            let mut fresh = 0;
            for mut message in messages {
                let Value::Object(fields) = &mut message else {
                    return Err(fail(format!(
                        "expected a message object, got {}",
                        kind(&message)
                    )));
                };
                // `{"id": ..., "remove": true}` removes that message.
                if fields.get("remove") == Some(&Value::Bool(true)) {
                    if let Some(id) = fields.get("id").and_then(Value::as_str) {
                        list.retain(|old| old.get("id").and_then(Value::as_str) != Some(id));
                    }
                    continue;
                }
                if !fields.get("role").is_some_and(Value::is_string) {
                    return Err(fail("a message needs a string `role`".into()));
                }
                let id = match fields.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_string(),
                    None => {
                        let id = message_id(fresh);
                        fresh += 1;
                        fields.insert("id".into(), Value::String(id.clone()));
                        id
                    }
                };
                let existing = list
                    .iter_mut()
                    .find(|old| old.get("id").and_then(Value::as_str) == Some(id.as_str()));
                match existing {
                    Some(old) => *old = message,
                    None => list.push(message),
                }
            }
        }
        Reducer::Sum => {
            let Value::Number(delta) = &update else {
                return Err(fail(format!(
                    "expected a number to add, got {}",
                    kind(&update)
                )));
            };
            let sum = match (current.as_i64(), delta.as_i64()) {
                (Some(a), Some(b)) => a.checked_add(b).map(Value::from),
                _ => None,
            };
            let sum = match sum {
                Some(sum) => sum,
                None if ty == ChannelType::Integer => {
                    return Err(fail("the sum is not a whole number in range".into()));
                }
                None => {
                    let total = current.as_f64().unwrap_or(0.0) + delta.as_f64().unwrap_or(0.0);
                    serde_json::Number::from_f64(total)
                        .map(Value::Number)
                        .ok_or_else(|| fail("the sum is not a finite number".into()))?
                }
            };
            *current = sum;
        }
    }
    Ok(())
}

fn as_list(value: &mut Value) -> &mut Vec<Value> {
    if !value.is_array() {
        *value = Value::Array(Vec::new());
    }
    match value {
        Value::Array(items) => items,
        _ => unreachable!("just made an array"),
    }
}

fn describe(ty: ChannelType) -> &'static str {
    match ty {
        ChannelType::Any => "any value",
        ChannelType::String => "a string",
        ChannelType::Number => "a number",
        ChannelType::Integer => "a whole number",
        ChannelType::Boolean => "a boolean",
        ChannelType::List => "a list",
        ChannelType::Object => "an object",
        ChannelType::Messages => "a list of messages",
    }
}

pub(crate) use crate::schema::kind;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(
        ty: ChannelType,
        reducer: Reducer,
        current: Value,
        update: Value,
    ) -> Result<Value, ReduceError> {
        let mut current = current;
        reduce("c", ty, reducer, &mut current, update, &|n| {
            format!("new-{n}")
        })?;
        Ok(current)
    }

    #[test]
    fn replace_checks_the_type() {
        assert_eq!(
            apply(
                ChannelType::String,
                Reducer::Replace,
                json!("a"),
                json!("b")
            )
            .unwrap(),
            json!("b")
        );
        let error =
            apply(ChannelType::Integer, Reducer::Replace, json!(1), json!(1.5)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("expected a whole number, got a number"),
            "{error}"
        );
    }

    #[test]
    fn append_extends_with_lists_and_pushes_items() {
        let list = apply(
            ChannelType::List,
            Reducer::Append,
            json!([1]),
            json!([2, 3]),
        )
        .unwrap();
        assert_eq!(
            apply(ChannelType::List, Reducer::Append, list, json!(4)).unwrap(),
            json!([1, 2, 3, 4])
        );
    }

    #[test]
    fn merge_is_shallow() {
        let merged = apply(
            ChannelType::Object,
            Reducer::Merge,
            json!({"a": 1, "b": {"x": 1}}),
            json!({"b": {"y": 2}}),
        );
        assert_eq!(merged.unwrap(), json!({"a": 1, "b": {"y": 2}}));
        assert!(apply(ChannelType::Object, Reducer::Merge, json!({}), json!(3)).is_err());
    }

    #[test]
    fn add_messages_replaces_by_id_and_names_new_ones() {
        let current = json!([{"id": "a", "role": "user", "content": "hi"}]);
        let update = json!([
            {"id": "a", "role": "user", "content": "hello"},
            {"role": "assistant", "content": "hey"}
        ]);
        let messages = apply(ChannelType::Messages, Reducer::AddMessages, current, update).unwrap();
        assert_eq!(
            messages,
            json!([
                {"id": "a", "role": "user", "content": "hello"},
                {"id": "new-0", "role": "assistant", "content": "hey"}
            ])
        );
        assert!(
            apply(
                ChannelType::Messages,
                Reducer::AddMessages,
                json!([]),
                json!({"content": "no role"})
            )
            .is_err()
        );
    }

    #[test]
    fn sum_stays_exact_for_integers() {
        assert_eq!(
            apply(ChannelType::Integer, Reducer::Sum, json!(2), json!(3)).unwrap(),
            json!(5)
        );
        assert_eq!(
            apply(ChannelType::Number, Reducer::Sum, json!(0.5), json!(1)).unwrap(),
            json!(1.5)
        );
        assert!(
            apply(
                ChannelType::Integer,
                Reducer::Sum,
                json!(i64::MAX),
                json!(1)
            )
            .is_err()
        );
        assert!(apply(ChannelType::Number, Reducer::Sum, json!(1), json!("2")).is_err());
    }

    #[test]
    fn reducers_fit_their_types() {
        assert!(fits(Reducer::Sum, ChannelType::Integer));
        assert!(!fits(Reducer::Sum, ChannelType::String));
        assert!(!fits(Reducer::AddMessages, ChannelType::List));
        assert!(fits(Reducer::Replace, ChannelType::Messages));
    }
}
