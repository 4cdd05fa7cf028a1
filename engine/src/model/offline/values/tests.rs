//! The offline model's values fit their schemas: 50 generated schemas
//! over the whole subset, and the readings of a message it does.

use serde_json::{Value, json};

use super::for_schema;
use crate::model::ReplySchema;
use crate::schema::ValueSchema;

fn wanted(name: &str, schema: Value) -> ReplySchema {
    ReplySchema {
        name: name.into(),
        schema,
    }
}

/// A small deterministic generator (xorshift), so the 50 schemas are the
/// same on every run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

fn schema(dice: &mut Dice, depth: u32) -> Value {
    let leaf = depth >= 3;
    match dice.roll(if leaf { 5 } else { 7 }) {
        0 => json!({"type": "string", "description": "some text"}),
        1 => {
            let low = dice.roll(50) as i64 - 25;
            json!({"type": "integer", "minimum": low, "maximum": low + dice.roll(7) as i64})
        }
        2 => match dice.roll(3) {
            0 => json!({"type": "number", "minimum": 0.5, "maximum": 0.75}),
            1 => json!({"type": "number", "maximum": -3}),
            _ => json!({"type": "number"}),
        },
        3 => json!({"type": ["boolean", "null"]}),
        4 => json!({"enum": ["low", "high", 3, null]}),
        5 => {
            let min = dice.roll(4);
            let mut list =
                json!({"type": "array", "items": schema(dice, depth + 1), "minItems": min});
            if dice.roll(2) == 0 {
                list["maxItems"] = json!(min + dice.roll(3));
            }
            list
        }
        _ => {
            let count = 1 + dice.roll(4);
            let properties: serde_json::Map<String, Value> = (0..count)
                .map(|i| (format!("field_{i}"), schema(dice, depth + 1)))
                .collect();
            let required: Vec<&String> = properties.keys().filter(|_| dice.roll(2) == 0).collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
    }
}

#[test]
fn values_fit_fifty_generated_schemas_and_do_not_change() {
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    for n in 0..50 {
        let written = schema(&mut dice, 0);
        let parsed = ValueSchema::parse(&written)
            .unwrap_or_else(|problems| panic!("schema {n} {written}: {problems:?}"));
        for message in ["", "How do heat pumps work?", "field_0: 7, field_1 is yes"] {
            let value = for_schema(&wanted("answer", written.clone()), message);
            assert_eq!(
                parsed.check(&value),
                Ok(()),
                "schema {n} {written} gave {value} for {message:?}"
            );
            assert_eq!(
                value,
                for_schema(&wanted("answer", written.clone()), message),
                "the same request gives the same value"
            );
        }
    }
}

#[test]
fn a_plan_is_a_list_of_texts_that_say_they_are_offline() {
    let plan = for_schema(
        &wanted(
            "topics",
            json!({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4}),
        ),
        "How do heat pumps work?",
    );
    assert_eq!(
        plan,
        json!([
            "offline topic 1: how do heat pumps work?",
            "offline topic 2: how do heat pumps work?",
            "offline topic 3: how do heat pumps work?"
        ])
    );
}

#[test]
fn named_values_are_read_from_the_message() {
    let order = json!({
        "type": "object",
        "properties": {
            "customer": {"type": "string"},
            "total": {"type": "number", "minimum": 0},
            "express": {"type": "boolean"},
            "priority": {"enum": ["low", "normal", "urgent"]},
            "items": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
        },
        "required": ["customer", "total"]
    });
    let value = for_schema(
        &wanted("order", order.clone()),
        "Customer: Ada Lovelace, total $12.50; express: yes. This is urgent!",
    );
    assert_eq!(value["customer"], "Ada Lovelace");
    assert_eq!(value["total"], 12.5);
    assert_eq!(value["express"], true);
    assert_eq!(value["priority"], "urgent");
    assert_eq!(value["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(ValueSchema::parse(&order).unwrap().check(&value), Ok(()));
}

#[test]
fn a_named_value_outside_the_bounds_is_not_used() {
    let value = for_schema(
        &wanted(
            "score",
            json!({"type": "integer", "minimum": 1, "maximum": 5}),
        ),
        "score: 9",
    );
    let score = value.as_i64().expect("an integer");
    assert!((1..=5).contains(&score), "{score}");
}

#[test]
fn text_in_any_script_is_read_safely() {
    // Lower-casing changes byte lengths here; offsets must not drift.
    let value = for_schema(
        &wanted(
            "city",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ),
        "İİİ ß city: Zürich",
    );
    assert_eq!(value["city"], "Zürich");
}

#[test]
fn a_schema_asking_for_too_much_gets_a_bounded_answer() {
    let nested = json!({"type": "array", "minItems": 1000, "items":
        {"type": "array", "minItems": 1000, "items": {"type": "array", "minItems": 1000}}});
    let value = for_schema(&wanted("huge", nested), "anything");
    fn count(value: &Value) -> usize {
        1 + value
            .as_array()
            .map_or(0, |items| items.iter().map(count).sum())
    }
    assert!(count(&value) <= 10_001, "{}", count(&value));
}

#[test]
fn a_message_of_megabytes_is_read_only_at_its_start() {
    let schema = json!({"type": "object", "properties": {"customer": {"type": "string"}, "n": {"type": "integer"}}});
    let mut message = String::from("customer: Ada, ");
    message.push_str(&"é".repeat(4_000_000));
    let value = for_schema(&wanted("order", schema.clone()), &message);
    assert_eq!(value["customer"], "Ada");
    assert_eq!(ValueSchema::parse(&schema).unwrap().check(&value), Ok(()));
}

#[test]
fn bounds_as_wide_as_numbers_go_do_not_overflow() {
    for schema in [
        json!({"type": "integer", "minimum": -1e300, "maximum": 1e300}),
        json!({"type": "integer", "minimum": -9223372036854775808i64, "maximum": 9223372036854775807i64}),
        json!({"type": "number", "minimum": -1e308, "maximum": 1e308}),
        json!({"type": "integer", "minimum": 1e300}),
        json!({"type": "integer", "maximum": -1e300}),
    ] {
        for message in ["", "answer: 99999999999999999999999"] {
            // No panic, whatever it answers.
            let _ = for_schema(&wanted("answer", schema.clone()), message);
        }
    }
    let value = for_schema(
        &wanted(
            "n",
            json!({"type": "integer", "minimum": -1e300, "maximum": 1e300}),
        ),
        "anything",
    );
    assert!(value.is_i64(), "{value}");
}
