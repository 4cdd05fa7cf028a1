//! A node kind's config JSON Schema, read into the shapes the form draws:
//! which widget each field gets, in which order, and which fields fold
//! under "More settings". Only the JSON Schema that schemars writes for
//! config structs is understood; anything else is a [`Shape::Json`] field,
//! edited as JSON, so no config is ever out of reach.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use heddle_engine::kinds::BuiltinKind;
use heddle_engine::node::{FieldHint, HINT_KEYWORD, KEY_HINT_KEYWORD};
use serde_json::{Map, Value};

/// One field of a config object.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub key: String,
    /// The key, for people: `max_tool_rounds` is "Max tool rounds".
    pub title: String,
    /// The field's doc comment, in one paragraph.
    pub help: String,
    pub shape: Shape,
    pub required: bool,
    pub default: Option<Value>,
    /// The schema's first example of a text: what an empty field shows as
    /// its placeholder (never a value typing would append to).
    pub example: Option<String>,
}

/// What a value is, as far as the form cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Text, maybe naming something (a channel, a model) or holding code.
    Text(Option<FieldHint>),
    Integer,
    Number,
    Boolean,
    /// One of these strings.
    Choice(Vec<String>),
    /// A list of names of one sort (tools, channels), ticked from a list.
    Names(FieldHint),
    /// A list of values of one shape, added and removed row by row.
    List(Box<Shape>),
    /// An object with known fields.
    Record(Vec<Field>),
    /// An object used as a map: keys (maybe naming something) to values.
    Map {
        key: Option<FieldHint>,
        value: Box<Shape>,
    },
    /// One of several single-key objects (`{"value": ..}`, `{"expr": ..}`).
    Variants(Vec<Variant>),
    /// Anything else, edited as JSON.
    Json,
}

/// One alternative of a [`Shape::Variants`]: `{key: <shape>}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub key: String,
    pub help: String,
    pub shape: Shape,
}

/// Keys that lead a form in this order (what one sets first); the rest
/// follow, required before optional, then by name.
const LEADING: &[&str] = &[
    "max_messages",
    "max_tokens",
    "model",
    "credential",
    "system",
    "prompt",
    "question",
    "input",
    "source",
    "over",
    "to",
    "routes",
    "route",
    "when",
    "otherwise",
    "values",
    "inputs",
    "outputs",
    "tools",
    "answer",
];

impl Field {
    /// Whether the field folds under "More settings": tuning knobs and
    /// plumbing that a new node's defaults already get right.
    pub fn is_advanced(&self) -> bool {
        !self.required
            && (matches!(
                self.shape,
                Shape::Integer
                    | Shape::Number
                    | Shape::Boolean
                    | Shape::Text(Some(FieldHint::MessagesChannel | FieldHint::Graph))
                    | Shape::Json
            ) || self.key == "path"
                || self.key == "graph_id"
                || self.key == "sub_agents"
                || self.key == "full_results")
    }
}

impl Field {
    /// Whether the field folds under "More settings" in a form of `kind`:
    /// a tuning knob, unless it is what the kind is for (a memory's
    /// bounds, which a model's `max_tokens` is not).
    pub fn folds_in(&self, kind: BuiltinKind) -> bool {
        let purpose = matches!(
            (kind, self.key.as_str()),
            (BuiltinKind::Memory, "max_messages" | "max_tokens")
        );
        self.is_advanced() && !purpose
    }
}

/// The fields of a config schema, in form order.
pub fn fields(schema: &Value) -> Vec<Field> {
    record(schema, schema)
}

/// The fields of a built-in kind's config, worked out once per kind:
/// generating the schema and reading it again took a few milliseconds of
/// every form drawn, in the frame that shows it.
pub fn kind_fields(kind: BuiltinKind) -> Arc<Vec<Field>> {
    static KNOWN: Mutex<BTreeMap<&str, Arc<Vec<Field>>>> = Mutex::new(BTreeMap::new());
    let mut known = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(
        known
            .entry(kind.name())
            .or_insert_with(|| Arc::new(fields(&kind.config_schema()))),
    )
}

