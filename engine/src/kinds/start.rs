//! `start`: where a run begins. It does nothing itself; it names the
//! channels a run's input fills, so the editor can ask for them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::{ChannelType, GraphDocument};
use serde_json::{Map, Value, json};

use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config,
};

/// Settings of a `start` node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartConfig {
    /// The channels a run's input sets (the editor builds its input form
    /// from them). Input may still set any channel.
    #[serde(default)]
    #[schemars(extend("x-heddle" = "channel"))]
    pub inputs: Vec<String>,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: StartConfig = parse_config(config)?;
    let issues: Vec<_> = config
        .inputs
        .iter()
        .enumerate()
        .filter_map(|(i, channel)| {
            cx.check_channel(format!("inputs[{i}]"), channel, ChannelType::String)
        })
        .collect();
    if issues.is_empty() {
        Ok(Built::plain(Start))
    } else {
        Err(issues)
    }
}

struct Start;

/// An `input` a caller could send to run `document`: each channel its start
/// node names, with a value of the channel's type (its schema's first
/// example, allowed value or default when it gives one). The sample request
/// shown with a new API key is built from it, so it runs as it is.
pub fn sample_input(document: &GraphDocument) -> Map<String, Value> {
    let inputs = document
        .nodes
        .iter()
        .find(|node| node.kind == "start")
        .and_then(|node| serde_json::from_value::<StartConfig>(node.config.clone()).ok())
        .map(|config| config.inputs)
        .unwrap_or_default();
    inputs
        .into_iter()
        .map(|name| {
            let value = match document.state.channels.get(&name) {
                // A conversation takes its next message as text.
                Some(channel) if channel.ty == ChannelType::Messages => json!("Hello"),
                Some(channel) => channel.schema.as_ref().map_or_else(
                    || of_type(channel.ty, &name),
                    |schema| of_schema(schema, &name, 0),
                ),
                None => json!(format!("your {name}")),
            };
            (name, value)
        })
        .collect()
}

fn of_type(ty: ChannelType, name: &str) -> Value {
    match ty {
        ChannelType::Any | ChannelType::String => json!(format!("your {name}")),
        ChannelType::Number | ChannelType::Integer => json!(1),
        ChannelType::Boolean => json!(true),
        ChannelType::List => json!([]),
        ChannelType::Object => json!({}),
        ChannelType::Messages => json!("Hello"),
    }
}

/// A value a JSON Schema of the subset channels use accepts, `depth`
/// levels in (a schema is bounded where it enters, but a sample need not
/// go deep to show its shape).
fn of_schema(schema: &Value, name: &str, depth: usize) -> Value {
    let given = ["examples", "enum"]
        .iter()
        .find_map(|key| schema[*key].as_array().and_then(|values| values.first()))
        .or_else(|| schema.get("default"));
    if let Some(value) = given {
        return value.clone();
    }
    let ty = schema["type"].as_str().unwrap_or("");
    match ty {
        "integer" | "number" => schema
            .get("minimum")
            .filter(|minimum| minimum.is_number())
            .cloned()
            .unwrap_or_else(|| json!(1)),
        "boolean" => json!(true),
        "array" if depth < 4 => match schema.get("items") {
            Some(items) => json!([of_schema(items, name, depth + 1)]),
            None => json!([]),
        },
        "object" if depth < 4 => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = schema["properties"].as_object();
            let object: Map<String, Value> = properties
                .into_iter()
                .flatten()
                .filter(|(key, _)| required.is_empty() || required.contains(&key.as_str()))
                .map(|(key, property)| (key.clone(), of_schema(property, key, depth + 1)))
                .collect();
            Value::Object(object)
        }
        "array" => json!([]),
        "object" => json!({}),
        _ => json!(format!("your {name}")),
    }
}

impl Node for Start {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}

#[cfg(test)]
mod tests {
    use super::sample_input;
    use crate::format::GraphDocument;
    use serde_json::json;

    fn document(channels: serde_json::Value, inputs: serde_json::Value) -> GraphDocument {
        serde_json::from_value(json!({
            "format_version": 3,
            "name": "g",
            "state": {"channels": channels},
            "nodes": [{"id": "start", "kind": "start", "config": {"inputs": inputs}}],
        }))
        .expect("a document")
    }

    #[test]
    fn a_sample_input_has_each_start_input_with_a_value_of_its_type() {
        let graph = document(
            json!({
                "messages": {"type": "messages", "reducer": "add_messages"},
                "topic": {"type": "string"},
                "limit": {"type": "integer", "schema": {"type": "integer", "minimum": 3}},
                "tone": {"type": "string", "schema": {"type": "string", "enum": ["plain", "warm"]}},
                "strict": {"type": "boolean"},
                "filter": {"type": "object", "schema": {
                    "type": "object",
                    "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}},
                    "required": ["tags"],
                }},
            }),
            json!(["messages", "topic", "limit", "tone", "strict", "filter"]),
        );
        assert_eq!(
            serde_json::Value::Object(sample_input(&graph)),
            json!({
                "messages": "Hello",
                "topic": "your topic",
                "limit": 3,
                "tone": "plain",
                "strict": true,
                "filter": {"tags": ["your tags"]},
            })
        );
    }

    #[test]
    fn a_graph_without_inputs_samples_an_empty_input() {
        let graph = document(json!({"topic": {"type": "string"}}), json!([]));
        assert!(sample_input(&graph).is_empty());
    }
}
