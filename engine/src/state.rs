//! A run's state: the values of the graph's channels, the checks that an
//! update fits its channel's type, and the reducers that combine updates.

mod bounds;
pub mod changes;
mod reducer;
mod values;

pub use bounds::{
    CUT_MARKER, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, MAX_DEPTH_CEILING, ValueLimitError,
    ValueLimits, cut_deep_json, drop_flat, from_stored_json,
};
pub(crate) use reducer::kind as kind_of;

/// Whether `value` is a list of messages (each an object with a text
/// `role`; an empty list is one): what a `messages` channel holds. The one
/// definition the engine, the server and the browser use.
pub fn is_message_list(value: &Value) -> bool {
    is_of_type(value, crate::format::ChannelType::Messages) && value.is_array()
}
pub use reducer::{ReduceError, fits, is_of_type, reduce};
pub use values::{ChannelIdx, State, StateLayout};

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::format::Channel;

/// Why an edit of a run's state (a fork) does not fit the graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot set `{channel}`: {message}")]
pub struct EditError {
    pub channel: String,
    pub message: String,
}

/// Checks that each edited channel exists and the value fits its type,
/// the same check in the engine, the server and the editor.
pub fn check_edits(
    channels: &BTreeMap<String, Channel>,
    edits: &Map<String, Value>,
) -> Result<(), EditError> {
    for (name, value) in edits {
        let Some(channel) = channels.get(name) else {
            return Err(EditError {
                channel: name.clone(),
                message: "it is not a channel of this graph's state".into(),
            });
        };
        fits_channel(value, channel).map_err(|message| EditError {
            channel: name.clone(),
            message,
        })?;
    }
    Ok(())
}

/// Whether `value` may be `channel`'s whole value: of its type, and
/// fitting its schema when it has one (`null` always fits: it clears).
/// Says why not.
pub fn fits_channel(value: &Value, channel: &Channel) -> Result<(), String> {
    if !is_of_type(value, channel.ty) {
        return Err(format!(
            "the value is not of the channel's type `{}`",
            kind_of_type(channel.ty)
        ));
    }
    if value.is_null() {
        return Ok(());
    }
    match crate::schema::ValueSchema::of_channel(channel) {
        Some(schema) => schema
            .check(value)
            .map_err(|misfit| format!("the value does not fit the channel's schema: {misfit}")),
        None => Ok(()),
    }
}

/// A person's answer (typed as text in a form, or on a command line) as a
/// value of its channel's type: `"true"`/`"yes"` and `"false"`/`"no"` into
/// a boolean channel, digits into a number or an integer one. Any other
/// value, or channel type, is kept as it is (the channel's reducer checks
/// it). Text that cannot be read as the type is refused, saying why. The
/// engine's `ask` node and the server's resume both use this, so a form,
/// the API and `heddle` read an answer the same way.
pub fn coerce_answer(ty: crate::format::ChannelType, value: Value) -> Result<Value, String> {
    use crate::format::ChannelType;
    let Value::String(text) = &value else {
        return Ok(value);
    };
    let trimmed = text.trim();
    match ty {
        ChannelType::Boolean => match trimmed.to_lowercase().as_str() {
            "true" | "yes" | "y" => Ok(Value::Bool(true)),
            "false" | "no" | "n" => Ok(Value::Bool(false)),
            _ => Err(format!("`{trimmed}` is not true or false")),
        },
        ChannelType::Integer => trimmed
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{trimmed}` is not a whole number")),
        ChannelType::Number => trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{trimmed}` is not a number")),
        _ => Ok(value),
    }
}

/// A run's input for a channel, as people write it: a string for a
/// `messages` channel is one user message, and one message object is a
/// list of one. Everything else is left as it is (the channel's reducer
/// checks it). The engine applies this to every run's input, so the
/// browser, the API and `heddle run` take the same input.
pub fn coerce_input(ty: crate::format::ChannelType, value: Value) -> Value {
    match (ty, value) {
        (crate::format::ChannelType::Messages, Value::String(text)) => {
            serde_json::json!([{"role": "user", "content": text}])
        }
        (crate::format::ChannelType::Messages, Value::Object(message))
            if message.contains_key("role") =>
        {
            Value::Array(vec![Value::Object(message)])
        }
        (_, value) => value,
    }
}

