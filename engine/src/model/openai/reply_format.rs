//! How the shape a reply must have ([`ReplyFormat`]) is asked of an
//! OpenAI-compatible endpoint, and how the reply is read back.
//!
//! One path for every constrained reply: a router's choice and a node's
//! structured output are both a `response_format` of type `json_schema`.
//! Endpoints want an object at the top, so a value that is not one (a
//! route name, a list of topics) is asked for inside one (`{"route": ...}`,
//! `{"value": ...}`) and taken out of it again. The schema is sent
//! `strict` when the endpoint's strict mode can take it as it is (every
//! property required, every object and list described), so the endpoint
//! guarantees the shape; otherwise it guides the model, and the node
//! checks the reply either way.
//!
//! An endpoint that does not take `json_schema` (configured so, or found
//! so when it refuses one) gets the schema as an instruction instead, as
//! the last system message, so the start of the request, which providers
//! cache, stays the same.

use serde_json::{Value, json};

use crate::model::{ChatMessage, ReplyFormat, Role};
use crate::schema::ValueSchema;

/// Where the value the node wants sits in the endpoint's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadBack {
    /// The reply's content is the answer.
    AsIs,
    /// The content is an object; the answer is its `route` field's text.
    Route,
    /// The content is an object; the answer is its `value` field, as JSON.
    Value,
}

/// How a format is asked for: what goes into the body, and how to read
/// the reply.
pub(super) struct Asked {
    /// The body's `response_format`, if any.
    pub response_format: Option<Value>,
    /// A system message to add at the end, if any.
    pub instruction: Option<ChatMessage>,
    pub read_back: ReadBack,
}

/// How to ask for `format`; `json_schema` says whether the endpoint takes
/// `response_format: json_schema`.
pub(super) fn ask(format: &ReplyFormat, json_schema: bool) -> Asked {
    let plain = |response_format| Asked {
        response_format,
        instruction: None,
        read_back: ReadBack::AsIs,
    };
    match format {
        ReplyFormat::Text => plain(None),
        ReplyFormat::JsonObject => plain(Some(json!({"type": "json_object"}))),
        // The router's own prompt asks for the route's name.
        ReplyFormat::Choice(_) if !json_schema => plain(None),
        ReplyFormat::Choice(choices) => {
            let names: Vec<&str> = choices.iter().map(|c| c.name.as_str()).collect();
            let route = json!({"type": "string", "enum": names});
            Asked {
                response_format: Some(schema_format("route", wrap("route", route), true)),
                instruction: None,
                read_back: ReadBack::Route,
            }
        }
        ReplyFormat::Schema(wanted) if !json_schema => Asked {
            response_format: None,
            instruction: Some(ChatMessage::new(
                Role::System,
                format!(
                    "Answer with only a JSON value that fits this JSON Schema, with no other \
                     text and no code fence:\n{}",
                    wanted.schema
                ),
            )),
            read_back: ReadBack::AsIs,
        },
        ReplyFormat::Schema(wanted) => {
            let parsed = ValueSchema::parse(&wanted.schema).ok();
            let strict = parsed.as_ref().is_some_and(ValueSchema::strict_compatible);
            let is_object = parsed.as_ref().is_some_and(ValueSchema::is_object);
            let schema = if strict {
                closed(&wanted.schema)
            } else {
                wanted.schema.clone()
            };
            let (schema, read_back) = if is_object {
                (schema, ReadBack::AsIs)
            } else {
                (wrap("value", schema), ReadBack::Value)
            };
            Asked {
                response_format: Some(schema_format(&format_name(&wanted.name), schema, strict)),
                instruction: None,
                read_back,
            }
        }
    }
}

/// The answer inside the endpoint's reply `content`. A reply that is not
/// what was asked for is passed on as it is, for the node to judge.
pub(super) fn read_back(read_back: ReadBack, content: String) -> String {
    let key = match read_back {
        ReadBack::AsIs => return content,
        ReadBack::Route => "route",
        ReadBack::Value => "value",
    };
    let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(&content) else {
        return content;
    };
    match (read_back, fields.remove(key)) {
        (ReadBack::Route, Some(Value::String(route))) => route,
        (ReadBack::Value, Some(value)) => value.to_string(),
        _ => content,
    }
}

/// Whether an endpoint's refusal is about the response format: the
/// request is asked again with the schema as an instruction.
pub(super) fn refuses_json_schema(message: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("response_format") || message.contains("json_schema")
}

/// Whether the refusal says the endpoint does not take `json_schema` at
/// all (not that this one schema is wrong, which one graph could cause):
/// only then is it never sent one again.
pub(super) fn never_takes_json_schema(message: &str) -> bool {
    let message = message.to_lowercase();
    refuses_json_schema(&message)
        && [
            "not supported",
            "unsupported",
            "does not support",
            "unknown",
            "unrecognized",
        ]
        .iter()
        .any(|words| message.contains(words))
}

