//! The offline model's structured output: a value that fits the schema it
//! was asked for, derived from the schema and the user's words alone, so
//! graphs that plan, extract or grade with a model run with no key.
//!
//! - A property named in the message (`customer: Ada Lovelace`,
//!   `total 7.50`, `urgent: yes`) is read from it when the value fits.
//! - An `enum` takes the allowed value the message mentions, else one
//!   picked by a hash of the message.
//! - Other text says it is the offline model's and what it stands for
//!   (`offline topic 2: how do heat pumps work?`).
//! - Numbers sit inside `minimum`/`maximum`, lists have between
//!   `minItems` and `maxItems` items (three when free), objects have every
//!   property.

use serde_json::{Map, Value};

use crate::model::ReplySchema;
use crate::schema::{JsonType, ValueSchema};

/// A value fitting `wanted`, for the message `user`.
pub(super) fn for_schema(wanted: &ReplySchema, user: &str) -> Value {
    // Only the message's start is read: a value is made in time that
    // does not grow with a message of megabytes.
    let mut end = user.len().min(MAX_READ);
    while !user.is_char_boundary(end) {
        end -= 1;
    }
    let user = &user[..end];
    match ValueSchema::parse(&wanted.schema) {
        Ok(schema) => Maker {
            user,
            lower: user.to_lowercase(),
            seed: fnv(FNV_START, user.bytes()),
            said: Default::default(),
            mentioned: Default::default(),
            budget: std::cell::Cell::new(MAX_VALUES),
        }
        .make(&schema, &wanted.name, 0),
        // Nodes only ask for schemas that validated; say what happened.
        Err(_) => serde_json::json!({"offline_model": true, "you_said": user}),
    }
}

struct Maker<'a> {
    /// The start of the message.
    user: &'a str,
    /// The same, lower-cased once.
    lower: String,
    /// The message's hash, which every made value's hash starts from.
    seed: u64,
    /// What the message says of each name looked up, and which allowed
    /// value it mentions for each `enum` (by its place in memory): each is
    /// read from the message once, however many values use it.
    said: std::cell::RefCell<std::collections::HashMap<String, Option<String>>>,
    mentioned: std::cell::RefCell<std::collections::HashMap<usize, Option<usize>>>,
    /// How many more values it may make: a schema asking for a million
    /// items (or lists of lists) gets a short answer that does not fit,
    /// not a server out of memory.
    budget: std::cell::Cell<usize>,
}

/// How many items a list gets when its schema leaves it free.
const FREE_ITEMS: u64 = 3;

/// The most values one answer holds.
const MAX_VALUES: usize = 10_000;

/// How much of the message (bytes) is read.
const MAX_READ: usize = 4 * 1024;

/// The longest name looked for in the message, and shown in made text.
const MAX_NAME: usize = 48;

