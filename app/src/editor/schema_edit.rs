//! The edits the channel schema form makes, as plain functions over a
//! channel's schema JSON (no signals, so they are tested on the host).
//! Every edit starts from the schema the channel's type implies when the
//! channel has none yet, and a schema edited back to just that is dropped,
//! so a channel nobody shaped keeps no schema.

use heddle_engine::format::{Channel, ChannelType};
use heddle_engine::schema::ValueSchema;
use serde_json::{Map, Value, json};

/// The types a property or a list's items may have in the form, with the
/// words it shows.
pub const SHAPES: [(&str, &str); 7] = [
    ("", "anything"),
    ("string", "text"),
    ("number", "number"),
    ("integer", "whole number"),
    ("boolean", "yes or no"),
    ("array", "list"),
    ("object", "object"),
];

/// Which part of a schema a field edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// The channel's value itself.
    Root,
    /// Each item of the channel's list.
    Items,
}

/// The schema a channel's type alone says (text is `{"type": "string"}`
/// here, so allowed values can be added to it).
fn implied(ty: ChannelType) -> Option<Value> {
    ValueSchema::implied_by(ty)
        .or_else(|| (ty == ChannelType::String).then(|| json!({"type": "string"})))
}

/// The schema the form edits: the channel's own, or the one its type
/// implies.
pub fn current(channel: &Channel) -> Value {
    channel
        .schema
        .clone()
        .or_else(|| implied(channel.ty))
        .unwrap_or_else(|| json!({}))
}

/// Applies `edit` to the channel's schema, and keeps it only when it says
/// more than the channel's type does.
pub fn edit(channel: &mut Channel, edit: impl FnOnce(&mut Map<String, Value>)) {
    let mut schema = current(channel);
    if let Value::Object(fields) = &mut schema {
        edit(fields);
    }
    let says_more = Some(&schema) != implied(channel.ty).as_ref() && schema != json!({});
    channel.schema = says_more.then_some(schema);
}

/// The object `part` names inside `schema` (made when missing).
pub fn part<'a>(schema: &'a mut Map<String, Value>, part: &Part) -> &'a mut Map<String, Value> {
    match part {
        Part::Root => schema,
        Part::Items => object_entry(schema, "items"),
    }
}

/// The object under `key` (made, or made an object, when it is not one).
fn object_entry<'a>(schema: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = schema
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    match entry {
        Value::Object(fields) => fields,
        _ => unreachable!("just made an object"),
    }
}

/// The schema `part` names, read (for drawing the form).
pub fn read<'a>(schema: &'a Value, part: &Part) -> Option<&'a Map<String, Value>> {
    match part {
        Part::Root => schema.as_object(),
        Part::Items => schema.get("items").and_then(Value::as_object),
    }
}

/// Sets a keyword to a number, or removes it when `text` is empty. Says
/// why not when `text` is not a number.
pub fn set_number(
    schema: &mut Map<String, Value>,
    key: &str,
    text: &str,
    whole: bool,
) -> Result<(), String> {
    let text = text.trim();
    if text.is_empty() {
        schema.remove(key);
        return Ok(());
    }
    let value = if whole {
        text.parse::<u64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not a whole number"))?
    } else {
        text.parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .and_then(|n| {
                if n.fract() == 0.0 && n.abs() < 1e15 {
                    Some(Value::from(n as i64))
                } else {
                    serde_json::Number::from_f64(n).map(Value::Number)
                }
            })
            .ok_or_else(|| format!("`{text}` is not a number"))?
    };
    schema.insert(key.into(), value);
    Ok(())
}

/// Sets the type the form's shape names (`""`: anything; `array`: a list
/// of text), keeping the keywords that still apply.
pub fn set_shape(schema: &mut Map<String, Value>, shape: &str) {
    let keep: &[&str] = match shape {
        "number" | "integer" => &["minimum", "maximum"],
        "array" => &["items", "minItems", "maxItems"],
        "object" => &["properties", "required"],
        "string" => &["enum"],
        _ => &[],
    };
    schema.retain(|key, _| key == "description" || keep.contains(&key.as_str()));
    if shape.is_empty() {
        schema.remove("type");
        return;
    }
    schema.insert("type".into(), Value::String(shape.into()));
    if shape == "array" && !schema.contains_key("items") {
        schema.insert("items".into(), json!({"type": "string"}));
    }
}