fn record(root: &Value, schema: &Value) -> Vec<Field> {
    let schema = resolve(root, schema);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<Field> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(key, property)| Field {
                    key: key.clone(),
                    title: title(key),
                    help: help(property),
                    shape: shape(root, property),
                    required: required.contains(&key.as_str()),
                    default: property.get("default").cloned(),
                    example: property
                        .get("examples")
                        .and_then(Value::as_array)
                        .and_then(|examples| examples.first())
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default();
    fields.sort_by_key(|field| {
        (
            LEADING
                .iter()
                .position(|key| *key == field.key)
                .unwrap_or(LEADING.len()),
            !field.required,
            field.key.clone(),
        )
    });
    fields
}

fn shape(root: &Value, schema: &Value) -> Shape {
    let hint = FieldHint::of(schema, HINT_KEYWORD);
    let schema = resolve(root, schema);
    let hint = hint.or_else(|| FieldHint::of(schema, HINT_KEYWORD));
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        let names: Option<Vec<String>> = choices
            .iter()
            .map(|choice| choice.as_str().map(str::to_string))
            .collect();
        return names.map_or(Shape::Json, Shape::Choice);
    }
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        return variants
            .iter()
            .map(|variant| self::variant(root, variant))
            .collect::<Option<Vec<_>>>()
            .map_or(Shape::Json, Shape::Variants);
    }
    match type_of(schema) {
        Some("string") => Shape::Text(hint),
        Some("integer") => Shape::Integer,
        Some("number") => Shape::Number,
        Some("boolean") => Shape::Boolean,
        Some("array") => {
            let items = schema.get("items").unwrap_or(&Value::Null);
            match (shape(root, items), hint) {
                (Shape::Text(_), Some(hint)) => Shape::Names(hint),
                (Shape::Text(Some(hint)), None) => Shape::Names(hint),
                (item, _) => Shape::List(Box::new(item)),
            }
        }
        Some("object") => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => Shape::Map {
                key: FieldHint::of(schema, KEY_HINT_KEYWORD),
                value: Box::new(shape(root, values)),
            },
            _ if schema.get("properties").is_some() => Shape::Record(record(root, schema)),
            _ => Shape::Json,
        },
        _ => Shape::Json,
    }
}

/// A `oneOf` alternative that is an object of exactly one required key.
fn variant(root: &Value, schema: &Value) -> Option<Variant> {
    let schema = resolve(root, schema);
    let properties = schema.get("properties")?.as_object()?;
    let (key, property) = single(properties)?;
    let mut shape = shape(root, property);
    // A hint on the alternative is a hint on its one value.
    if let (Shape::Text(None), Some(hint)) = (&shape, FieldHint::of(schema, HINT_KEYWORD)) {
        shape = Shape::Text(Some(hint));
    }
    if property.as_bool() == Some(true) {
        shape = Shape::Json;
    }
    Some(Variant {
        key: key.clone(),
        help: help(schema),
        shape,
    })
}

fn single(properties: &Map<String, Value>) -> Option<(&String, &Value)> {
    let mut entries = properties.iter();
    let first = entries.next()?;
    entries.next().is_none().then_some(first)
}

/// The schema's type, ignoring `null` (an optional field is nullable).
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(ty) => Some(ty),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|ty| *ty != "null"),
        _ => None,
    }
}

/// Follows a local `$ref` (`#/$defs/Name`), keeping the rest otherwise.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/"))
        .and_then(|path| root.pointer(&format!("/{path}")))
        .unwrap_or(schema)
}

fn title(key: &str) -> String {
    let words = key.replace('_', " ");
    let mut letters = words.chars();
    letters
        .next()
        .map(|first| first.to_uppercase().chain(letters).collect())
        .unwrap_or_default()
}