/// The most characters of a value read from the message.
const MAX_SAID: usize = 200;

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: the same on every platform and in every build.
fn fnv(start: u64, bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(start, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Maker<'_> {
    fn make(&self, schema: &ValueSchema, name: &str, index: usize) -> Value {
        let left = self.budget.get();
        if left == 0 {
            return Value::Null;
        }
        self.budget.set(left - 1);
        if let Some(allowed) = &schema.allowed {
            return self.pick(allowed, name, index);
        }
        match self.type_of(schema) {
            JsonType::Null => Value::Null,
            JsonType::Boolean => Value::Bool(
                self.said(name)
                    .and_then(|text| yes_or_no(&text))
                    .unwrap_or_else(|| self.hash(name, index).is_multiple_of(2)),
            ),
            JsonType::Integer => self.integer(schema, name, index),
            JsonType::Number => self.number(schema, name, index),
            JsonType::String => Value::String(self.text(schema, name, index)),
            JsonType::Array => {
                let len = FREE_ITEMS
                    .max(schema.min_items.unwrap_or(0))
                    .min(schema.max_items.unwrap_or(u64::MAX))
                    .min(self.budget.get() as u64);
                let item_name = singular(name);
                let free = ValueSchema::default();
                let item = schema.items.as_deref().unwrap_or(&free);
                Value::Array(
                    (0..len as usize)
                        .map_while(|i| {
                            (self.budget.get() > 0).then(|| self.make(item, &item_name, i))
                        })
                        .collect(),
                )
            }
            JsonType::Object => {
                if schema.properties.is_empty() {
                    let mut fields = Map::new();
                    fields.insert("offline_model".into(), Value::Bool(true));
                    fields.insert("you_said".into(), Value::String(self.user.to_string()));
                    return Value::Object(fields);
                }
                Value::Object(
                    schema
                        .properties
                        .iter()
                        .map(|(property, schema)| {
                            (property.clone(), self.make(schema, property, index))
                        })
                        .collect(),
                )
            }
        }
    }

    /// The type to make: the first the schema allows (not `null` when
    /// another is allowed), else what its other keywords suggest.
    fn type_of(&self, schema: &ValueSchema) -> JsonType {
        if let Some(ty) = schema.types.iter().find(|t| **t != JsonType::Null) {
            return *ty;
        }
        if let Some(ty) = schema.types.first() {
            return *ty;
        }
        if !schema.properties.is_empty() {
            JsonType::Object
        } else if schema.items.is_some() || schema.min_items.is_some() {
            JsonType::Array
        } else if schema.minimum.is_some() || schema.maximum.is_some() {
            JsonType::Number
        } else {
            JsonType::String
        }
    }

    fn pick(&self, allowed: &[Value], name: &str, index: usize) -> Value {
        let key = allowed.as_ptr() as usize;
        let mentioned = *self.mentioned.borrow_mut().entry(key).or_insert_with(|| {
            allowed.iter().position(|value| {
                value.as_str().is_some_and(|text| {
                    !text.is_empty() && self.lower.contains(&text.to_lowercase())
                })
            })
        });
        let at =
            mentioned.unwrap_or_else(|| (self.hash(name, index) % allowed.len() as u64) as usize);
        allowed[at].clone()
    }

    fn text(&self, schema: &ValueSchema, name: &str, index: usize) -> String {
        if index == 0
            && let Some(said) = self.said(name)
        {
            return said;
        }
        let what = if name.is_empty() {
            schema.description.as_deref().unwrap_or("value")
        } else {
            name
        };
        let what: String = what.replace('_', " ").chars().take(MAX_NAME).collect();
        let gist: String = self.user.trim().chars().take(80).collect();
        format!("offline {what} {}: {}", index + 1, gist.to_lowercase())
    }

    fn integer(&self, schema: &ValueSchema, name: &str, index: usize) -> Value {
        let (low, high) = (schema.minimum, schema.maximum);
        let low = low.map(|n| n.ceil() as i64);
        let high = high.map(|n| n.floor() as i64);
        if let Some(n) = self.said_number(name)
            && n.fract() == 0.0
            && low.is_none_or(|low| n as i64 >= low)
            && high.is_none_or(|high| n as i64 <= high)
        {
            return Value::from(n as i64);
        }
        let hash = self.hash(name, index);
        let n = match (low, high) {
            (Some(low), Some(high)) if high >= low => {
                // In i128: the span of i64's whole range does not fit an i64.
                let span = (i128::from(high) - i128::from(low) + 1) as u128;
                let n = i128::from(low) + (u128::from(hash) % span) as i128;
                i64::try_from(n).unwrap_or(high)
            }
            (Some(low), _) => low.saturating_add((hash % 10) as i64),
            (None, Some(high)) => high.saturating_sub((hash % 10) as i64),
            (None, None) => (hash % 100) as i64,
        };
        Value::from(n)
    }

    fn number(&self, schema: &ValueSchema, name: &str, index: usize) -> Value {
        let (low, high) = (schema.minimum, schema.maximum);
        if let Some(n) = self.said_number(name)
            && low.is_none_or(|low| n >= low)
            && high.is_none_or(|high| n <= high)
        {
            return number(n);
        }
        let share = (self.hash(name, index) % 101) as f64 / 100.0;
        let n = match (low, high) {
            (Some(low), Some(high)) => low + (high - low) * share,
            (Some(low), None) => low + share * 10.0,
            (None, Some(high)) => high - share * 10.0,
            (None, None) => share * 100.0,
        };
        // Two decimals, kept inside the bounds.
        let mut n = (n * 100.0).round() / 100.0;
        if let Some(low) = low {
            n = n.max(low);
        }
        if let Some(high) = high {
            n = n.min(high);
        }
        number(n)
    }

    /// What the message says after the property's name (`name: text` or
    /// `name is text`), up to the end of its clause.
    fn said(&self, name: &str) -> Option<String> {
        if name.len() > MAX_NAME {
            return None;
        }
        if let Some(known) = self.said.borrow().get(name) {
            return known.clone();
        }
        let spaced = name.replace('_', " ");
        let found = self
            .said_as(name)
            .or_else(|| (spaced != name).then(|| self.said_as(&spaced)).flatten());
        self.said
            .borrow_mut()
            .insert(name.to_string(), found.clone());
        found
    }

    fn said_as(&self, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        let text = self.user;
        // Byte offsets of the original text only, compared ignoring ASCII
        // case: lower-casing may change lengths, and slicing must stay on
        // character boundaries.
        let found = text.char_indices().filter_map(|(at, _)| {
            let end = at + name.len();
            let matches = text
                .as_bytes()
                .get(at..end)
                .is_some_and(|bytes| bytes.eq_ignore_ascii_case(name.as_bytes()));
            let starts_word = text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            (matches && starts_word && text.is_char_boundary(end)).then_some(end)
        });
        for end in found {
            let rest = &text[end..];
            let Some(rest) = rest
                .strip_prefix(':')
                .or_else(|| rest.strip_prefix(" is "))
                .or_else(|| rest.strip_prefix(" ="))
                .or_else(|| rest.strip_prefix(' '))
            else {
                continue;
            };
            // The clause ends at the first of these.
            let stop = [rest.find(['\n', ',', ';']), rest.find(". ")]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(rest.len());
            let value = rest[..stop].trim().trim_end_matches('.').trim();
            if !value.is_empty() {
                return Some(value.chars().take(MAX_SAID).collect());
            }
        }
        None
    }

    fn said_number(&self, name: &str) -> Option<f64> {
        let said = self.said(name)?;
        let number: String = said
            .trim_start_matches(['$', '€', '£'])
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
            .collect();
        number.parse::<f64>().ok().filter(|n| n.is_finite())
    }

    /// A stable number from the message, the property and the item's place.
    fn hash(&self, name: &str, index: usize) -> u64 {
        fnv(self.seed, name.bytes().chain(index.to_le_bytes()))
    }
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn yes_or_no(text: &str) -> Option<bool> {
    match text.to_lowercase().split_whitespace().next()? {
        "yes" | "true" | "y" => Some(true),
        "no" | "false" | "n" => Some(false),
        _ => None,
    }
}

/// A list's name made an item's: `topics` -> `topic`.
fn singular(name: &str) -> String {
    name.strip_suffix("ies")
        .map(|stem| format!("{stem}y"))
        .or_else(|| {
            name.strip_suffix('s')
                .filter(|stem| !stem.ends_with('s') && stem.len() > 1)
                .map(str::to_string)
        })
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests;