fn kind_of_type(ty: crate::format::ChannelType) -> String {
    serde_json::to_value(ty)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{ty:?}"))
}

/// Checks a run's input before the run starts: every channel it names
/// exists, and each value is one that channel's reducer accepts (the very
/// check the run would make at its first step). Every problem is returned,
/// in channel order, so a caller can name them all at once.
pub fn check_input(
    channels: &BTreeMap<String, Channel>,
    input: &Map<String, Value>,
) -> Vec<EditError> {
    let mut problems = Vec::new();
    for (name, value) in input {
        let Some(channel) = channels.get(name) else {
            problems.push(EditError {
                channel: name.clone(),
                message: "it is not a channel of this graph's state".into(),
            });
            continue;
        };
        // As the run starts: the default, else the type's empty value (a
        // sum channel given a number by its input starts from 0, not null).
        let mut current = channel
            .default
            .clone()
            .unwrap_or_else(|| reducer::empty(channel.ty));
        let update = coerce_input(channel.ty, value.clone());
        let schema = crate::schema::ValueSchema::of_channel(channel);
        if let Err(error) = values::apply_checked(
            name,
            channel.ty,
            channel.reducer,
            schema.as_ref(),
            &mut current,
            update,
            &|n| format!("check-{n}"),
        ) {
            problems.push(EditError {
                channel: name.clone(),
                message: error.message,
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::{check_input, coerce_answer};
    use crate::format::ChannelType;
    use serde_json::json;

    #[test]
    fn input_to_a_sum_channel_is_checked_from_its_starting_value() {
        let channels = serde_json::from_value(json!({
            "count": {"type": "integer", "reducer": "sum"},
            "total": {"type": "number", "reducer": "sum", "default": 0.5},
        }))
        .expect("channels");
        let fine = json!({"count": 1, "total": 2});
        assert!(check_input(&channels, fine.as_object().expect("an object")).is_empty());
        let bad = json!({"count": 1.5});
        let problems = check_input(&channels, bad.as_object().expect("an object"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].channel, "count");
    }

    #[test]
    fn a_string_or_one_message_into_a_messages_channel_is_a_list_of_messages() {
        assert_eq!(
            super::coerce_input(ChannelType::Messages, json!("hi")),
            json!([{"role": "user", "content": "hi"}])
        );
        assert_eq!(
            super::coerce_input(
                ChannelType::Messages,
                json!({"role": "system", "content": "x"})
            ),
            json!([{"role": "system", "content": "x"}])
        );
        let list = json!([{"role": "user", "content": "a"}]);
        assert_eq!(
            super::coerce_input(ChannelType::Messages, list.clone()),
            list
        );
        assert_eq!(
            super::coerce_input(ChannelType::String, json!("hi")),
            json!("hi")
        );
        assert_eq!(
            super::coerce_input(ChannelType::Messages, json!({"content": "no role"})),
            json!({"content": "no role"})
        );
    }

    #[test]
    fn answers_typed_as_text_take_their_channels_type() {
        assert_eq!(
            coerce_answer(ChannelType::Boolean, json!(" True ")),
            Ok(json!(true))
        );
        assert_eq!(
            coerce_answer(ChannelType::Boolean, json!("no")),
            Ok(json!(false))
        );
        assert_eq!(
            coerce_answer(ChannelType::Boolean, json!(false)),
            Ok(json!(false))
        );
        assert_eq!(
            coerce_answer(ChannelType::Boolean, json!("maybe")),
            Err("`maybe` is not true or false".to_string())
        );
        assert_eq!(
            coerce_answer(ChannelType::Integer, json!("42")),
            Ok(json!(42))
        );
        assert!(coerce_answer(ChannelType::Integer, json!("4.5")).is_err());
        assert_eq!(
            coerce_answer(ChannelType::Number, json!("4.5")),
            Ok(json!(4.5))
        );
        assert!(coerce_answer(ChannelType::Number, json!("NaN")).is_err());
        assert_eq!(
            coerce_answer(ChannelType::String, json!("42")),
            Ok(json!("42"))
        );
        assert_eq!(
            coerce_answer(ChannelType::Any, json!("true")),
            Ok(json!("true"))
        );
    }
}