fn help(schema: &Value) -> String {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use heddle_engine::kinds::BuiltinKind;
    use heddle_engine::node::FieldHint;

    use super::{Shape, fields};

    fn field(kind: BuiltinKind, key: &str) -> super::Field {
        fields(&kind.config_schema())
            .into_iter()
            .find(|field| field.key == key)
            .unwrap_or_else(|| panic!("{} has no field {key}", kind.name()))
    }

    #[test]
    fn an_agent_reads_as_pickers_in_the_order_one_sets_them() {
        let agent = fields(&BuiltinKind::Agent.config_schema());
        let keys: Vec<&str> = agent.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(&keys[..4], ["model", "credential", "system", "tools"]);
        assert_eq!(agent[0].shape, Shape::Text(Some(FieldHint::Model)));
        assert_eq!(agent[0].title, "Model");
        assert_eq!(agent[3].shape, Shape::Names(FieldHint::Tool));
        let rounds = field(BuiltinKind::Agent, "max_tool_rounds");
        assert_eq!(rounds.shape, Shape::Integer);
        assert_eq!(rounds.title, "Max tool rounds");
        assert_eq!(rounds.default, Some(serde_json::json!(8)));
        assert!(rounds.is_advanced());
        assert!(field(BuiltinKind::Agent, "messages").is_advanced());
        assert!(!field(BuiltinKind::Agent, "system").is_advanced());
        // A memory's bounds are what it is for; a model's budget is a knob.
        assert!(!field(BuiltinKind::Memory, "max_messages").folds_in(BuiltinKind::Memory));
        assert!(field(BuiltinKind::Llm, "max_tokens").folds_in(BuiltinKind::Llm));
        assert_eq!(
            field(BuiltinKind::Agent, "validator").shape,
            Shape::Text(Some(FieldHint::Expression))
        );
    }

    #[test]
    fn routes_are_lists_of_records_and_values_a_map_of_variants() {
        let Shape::List(branch) = field(BuiltinKind::Condition, "routes").shape else {
            panic!("routes is a list");
        };
        let Shape::Record(branch) = *branch else {
            panic!("a route is a record");
        };
        let keys: Vec<&str> = branch.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["route", "when"]);
        assert!(branch.iter().all(|f| f.required));
        assert_eq!(branch[1].shape, Shape::Text(Some(FieldHint::Expression)));

        let Shape::Map { key, value } = field(BuiltinKind::Set, "values").shape else {
            panic!("values is a map");
        };
        assert_eq!(key, Some(FieldHint::Channel));
        let Shape::Variants(variants) = *value else {
            panic!("a value is one of several");
        };
        let keys: Vec<(&str, &Shape)> = variants
            .iter()
            .map(|v| (v.key.as_str(), &v.shape))
            .collect();
        assert_eq!(
            keys,
            [
                ("value", &Shape::Json),
                ("expr", &Shape::Text(Some(FieldHint::Expression))),
                ("template", &Shape::Text(Some(FieldHint::Template))),
            ]
        );
    }

    #[test]
    fn every_builtin_kind_reads_and_names_what_it_refers_to() {
        for kind in BuiltinKind::ALL {
            // Reading never fails; each kind's fields are unique.
            let all = fields(&kind.config_schema());
            let mut keys: Vec<&str> = all.iter().map(|f| f.key.as_str()).collect();
            keys.dedup();
            assert_eq!(keys.len(), all.len(), "{}", kind.name());
        }
        assert_eq!(
            field(BuiltinKind::Start, "inputs").shape,
            Shape::Names(FieldHint::Channel)
        );
        assert_eq!(
            field(BuiltinKind::FanOut, "to").shape,
            Shape::Text(Some(FieldHint::Node))
        );
        assert_eq!(
            field(BuiltinKind::Script, "source").shape,
            Shape::Text(Some(FieldHint::Script))
        );
        assert_eq!(
            field(BuiltinKind::Ask, "answer").shape,
            Shape::Text(Some(FieldHint::Channel))
        );
        assert_eq!(field(BuiltinKind::Llm, "json").shape, Shape::Boolean);
    }
}