fn schema_format(name: &str, schema: Value, strict: bool) -> Value {
    json!({
        "type": "json_schema",
        "json_schema": {"name": name, "strict": strict, "schema": schema}
    })
}

fn wrap(key: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": {key: schema},
        "required": [key],
        "additionalProperties": false
    })
}

/// Endpoints name formats with letters, digits, `_` and `-` (64 at most).
fn format_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "value".into()
    } else {
        name
    }
}

/// The schema with `additionalProperties: false` on every object, as
/// strict modes require.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(fields) => {
            let mut out: serde_json::Map<String, Value> = fields
                .iter()
                .map(|(key, value)| {
                    let value = match key.as_str() {
                        "items" => closed(value),
                        "properties" => match value {
                            Value::Object(properties) => Value::Object(
                                properties
                                    .iter()
                                    .map(|(name, schema)| (name.clone(), closed(schema)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        },
                        _ => value.clone(),
                    };
                    (key.clone(), value)
                })
                .collect();
            if out.contains_key("properties") {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ReadBack, ask, never_takes_json_schema, read_back, refuses_json_schema};
    use crate::model::{Choice, ReplyFormat, ReplySchema};

    fn schema(name: &str, schema: serde_json::Value) -> ReplyFormat {
        ReplyFormat::Schema(ReplySchema {
            name: name.into(),
            schema,
        })
    }

    #[test]
    fn a_list_is_asked_for_inside_an_object_and_taken_out_again() {
        let asked = ask(
            &schema(
                "my topics",
                json!({"type": "array", "items": {"type": "string"}}),
            ),
            true,
        );
        assert_eq!(
            asked.response_format,
            Some(json!({"type": "json_schema", "json_schema": {
                "name": "my_topics", "strict": true,
                "schema": {"type": "object", "properties": {"value": {"type": "array", "items": {"type": "string"}}},
                           "required": ["value"], "additionalProperties": false}
            }}))
        );
        assert_eq!(asked.read_back, ReadBack::Value);
        assert_eq!(
            read_back(asked.read_back, r#"{"value": ["a", "b"]}"#.into()),
            r#"["a","b"]"#
        );
        assert_eq!(read_back(asked.read_back, "not json".into()), "not json");
    }

    #[test]
    fn an_object_with_optional_properties_is_sent_as_written_and_not_strict() {
        let written = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["a"]});
        let asked = ask(&schema("order", written.clone()), true);
        let format = asked.response_format.expect("a response format");
        assert_eq!(format["json_schema"]["strict"], false);
        assert_eq!(format["json_schema"]["schema"], written);
        assert_eq!(asked.read_back, ReadBack::AsIs);
    }

    #[test]
    fn a_strict_object_is_closed_at_every_level() {
        let asked = ask(
            &schema(
                "order",
                json!({"type": "object", "properties": {"items": {"type": "array", "items": {
                    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
                }}}, "required": ["items"]}),
            ),
            true,
        );
        let sent = &asked.response_format.expect("a format")["json_schema"];
        assert_eq!(sent["strict"], true);
        assert_eq!(sent["schema"]["additionalProperties"], false);
        assert_eq!(
            sent["schema"]["properties"]["items"]["items"]["additionalProperties"],
            false
        );
    }

    #[test]
    fn routes_use_the_same_path() {
        let asked = ask(
            &ReplyFormat::Choice(vec![Choice {
                name: "billing".into(),
                description: String::new(),
            }]),
            true,
        );
        assert_eq!(
            asked.response_format.expect("a format")["json_schema"]["schema"]["properties"]["route"],
            json!({"type": "string", "enum": ["billing"]})
        );
        assert_eq!(
            read_back(asked.read_back, r#"{"route":"billing"}"#.into()),
            "billing"
        );
    }

    #[test]
    fn only_an_endpoint_that_never_takes_json_schema_is_remembered_so() {
        let unsupported = "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.";
        assert!(refuses_json_schema(unsupported) && never_takes_json_schema(unsupported));
        // One graph's bad schema must not turn it off for everyone.
        let bad = "Invalid schema for response_format 'topics': nesting too deep.";
        assert!(refuses_json_schema(bad) && !never_takes_json_schema(bad));
        assert!(!refuses_json_schema("Incorrect API key provided"));
    }

    #[test]
    fn without_json_schema_the_schema_is_an_instruction() {
        let asked = ask(&schema("n", json!({"type": "integer"})), false);
        assert_eq!(asked.response_format, None);
        let instruction = asked.instruction.expect("an instruction");
        assert!(
            instruction
                .content
                .ends_with("code fence:\n{\"type\":\"integer\"}")
        );
        assert_eq!(asked.read_back, ReadBack::AsIs);
    }
}
