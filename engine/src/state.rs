//! A run's state: the values of the graph's channels, the checks that an
//! update fits its channel's type, and the reducers that combine updates.

mod reducer;
mod values;

pub use reducer::{ReduceError, fits, reduce};
pub(crate) use reducer::{is_of_type, kind as kind_of};
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
        if !is_of_type(value, channel.ty) {
            return Err(EditError {
                channel: name.clone(),
                message: format!(
                    "the value is not of the channel's type `{}`",
                    kind_of_type(channel.ty)
                ),
            });
        }
    }
    Ok(())
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
        let mut current = channel.default.clone().unwrap_or(Value::Null);
        if let Err(error) = reduce(
            name,
            channel.ty,
            channel.reducer,
            &mut current,
            value.clone(),
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
