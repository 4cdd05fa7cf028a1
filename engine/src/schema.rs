//! Value schemas: the subset of JSON Schema a channel may carry, so a value
//! is checked where it enters the state and a model can be asked for it
//! (structured output).
//!
//! The subset is small on purpose, so every endpoint and the offline model
//! can honour all of it, and a schema can be edited in a form:
//! `type` (one name or a list of `string`, `number`, `integer`, `boolean`,
//! `array`, `object`, `null`), `properties`, `required`, `items`, `enum`,
//! `minimum`/`maximum`, `minItems`/`maxItems` and `description`. Any other
//! keyword is refused when the graph is validated, with where it is, so a
//! schema never says more than Heddle checks.
//!
//! A schema is kept in the document as the JSON it was written as, and
//! read here ([`ValueSchema::parse`]) into a typed form that checks values
//! ([`ValueSchema::check`]) and reports the first misfit with its path
//! (`$.items[2].price`).

use std::fmt;

use serde_json::{Map, Value};

use crate::format::{Channel, ChannelType};

/// The keywords of the subset, as written.
pub const KEYWORDS: [&str; 10] = [
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "description",
];

/// The deepest nesting of schemas inside a schema (`items` and
/// `properties` each go one level down).
pub const MAX_DEPTH: usize = 16;

/// The most schemas one schema may hold, itself included: checking a value
/// costs at most this many steps per value node.
pub const MAX_NODES: usize = 512;

/// The most values one `enum` may list: each is compared with every value
/// checked against it.
pub const MAX_ENUM: usize = 256;

/// A JSON type name of the subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Array,
    Object,
    Null,
}

impl JsonType {
    fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    /// The name as JSON Schema writes it.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Array => "array",
            JsonType::Object => "object",
            JsonType::Null => "null",
        }
    }

    fn fits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::String, Value::String(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Object, Value::Object(_))
            | (JsonType::Null, Value::Null) => true,
            (JsonType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        }
    }

    fn described(self) -> &'static str {
        match self {
            JsonType::String => "a string",
            JsonType::Number => "a number",
            JsonType::Integer => "a whole number",
            JsonType::Boolean => "true or false",
            JsonType::Array => "a list",
            JsonType::Object => "an object",
            JsonType::Null => "null",
        }
    }
}

/// A schema of the subset, read and checked for sense.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueSchema {
    /// The types a value may have; empty: any.
    pub types: Vec<JsonType>,
    /// An object's properties, in the order written.
    pub properties: Vec<(String, ValueSchema)>,
    /// The properties an object must have.
    pub required: Vec<String>,
    /// What every item of a list is.
    pub items: Option<Box<ValueSchema>>,
    /// The only values allowed, when set.
    pub allowed: Option<Vec<Value>>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    /// What the value is, for people and models.
    pub description: Option<String>,
}

/// Where a schema is malformed, and how. `path` is relative to the schema
/// (`items.properties.price.minimum`), empty for the schema itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", located(path))]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

fn located(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("at `{path}`: ")
    }
}

/// Where a value does not fit its schema: the first misfit found, at a
/// path into the value (`$` is the value itself, `$.items[2].price`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {path}: {message}")]
pub struct Mismatch {
    pub path: String,
    pub message: String,
}

impl ValueSchema {
    /// Reads `schema`, reporting every problem at once.
    pub fn parse(schema: &Value) -> Result<ValueSchema, Vec<SchemaError>> {
        let mut reader = Reader {
            problems: Vec::new(),
            nodes: 0,
        };
        let parsed = reader.read(schema, "", 0);
        if reader.problems.is_empty() {
            Ok(parsed)
        } else {
            Err(reader.problems)
        }
    }

    /// The schema `channel` carries, read. `None` when it has none, or one
    /// that does not read (a validation error: such a graph never runs).
    pub fn of_channel(channel: &Channel) -> Option<ValueSchema> {
        channel
            .schema
            .as_ref()
            .and_then(|schema| ValueSchema::parse(schema).ok())
    }

    /// Whether every value this schema allows is of channel type `ty`, as
    /// far as its `type` says (a schema without one leaves it to the
    /// channel's type).
    pub fn agrees_with(&self, ty: ChannelType) -> bool {
        let allowed: &[JsonType] = match ty {
            ChannelType::Any => return true,
            // A messages channel's values are checked by its own rules.
            ChannelType::Messages => return false,
            ChannelType::String => &[JsonType::String],
            ChannelType::Number => &[JsonType::Number, JsonType::Integer],
            ChannelType::Integer => &[JsonType::Integer],
            ChannelType::Boolean => &[JsonType::Boolean],
            ChannelType::List => &[JsonType::Array],
            ChannelType::Object => &[JsonType::Object],
        };
        self.types
            .iter()
            .all(|t| *t == JsonType::Null || allowed.contains(t))
    }

