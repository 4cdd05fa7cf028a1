//! Each keyword of the subset, checked for what it allows and refuses, and
//! schemas that do not make sense refused with where.

use serde_json::{Value, json};

use super::{Mismatch, ValueSchema};
use crate::format::ChannelType;

fn schema(value: Value) -> ValueSchema {
    ValueSchema::parse(&value).expect("a valid schema")
}

fn misfit(schema: &ValueSchema, value: Value) -> Mismatch {
    schema.check(&value).expect_err("the value should not fit")
}

fn problems(value: Value) -> Vec<String> {
    ValueSchema::parse(&value)
        .expect_err("the schema should be refused")
        .into_iter()
        .map(|problem| problem.to_string())
        .collect()
}

#[test]
fn type_checks_each_name_and_lists_of_them() {
    let cases = [
        ("string", json!("x"), json!(1)),
        ("number", json!(1.5), json!("1.5")),
        ("integer", json!(3), json!(3.5)),
        ("boolean", json!(true), json!("true")),
        ("array", json!([1]), json!({"0": 1})),
        ("object", json!({}), json!([])),
        ("null", json!(null), json!(0)),
    ];
    for (name, fits, misfits) in cases {
        let schema = schema(json!({"type": name}));
        assert_eq!(schema.check(&fits), Ok(()), "{name} should take {fits}");
        let mismatch = misfit(&schema, misfits.clone());
        assert_eq!(mismatch.path, "$", "{name}");
        assert!(
            mismatch.message.starts_with("expected "),
            "{name}: {mismatch}"
        );
    }
    let either = schema(json!({"type": ["string", "null"]}));
    assert_eq!(either.check(&json!(null)), Ok(()));
    assert_eq!(either.check(&json!("x")), Ok(()));
    assert_eq!(
        misfit(&either, json!(2)).message,
        "expected a string or null, got a number"
    );
    // No type: anything.
    assert_eq!(schema(json!({})).check(&json!([{"a": 1}])), Ok(()));
}

#[test]
fn properties_and_required_check_objects_with_the_path_of_the_misfit() {
    let order = schema(json!({
        "type": "object",
        "properties": {
            "customer": {"type": "string"},
            "items": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
                "required": ["name", "price"]
            }},
            "total": {"type": "number"}
        },
        "required": ["customer", "items"]
    }));
    let good = json!({"customer": "Ada", "items": [{"name": "pen", "price": 2}], "extra": true});
    assert_eq!(
        order.check(&good),
        Ok(()),
        "properties not listed are allowed"
    );
    let missing = misfit(&order, json!({"customer": "Ada"}));
    assert_eq!(missing.path, "$");
    assert_eq!(missing.message, "the required property `items` is missing");
    let deep = misfit(
        &order,
        json!({"customer": "Ada", "items": [{"name": "pen", "price": 2}, {"name": "ink", "price": -1}]}),
    );
    assert_eq!(deep.path, "$.items[1].price");
    assert_eq!(deep.message, "expected at least 0, got -1");
    let wrong = misfit(&order, json!({"customer": 7, "items": []}));
    assert_eq!(
        wrong.to_string(),
        "at $.customer: expected a string, got a number"
    );
    // Optional properties may be absent.
    assert_eq!(
        order.check(&json!({"customer": "Ada", "items": []})),
        Ok(())
    );
}

#[test]
fn odd_property_names_are_quoted_in_paths() {
    let schema = schema(json!({"properties": {"unit price": {"type": "number"}}}));
    assert_eq!(
        misfit(&schema, json!({"unit price": "x"})).path,
        "$[\"unit price\"]"
    );
}

#[test]
fn items_min_items_and_max_items_check_lists() {
    let topics = schema(json!({
        "type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3
    }));
    assert_eq!(topics.check(&json!(["a", "b"])), Ok(()));
    assert_eq!(
        misfit(&topics, json!(["a"])).message,
        "expected at least 2 items, got 1"
    );
    assert_eq!(
        misfit(&topics, json!(["a", "b", "c", "d"])).message,
        "expected at most 3 items, got 4"
    );
    let item = misfit(&topics, json!(["a", 2]));
    assert_eq!(item.path, "$[1]");
    // An append is checked item by item, at the items' places.
    assert_eq!(topics.check_items(&[json!("c")], 2), Ok(()));
    assert_eq!(topics.check_items(&[json!(3)], 2).unwrap_err().path, "$[2]");
    assert!(topics.check_length(4).is_err());
}

#[test]
fn enum_allows_only_its_values() {
    let priority = schema(json!({"enum": ["low", "high", 3]}));
    assert_eq!(priority.check(&json!("low")), Ok(()));
    assert_eq!(priority.check(&json!(3.0)), Ok(()), "3 == 3.0");
    assert_eq!(
        misfit(&priority, json!("medium")).message,
        "expected one of \"low\", \"high\", 3, got \"medium\""
    );
}

#[test]
fn minimum_and_maximum_bound_numbers() {
    let score = schema(json!({"type": "number", "minimum": 0, "maximum": 1}));
    assert_eq!(score.check(&json!(0)), Ok(()));
    assert_eq!(score.check(&json!(1)), Ok(()));
    assert_eq!(
        misfit(&score, json!(1.5)).message,
        "expected at most 1, got 1.5"
    );
    assert_eq!(
        misfit(&score, json!(-0.1)).message,
        "expected at least 0, got -0.1"
    );
}

#[test]
fn description_is_kept_and_must_be_text() {
    let described = schema(json!({"type": "string", "description": "a city"}));
    assert_eq!(described.description.as_deref(), Some("a city"));
    assert_eq!(
        problems(json!({"description": 3})),
        ["at `description`: a description is text"]
    );
}

