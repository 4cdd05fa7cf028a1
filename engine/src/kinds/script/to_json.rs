//! A script's result as JSON, taken apart without recursion. A script can
//! build a map nested far deeper than a thread's stack in a few lines;
//! `rhai::serde::from_dynamic` recurses over it, and so does dropping it.
//! Here the value is consumed level by level with a stack of our own, the
//! run's [`ValueLimits`] are checked on the way, and whatever is refused
//! is dismantled the same flat way.

use rhai::{Array, Dynamic, Map as RhaiMap};
use serde_json::{Map, Number, Value};

use crate::state::ValueLimits;

/// A container being rebuilt as JSON, with what is left of the script's.
enum Building {
    Array {
        items: Vec<Value>,
        rest: std::vec::IntoIter<Dynamic>,
    },
    Object {
        fields: Map<String, Value>,
        key: String,
        rest: <RhaiMap as IntoIterator>::IntoIter,
    },
}

impl Building {
    /// The next child still to convert, and (for a map) its key.
    fn next_child(&mut self) -> Option<Dynamic> {
        match self {
            Building::Array { rest, .. } => rest.next(),
            Building::Object { key, rest, .. } => rest.next().map(|(name, value)| {
                *key = name.to_string();
                value
            }),
        }
    }

    fn push(&mut self, value: Value) {
        match self {
            Building::Array { items, .. } => items.push(value),
            Building::Object { fields, key, .. } => {
                fields.insert(std::mem::take(key), value);
            }
        }
    }

    fn finish(self) -> Value {
        match self {
            Building::Array { items, .. } => Value::Array(items),
            Building::Object { fields, .. } => Value::Object(fields),
        }
    }

    /// What is left of the script's value, to dismantle.
    fn into_rest(self) -> Vec<Dynamic> {
        match self {
            Building::Array { rest, .. } => rest.collect(),
            Building::Object { rest, .. } => rest.map(|(_, value)| value).collect(),
        }
    }
}

/// What one value of the script's is: a JSON scalar, or a container whose
/// children are still to convert.
enum Converted {
    Scalar(Value),
    Container(Building),
}

/// `value` as JSON within `limits`, or why not.
pub(crate) fn to_json(value: Dynamic, limits: &ValueLimits) -> Result<Value, String> {
    let mut stack: Vec<Building> = Vec::new();
    let mut next = Some(value);
    let mut bytes = 0usize;
    let failure = loop {
        let Some(value) = next.take() else {
            let Some(top) = stack.last_mut() else {
                break None;
            };
            match top.next_child() {
                Some(child) => next = Some(child),
                None => {
                    let done = stack.pop().map(Building::finish).unwrap_or(Value::Null);
                    match stack.last_mut() {
                        Some(parent) => parent.push(done),
                        None => return Ok(done),
                    }
                }
            }
            continue;
        };
        let converted = match convert(value) {
            Ok(converted) => converted,
            Err(error) => break Some(error),
        };
        bytes = bytes.saturating_add(approximate_bytes(&converted));
        if bytes > limits.max_bytes {
            break Some(format!(
                "the script's result is larger than {} bytes of JSON (the limit)",
                limits.max_bytes
            ));
        }
        match converted {
            Converted::Scalar(scalar) => match stack.last_mut() {
                Some(parent) => parent.push(scalar),
                None => return Ok(scalar),
            },
            Converted::Container(building) => {
                if stack.len() >= limits.max_depth {
                    stack.push(building);
                    break Some(format!(
                        "the script's result nests deeper than {} levels",
                        limits.max_depth
                    ));
                }
                stack.push(building);
            }
        }
    };
    // Refused: take the rest of the script's value apart without recursion.
    let mut rest: Vec<Dynamic> = next.into_iter().collect();
    for building in stack {
        rest.extend(building.into_rest());
    }
    dismantle(rest);
    Err(failure.unwrap_or_else(|| "the script's result could not be read".into()))
}