    /// The schema a typed channel implies when it carries none of its own
    /// (`None` for `any`, `messages` and text, which stay free text).
    pub fn implied_by(ty: ChannelType) -> Option<Value> {
        let name = match ty {
            ChannelType::Any | ChannelType::String | ChannelType::Messages => return None,
            ChannelType::Number => "number",
            ChannelType::Integer => "integer",
            ChannelType::Boolean => "boolean",
            ChannelType::List => "array",
            ChannelType::Object => "object",
        };
        Some(serde_json::json!({ "type": name }))
    }

    /// Checks `value`; the first misfit is returned with its path.
    pub fn check(&self, value: &Value) -> Result<(), Mismatch> {
        let mut path = String::from("$");
        self.check_at(value, &mut path)
    }

    /// Checks each of `items` as an item of a list this schema describes
    /// (an append), the first at index `first`.
    pub fn check_items(&self, items: &[Value], first: usize) -> Result<(), Mismatch> {
        let Some(item) = &self.items else {
            return Ok(());
        };
        for (i, value) in items.iter().enumerate() {
            let mut path = format!("$[{}]", first + i);
            item.check_at(value, &mut path)?;
        }
        Ok(())
    }

    /// Checks an append to a list of `len` items: each new item, and the
    /// new length against `maxItems`. `minItems` is a list's aim while it
    /// grows, so it is checked only on a value written whole.
    pub fn check_append(&self, added: &[Value], len: usize) -> Result<(), Mismatch> {
        self.check_items(added, len)?;
        let total = (len + added.len()) as u64;
        match self.max_items {
            Some(max) if total > max => Err(Mismatch {
                path: "$".into(),
                message: format!("expected at most {max} {}, got {total}", plural(max)),
            }),
            _ => Ok(()),
        }
    }

    /// Checks the fields a merge writes into an object, each against its
    /// property's schema. `required` is an object's aim while it is filled
    /// in, so it is checked only on a value written whole.
    pub fn check_merge(&self, fields: &serde_json::Map<String, Value>) -> Result<(), Mismatch> {
        let mut path = String::from("$");
        for (name, value) in fields {
            if let Some((_, schema)) = self.properties.iter().find(|(p, _)| p == name) {
                push_key(&mut path, name);
                schema.check_at(value, &mut path)?;
                path.truncate(1);
            }
        }
        Ok(())
    }

    /// Checks a list's length against `minItems`/`maxItems`.
    pub fn check_length(&self, len: usize) -> Result<(), Mismatch> {
        let len = len as u64;
        let fail = |message: String| {
            Err(Mismatch {
                path: "$".into(),
                message,
            })
        };
        match (self.min_items, self.max_items) {
            (Some(min), _) if len < min => fail(format!(
                "expected at least {min} {}, got {len}",
                plural(min)
            )),
            (_, Some(max)) if len > max => {
                fail(format!("expected at most {max} {}, got {len}", plural(max)))
            }
            _ => Ok(()),
        }
    }