/// The shape a schema has, as the form names it.
pub fn shape_of(schema: &Map<String, Value>) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The allowed values from comma-separated text (none: any text).
pub fn set_allowed(schema: &mut Map<String, Value>, text: &str) {
    let values: Vec<Value> = text
        .split(',')
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(|value| Value::String(value.into()))
        .collect();
    if values.is_empty() {
        schema.remove("enum");
    } else {
        schema.insert("enum".into(), Value::Array(values));
    }
}

/// The allowed values as the form shows them.
pub fn allowed_text(schema: &Map<String, Value>) -> String {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .map(|value| match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The properties, in order, each with its shape, whether it is required
/// and its description.
pub fn properties(schema: &Map<String, Value>) -> Vec<(String, String, bool, String)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| {
                    let shape = property.get("type").and_then(Value::as_str).unwrap_or("");
                    let description = property
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    (
                        name.clone(),
                        shape.to_string(),
                        required.contains(&name.as_str()),
                        description.to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn properties_mut(schema: &mut Map<String, Value>) -> &mut Map<String, Value> {
    // Made an object when it says nothing else; `["object", "null"]` stays.
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    object_entry(schema, "properties")
}

fn required_mut(schema: &mut Map<String, Value>) -> &mut Vec<Value> {
    let required = schema
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !required.is_array() {
        *required = Value::Array(Vec::new());
    }
    match required {
        Value::Array(names) => names,
        _ => unreachable!("just made a list"),
    }
}

/// Adds a required text property with a fresh name; returns the name.
pub fn add_property(schema: &mut Map<String, Value>) -> String {
    let properties = properties_mut(schema);
    let name = (1..)
        .map(|n| {
            if n == 1 {
                "field".to_string()
            } else {
                format!("field_{n}")
            }
        })
        .find(|name| !properties.contains_key(name))
        .unwrap_or_default();
    properties.insert(name.clone(), json!({"type": "string"}));
    required_mut(schema).push(Value::String(name.clone()));
    name
}

/// Renames a property, keeping its place, schema and whether it is
/// required. Refuses an empty name or one taken.
pub fn rename_property(
    schema: &mut Map<String, Value>,
    from: &str,
    to: &str,
) -> Result<(), String> {
    let to = to.trim();
    if to.is_empty() {
        return Err("a property needs a name".into());
    }
    if to == from {
        return Ok(());
    }
    let properties = properties_mut(schema);
    if properties.contains_key(to) {
        return Err(format!("there is already a property `{to}`"));
    }
    // Rebuilt in order: the map keeps keys sorted or as inserted, and
    // either way the renamed one takes the old one's place.
    let renamed: Map<String, Value> = std::mem::take(properties)
        .into_iter()
        .map(|(name, value)| {
            if name == from {
                (to.to_string(), value)
            } else {
                (name, value)
            }
        })
        .collect();
    *properties = renamed;
    for name in required_mut(schema).iter_mut() {
        if name.as_str() == Some(from) {
            *name = Value::String(to.to_string());
        }
    }
    Ok(())
}

/// Changes one property: its shape, whether it is required, its
/// description.
pub fn set_property(
    schema: &mut Map<String, Value>,
    name: &str,
    change: impl FnOnce(&mut Map<String, Value>),
) {
    if let Some(Value::Object(property)) = properties_mut(schema).get_mut(name) {
        change(property);
    }
}

/// Whether a property must be there.
pub fn set_required(schema: &mut Map<String, Value>, name: &str, required: bool) {
    let names = required_mut(schema);
    names.retain(|n| n.as_str() != Some(name));
    if required {
        names.push(Value::String(name.to_string()));
    }
    if names.is_empty() {
        schema.remove("required");
    }
}

/// Removes a property.
pub fn remove_property(schema: &mut Map<String, Value>, name: &str) {
    properties_mut(schema).remove(name);
    set_required(schema, name, false);
}

/// Whether the channel's type can take a schema the form builds.
pub fn has_form(ty: ChannelType) -> bool {
    matches!(
        ty,
        ChannelType::String
            | ChannelType::Number
            | ChannelType::Integer
            | ChannelType::List
            | ChannelType::Object
    )
}

#[cfg(test)]
mod tests {
    use heddle_engine::format::ChannelType;
    use heddle_engine::schema::ValueSchema;
    use heddle_engine::validate::new_channel;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_list_of_topics_is_built_field_by_field_and_is_a_valid_schema() {
        let mut channel = new_channel(ChannelType::List);
        assert_eq!(channel.schema, None);
        edit(&mut channel, |schema| {
            set_shape(part(schema, &Part::Items), "string")
        });
        edit(&mut channel, |schema| {
            set_number(schema, "minItems", "2", true).unwrap()
        });
        edit(&mut channel, |schema| {
            set_number(schema, "maxItems", "4", true).unwrap()
        });
        let schema = channel.schema.clone().unwrap();
        assert_eq!(
            schema,
            json!({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4})
        );
        assert!(ValueSchema::parse(&schema).is_ok());
        // Emptied again, the schema says no more than the type: dropped.
        edit(&mut channel, |schema| {
            set_number(schema, "minItems", "", true).unwrap();
            set_number(schema, "maxItems", " ", true).unwrap();
            schema.remove("items");
        });
        assert_eq!(channel.schema, None);
    }

    #[test]
    fn an_order_record_is_built_with_properties() {
        let mut channel = new_channel(ChannelType::Object);
        let mut name = String::new();
        edit(&mut channel, |schema| name = add_property(schema));
        assert_eq!(name, "field");
        edit(&mut channel, |schema| {
            rename_property(schema, "field", "customer").unwrap()
        });
        edit(&mut channel, |schema| {
            let total = add_property(schema);
            rename_property(schema, &total, "total").unwrap();
            set_property(schema, "total", |property| set_shape(property, "number"));
            set_required(schema, "total", false);
        });
        let schema = channel.schema.clone().unwrap();
        assert_eq!(
            schema,
            json!({"type": "object",
                   "properties": {"customer": {"type": "string"}, "total": {"type": "number"}},
                   "required": ["customer"]})
        );
        assert!(ValueSchema::parse(&schema).is_ok());
        edit(&mut channel, |schema| {
            assert_eq!(
                rename_property(schema, "total", "customer"),
                Err("there is already a property `customer`".into())
            );
            remove_property(schema, "customer");
        });
        assert_eq!(
            channel.schema,
            Some(json!({"type": "object", "properties": {"total": {"type": "number"}}}))
        );
    }

    #[test]
    fn allowed_values_and_bounds_read_back_as_typed() {
        let mut channel = new_channel(ChannelType::String);
        edit(&mut channel, |schema| {
            set_allowed(schema, "low, high ,, urgent")
        });
        let schema = channel.schema.clone().unwrap();
        assert_eq!(
            schema,
            json!({"type": "string", "enum": ["low", "high", "urgent"]})
        );
        assert_eq!(
            allowed_text(schema.as_object().unwrap()),
            "low, high, urgent"
        );

        let mut score = new_channel(ChannelType::Number);
        edit(&mut score, |schema| {
            set_number(schema, "minimum", "0", false).unwrap();
            set_number(schema, "maximum", "0.5", false).unwrap();
            assert_eq!(
                set_number(schema, "minimum", "low", false),
                Err("`low` is not a number".into())
            );
        });
        assert_eq!(
            score.schema,
            Some(json!({"type": "number", "minimum": 0, "maximum": 0.5}))
        );
    }
}