#[test]
fn other_keywords_are_refused_where_they_are() {
    let found = problems(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^A"}},
        "additionalProperties": false
    }));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("at `additionalProperties`: `additionalProperties` is not a keyword Heddle checks; use type, properties"), "{found:?}");
    assert!(
        found[1].starts_with("at `properties.name.pattern`: "),
        "{found:?}"
    );
}

#[test]
fn schemas_that_cannot_make_sense_are_refused() {
    let cases = [
        (json!("string"), "a schema is a JSON object, not a string"),
        (json!({"type": "text"}), "at `type`: \"text\" is not a type"),
        (
            json!({"type": []}),
            "at `type`: `type` is a type name or a non-empty list",
        ),
        (
            json!({"type": "string", "minimum": 1}),
            "at `minimum`: `minimum` applies to numbers, and this schema's type is string",
        ),
        (
            json!({"type": "object", "maxItems": 1}),
            "at `maxItems`: `maxItems` applies to lists",
        ),
        (
            json!({"type": "string", "properties": {"a": {}}}),
            "at `properties`: `properties` applies to objects",
        ),
        (
            json!({"minimum": 2, "maximum": 1}),
            "at `minimum`: `minimum` 2 is above `maximum` 1",
        ),
        (
            json!({"minItems": 3, "maxItems": 1}),
            "at `minItems`: `minItems` 3 is above `maxItems` 1",
        ),
        (
            json!({"minItems": -1}),
            "at `minItems`: `minItems` is a whole number",
        ),
        (json!({"enum": []}), "at `enum`: `enum` is a non-empty list"),
        (
            json!({"type": "integer", "enum": [1, "two"]}),
            "at `enum[1]`: \"two\" does not fit this schema: expected a whole number, got a string",
        ),
        (
            json!({"properties": {"a": {}}, "required": ["b"]}),
            "at `required`: `b` is required but not among `properties`",
        ),
        (
            json!({"items": 3}),
            "at `items`: a schema is a JSON object, not a number",
        ),
    ];
    for (schema, expected) in cases {
        let found = problems(schema.clone());
        assert!(
            found.iter().any(|problem| problem.starts_with(expected)),
            "{schema}: expected {expected:?}, found {found:?}"
        );
    }
}

#[test]
fn nesting_and_size_are_bounded() {
    let mut deep = json!({"type": "string"});
    for _ in 0..40 {
        deep = json!({"type": "array", "items": deep});
    }
    let found = problems(deep);
    assert!(
        found.iter().any(|p| p.contains("nest at most 16 deep")),
        "{found:?}"
    );

    let wide: serde_json::Map<String, Value> = (0..600)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let found = problems(json!({"properties": wide}));
    assert!(
        found.iter().any(|p| p.contains("at most 512 schemas")),
        "{found:?}"
    );

    let many: Vec<Value> = (0..300).map(|i| json!(i)).collect();
    assert_eq!(
        problems(json!({"enum": many})),
        ["at `enum`: `enum` lists at most 256 values (300 here)"]
    );
}

#[test]
fn a_schema_agrees_with_its_channel_type_or_is_refused() {
    let list = schema(json!({"type": "array"}));
    assert!(list.agrees_with(ChannelType::List));
    assert!(list.agrees_with(ChannelType::Any));
    assert!(!list.agrees_with(ChannelType::Object));
    assert!(schema(json!({"type": "integer"})).agrees_with(ChannelType::Number));
    assert!(!schema(json!({"type": "number"})).agrees_with(ChannelType::Integer));
    assert!(schema(json!({"enum": ["a"]})).agrees_with(ChannelType::String));
    assert!(!schema(json!({})).agrees_with(ChannelType::Messages));
}

#[test]
fn strict_modes_need_every_property_required_and_every_shape_said() {
    let strict = |value: Value| schema(value).strict_compatible();
    assert!(strict(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    ));
    assert!(!strict(
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]})
    ));
    assert!(!strict(
        json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}})
    ));
    assert!(strict(
        json!({"type": "array", "items": {"type": "string"}})
    ));
    assert!(strict(json!({"enum": ["a", "b"]})));
    assert!(!strict(json!({"type": "object"})), "a free-form object");
    assert!(!strict(json!({"type": "array"})), "a list of anything");
    assert!(!strict(json!({})), "no type");
}

#[test]
fn appends_and_merges_check_what_they_write() {
    let topics =
        schema(json!({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3}));
    // A list grows toward `minItems`: one item at a time is fine.
    assert_eq!(topics.check_append(&[json!("a")], 0), Ok(()));
    assert_eq!(
        topics.check_append(&[json!(1)], 1).unwrap_err().path,
        "$[1]"
    );
    assert_eq!(
        topics
            .check_append(&[json!("c"), json!("d")], 2)
            .unwrap_err()
            .message,
        "expected at most 3 items, got 4"
    );
    let order = schema(json!({"type": "object",
        "properties": {"total": {"type": "number"}, "name": {"type": "string"}},
        "required": ["name", "total"]}));
    // An object is filled in a field at a time: `required` waits.
    assert_eq!(
        order.check_merge(json!({"total": 3}).as_object().unwrap()),
        Ok(())
    );
    let wrong = order
        .check_merge(json!({"total": "3"}).as_object().unwrap())
        .unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "at $.total: expected a number, got a string"
    );
}

#[test]
fn a_long_enum_is_named_briefly() {
    let many: Vec<Value> = (0..40).map(|i| json!(format!("value-{i}"))).collect();
    let message = misfit(&schema(json!({"enum": many})), json!("other")).message;
    assert!(message.contains("... (40 in all)"), "{message}");
    assert!(message.len() < 300, "{message}");
}