    fn check_at(&self, value: &Value, path: &mut String) -> Result<(), Mismatch> {
        let fail = |path: &str, message: String| {
            Err(Mismatch {
                path: path.to_string(),
                message,
            })
        };
        if !self.types.is_empty() && !self.types.iter().any(|t| t.fits(value)) {
            let expected: Vec<&str> = self.types.iter().map(|t| t.described()).collect();
            return fail(
                path,
                format!("expected {}, got {}", expected.join(" or "), kind(value)),
            );
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|a| same(a, value))
        {
            // The first few, each short: the message goes to the model on a retry.
            let mut names: Vec<String> = allowed.iter().take(12).map(brief).collect();
            if allowed.len() > 12 {
                names.push(format!("... ({} in all)", allowed.len()));
            }
            return fail(
                path,
                format!("expected one of {}, got {}", names.join(", "), brief(value)),
            );
        }
        match value {
            Value::Number(n) => {
                let n = n.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = self.minimum
                    && n < min
                {
                    return fail(path, format!("expected at least {min}, got {n}"));
                }
                if let Some(max) = self.maximum
                    && n > max
                {
                    return fail(path, format!("expected at most {max}, got {n}"));
                }
            }
            Value::Array(items) => {
                self.check_length(items.len())
                    .map_err(|mismatch| Mismatch {
                        path: path.clone(),
                        message: mismatch.message,
                    })?;
                if let Some(item) = &self.items {
                    let len = path.len();
                    for (i, value) in items.iter().enumerate() {
                        path.push_str(&format!("[{i}]"));
                        item.check_at(value, path)?;
                        path.truncate(len);
                    }
                }
            }
            Value::Object(fields) => {
                for name in &self.required {
                    if !fields.contains_key(name) {
                        return fail(path, format!("the required property `{name}` is missing"));
                    }
                }
                let len = path.len();
                for (name, schema) in &self.properties {
                    if let Some(value) = fields.get(name) {
                        push_key(path, name);
                        schema.check_at(value, path)?;
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether an endpoint's strict mode can take the schema as it is:
    /// every schema in it says its type (or lists its values), every object
    /// names its properties and requires them all (strict modes allow no
    /// optional or free-form property), and every list says what its items
    /// are.
    pub fn strict_compatible(&self) -> bool {
        let typed = !self.types.is_empty() || self.allowed.is_some();
        let may_be = |ty: JsonType| self.types.contains(&ty);
        let objects_ok = !may_be(JsonType::Object)
            || !self.properties.is_empty()
                && self.properties.len() == self.required.len()
                && self
                    .properties
                    .iter()
                    .all(|(name, _)| self.required.contains(name));
        let lists_ok = !may_be(JsonType::Array) || self.items.is_some();
        typed
            && objects_ok
            && lists_ok
            && self
                .properties
                .iter()
                .all(|(_, schema)| schema.strict_compatible())
            && self
                .items
                .as_ref()
                .is_none_or(|item| item.strict_compatible())
    }

    /// Whether only objects fit (endpoints want an object at the top).
    pub fn is_object(&self) -> bool {
        self.types == [JsonType::Object]
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "item" } else { "items" }
}

fn push_key(path: &mut String, name: &str) {
    if !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
    {
        path.push('.');
        path.push_str(name);
    } else {
        path.push('[');
        path.push_str(&Value::String(name.to_string()).to_string());
        path.push(']');
    }
}

/// JSON equality where `1 == 1.0`.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// What kind of JSON value `value` is, as messages say it (`a string`).
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A value as a message shows it: short.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    }
}

struct Reader {
    problems: Vec<SchemaError>,
    nodes: usize,
}

impl Reader {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(SchemaError {
            path: path.to_string(),
            message: message.into(),
        });
    }

    fn read(&mut self, schema: &Value, path: &str, depth: usize) -> ValueSchema {
        let mut out = ValueSchema::default();
        self.nodes += 1;
        if self.nodes == MAX_NODES + 1 {
            self.problem(
                path,
                format!("a schema may hold at most {MAX_NODES} schemas"),
            );
        }
        if depth > MAX_DEPTH {
            self.problem(path, format!("schemas nest at most {MAX_DEPTH} deep"));
            return out;
        }
        let Value::Object(fields) = schema else {
            self.problem(
                path,
                format!("a schema is a JSON object, not {}", kind(schema)),
            );
            return out;
        };
        let at = |key: &str| {
            if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        for key in fields.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                self.problem(
                    &at(key),
                    format!(
                        "`{key}` is not a keyword Heddle checks; use {}",
                        KEYWORDS.join(", ")
                    ),
                );
            }
        }
        out.types = self.types(fields.get("type"), &at("type"));
        if let Some(description) = fields.get("description") {
            match description {
                Value::String(text) => out.description = Some(text.clone()),
                _ => self.problem(&at("description"), "a description is text"),
            }
        }
        self.read_properties(fields, &mut out, &at, depth);
        if let Some(items) = fields.get("items") {
            out.items = Some(Box::new(self.read(items, &at("items"), depth + 1)));
        }
        if let Some(allowed) = fields.get("enum") {
            match allowed {
                Value::Array(values) if values.len() > MAX_ENUM => self.problem(
                    &at("enum"),
                    format!(
                        "`enum` lists at most {MAX_ENUM} values ({} here)",
                        values.len()
                    ),
                ),
                Value::Array(values) if !values.is_empty() => {
                    out.allowed = Some(values.clone());
                }
                _ => self.problem(&at("enum"), "`enum` is a non-empty list of values"),
            }
        }
        out.minimum = self.number(fields, "minimum", &at);
        out.maximum = self.number(fields, "maximum", &at);
        out.min_items = self.count(fields, "minItems", &at);
        out.max_items = self.count(fields, "maxItems", &at);
        self.check_sense(&out, &at);
        out
    }

    fn types(&mut self, value: Option<&Value>, path: &str) -> Vec<JsonType> {
        let names: Vec<&Value> = match value {
            None => return Vec::new(),
            Some(Value::Array(names)) if !names.is_empty() => names.iter().collect(),
            Some(one @ Value::String(_)) => vec![one],
            Some(_) => {
                self.problem(path, "`type` is a type name or a non-empty list of them");
                return Vec::new();
            }
        };
        let mut types = Vec::new();
        for name in names {
            match name.as_str().and_then(JsonType::parse) {
                Some(ty) if !types.contains(&ty) => types.push(ty),
                Some(_) => {}
                None => self.problem(
                    path,
                    format!(
                        "{name} is not a type; use string, number, integer, boolean, array, object or null"
                    ),
                ),
            }
        }
        types
    }

    fn read_properties(
        &mut self,
        fields: &Map<String, Value>,
        out: &mut ValueSchema,
        at: &dyn Fn(&str) -> String,
        depth: usize,
    ) {
        if let Some(properties) = fields.get("properties") {
            match properties {
                Value::Object(properties) => {
                    for (name, schema) in properties {
                        let path = format!("{}.{name}", at("properties"));
                        let schema = self.read(schema, &path, depth + 1);
                        out.properties.push((name.clone(), schema));
                    }
                }
                _ => self.problem(
                    &at("properties"),
                    "`properties` is an object of schemas by name",
                ),
            }
        }
        if let Some(required) = fields.get("required") {
            let Some(names) = required.as_array() else {
                self.problem(&at("required"), "`required` is a list of property names");
                return;
            };
            for name in names {
                match name.as_str() {
                    Some(name) if out.properties.iter().any(|(p, _)| p == name) => {
                        if !out.required.iter().any(|r| r == name) {
                            out.required.push(name.to_string());
                        }
                    }
                    Some(name) => self.problem(
                        &at("required"),
                        format!("`{name}` is required but not among `properties`"),
                    ),
                    None => self.problem(&at("required"), "`required` lists names (text)"),
                }
            }
        }
    }

    fn number(
        &mut self,
        fields: &Map<String, Value>,
        key: &str,
        at: &dyn Fn(&str) -> String,
    ) -> Option<f64> {
        let value = fields.get(key)?;
        match value.as_f64().filter(|n| n.is_finite()) {
            Some(n) => Some(n),
            None => {
                self.problem(&at(key), format!("`{key}` is a number"));
                None
            }
        }
    }

    fn count(
        &mut self,
        fields: &Map<String, Value>,
        key: &str,
        at: &dyn Fn(&str) -> String,
    ) -> Option<u64> {
        let value = fields.get(key)?;
        match value.as_u64() {
            Some(n) => Some(n),
            None => {
                self.problem(&at(key), format!("`{key}` is a whole number, 0 or more"));
                None
            }
        }
    }

    /// Keywords that can never apply, or contradict each other.
    fn check_sense(&mut self, schema: &ValueSchema, at: &dyn Fn(&str) -> String) {
        let may_be = |ty: JsonType| schema.types.is_empty() || schema.types.contains(&ty);
        let numeric = may_be(JsonType::Number) || may_be(JsonType::Integer);
        let only = |what: &str| {
            format!(
                "applies to {what}, and this schema's type is {}",
                schema
                    .types
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        };
        for (key, set) in [
            ("minimum", schema.minimum.is_some()),
            ("maximum", schema.maximum.is_some()),
        ] {
            if set && !numeric {
                self.problem(&at(key), format!("`{key}` {}", only("numbers")));
            }
        }
        for (key, set) in [
            ("minItems", schema.min_items.is_some()),
            ("maxItems", schema.max_items.is_some()),
            ("items", schema.items.is_some()),
        ] {
            if set && !may_be(JsonType::Array) {
                self.problem(&at(key), format!("`{key}` {}", only("lists")));
            }
        }
        if !schema.properties.is_empty() && !may_be(JsonType::Object) {
            self.problem(
                &at("properties"),
                format!("`properties` {}", only("objects")),
            );
        }
        if let (Some(min), Some(max)) = (schema.minimum, schema.maximum)
            && min > max
        {
            self.problem(
                &at("minimum"),
                format!("`minimum` {min} is above `maximum` {max}"),
            );
        }
        if let (Some(min), Some(max)) = (schema.min_items, schema.max_items)
            && min > max
        {
            self.problem(
                &at("minItems"),
                format!("`minItems` {min} is above `maxItems` {max}"),
            );
        }
        if let Some(allowed) = &schema.allowed {
            let bare = ValueSchema {
                types: schema.types.clone(),
                minimum: schema.minimum,
                maximum: schema.maximum,
                ..ValueSchema::default()
            };
            for (i, value) in allowed.iter().enumerate() {
                if let Err(mismatch) = bare.check(value) {
                    self.problem(
                        &format!("{}[{i}]", at("enum")),
                        format!(
                            "{} does not fit this schema: {}",
                            brief(value),
                            mismatch.message
                        ),
                    );
                }
            }
        }
    }
}

impl fmt::Display for ValueSchema {
    /// A one-line summary for people: `list of object (3 properties)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.types.iter().map(|t| t.name()).collect();
        let ty = if names.is_empty() {
            "any".to_string()
        } else {
            names.join(" or ")
        };
        write!(f, "{ty}")?;
        if let Some(item) = &self.items {
            write!(f, " of {item}")?;
        }
        if !self.properties.is_empty() {
            write!(f, " ({} properties)", self.properties.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