fn convert(value: Dynamic) -> Result<Converted, String> {
    let value = value.flatten();
    if value.is_unit() {
        return Ok(Converted::Scalar(Value::Null));
    }
    if let Ok(flag) = value.as_bool() {
        return Ok(Converted::Scalar(Value::Bool(flag)));
    }
    if let Ok(int) = value.as_int() {
        return Ok(Converted::Scalar(Value::from(int)));
    }
    if let Ok(float) = value.as_float() {
        return Number::from_f64(float)
            .map(|number| Converted::Scalar(Value::Number(number)))
            .ok_or_else(|| format!("the script's result holds {float}, which JSON cannot hold"));
    }
    if let Ok(c) = value.as_char() {
        return Ok(Converted::Scalar(Value::String(c.to_string())));
    }
    if value.is_string() {
        return value
            .into_immutable_string()
            .map(|text| Converted::Scalar(Value::String(text.to_string())))
            .map_err(|kind| format!("the script's result holds a {kind}"));
    }
    if value.is_blob() {
        return value
            .into_blob()
            .map(|bytes| {
                Converted::Scalar(Value::Array(bytes.into_iter().map(Value::from).collect()))
            })
            .map_err(|kind| format!("the script's result holds a {kind}"));
    }
    if value.is_array() {
        return value
            .into_array()
            .map(|items: Array| {
                Converted::Container(Building::Array {
                    items: Vec::with_capacity(items.len()),
                    rest: items.into_iter(),
                })
            })
            .map_err(|kind| format!("the script's result holds a {kind}"));
    }
    if value.is_map() {
        let kind = value.type_name();
        return value
            .try_cast::<RhaiMap>()
            .map(|fields| {
                Converted::Container(Building::Object {
                    fields: Map::new(),
                    key: String::new(),
                    rest: fields.into_iter(),
                })
            })
            .ok_or_else(|| format!("the script's result holds a {kind}"));
    }
    let kind = value.type_name();
    dismantle(vec![value]);
    Err(format!(
        "the script's result holds a {kind}, which is not JSON"
    ))
}

/// Bytes of JSON a converted value adds, not counting its children.
fn approximate_bytes(converted: &Converted) -> usize {
    match converted {
        Converted::Scalar(Value::String(text)) => text.len() + 2,
        Converted::Scalar(Value::Array(items)) => 2 + items.len() * 4,
        Converted::Scalar(_) => 8,
        Converted::Container(Building::Array { rest, .. }) => 2 + rest.len(),
        Converted::Container(Building::Object { rest, .. }) => 2 + rest.len() * 4,
    }
}

/// Drops script values of any depth without recursion.
pub(crate) fn dismantle(mut pending: Vec<Dynamic>) {
    while let Some(value) = pending.pop() {
        let value = value.flatten();
        if value.is_array() {
            if let Ok(items) = value.into_array() {
                pending.extend(items);
            }
        } else if value.is_map()
            && let Some(fields) = value.try_cast::<RhaiMap>()
        {
            pending.extend(fields.into_values());
        }
    }
}

#[cfg(test)]
mod tests {
    use rhai::{Array, Dynamic, Map as RhaiMap};
    use serde_json::json;

    use super::to_json;
    use crate::state::ValueLimits;

    fn nested_map(depth: usize) -> Dynamic {
        let mut value = Dynamic::from(1_i64);
        for _ in 0..depth {
            let mut map = RhaiMap::new();
            map.insert("a".into(), value);
            value = Dynamic::from_map(map);
        }
        value
    }

    #[test]
    fn scalars_lists_and_maps_convert_as_serde_would() {
        let mut map = RhaiMap::new();
        map.insert("n".into(), Dynamic::from(2_i64));
        map.insert("f".into(), Dynamic::from(1.5_f64));
        map.insert("s".into(), Dynamic::from("hi"));
        map.insert("b".into(), Dynamic::from(true));
        map.insert("u".into(), Dynamic::UNIT);
        map.insert("c".into(), Dynamic::from('x'));
        let list: Array = vec![Dynamic::from(1_i64), Dynamic::from_map(RhaiMap::new())];
        map.insert("l".into(), Dynamic::from_array(list));
        let value = to_json(Dynamic::from_map(map), &ValueLimits::default());
        assert_eq!(
            value,
            Ok(json!({"n": 2, "f": 1.5, "s": "hi", "b": true, "u": null, "c": "x", "l": [1, {}]}))
        );
    }

    #[test]
    fn a_result_deeper_than_any_stack_is_refused_and_dropped_flat() {
        // 1,000,000 levels: converting or dropping it recursively would
        // overflow this test thread's stack (and abort the process).
        let deep = nested_map(1_000_000);
        let refused = to_json(deep, &ValueLimits::default());
        assert_eq!(
            refused,
            Err("the script's result nests deeper than 64 levels".into())
        );
        assert!(to_json(nested_map(64), &ValueLimits::default()).is_ok());
        assert!(to_json(nested_map(65), &ValueLimits::default()).is_err());
    }

    #[test]
    fn a_result_too_large_is_refused() {
        let big: Array = (0..3000).map(|_| Dynamic::from("x".repeat(10))).collect();
        let refused = to_json(Dynamic::from_array(big), &ValueLimits::new(64, 1 << 14));
        assert!(refused.is_err_and(|e| e.contains("larger than 16384 bytes")));
    }
}
