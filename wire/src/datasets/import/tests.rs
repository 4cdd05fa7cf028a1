use super::*;
use crate::datasets::MAX_LABEL_CHARS;
use serde_json::json;

fn channels() -> Vec<InputChannel> {
    vec![
        InputChannel {
            name: "messages".into(),
            ty: ChannelType::Messages,
        },
        InputChannel {
            name: "limit".into(),
            ty: ChannelType::Integer,
        },
    ]
}

#[test]
fn json_lines_are_read_with_either_name_for_the_label() {
    let text = concat!(
        "{\"input\": {\"q\": 1}, \"reference\": {\"answer\": \"a\"}, \"label\": \"one\"}\n",
        "\n",
        "{\"input\": {\"q\": 2}, \"id\": \"two\"}\n",
    );
    let examples = read_json_lines(text).unwrap();
    assert_eq!(examples.len(), 2);
    assert_eq!(examples[0].label.as_deref(), Some("one"));
    assert_eq!(examples[0].reference, Some(json!({"answer": "a"})));
    assert_eq!(examples[1].label.as_deref(), Some("two"));
    assert_eq!(examples[1].reference, None);
}

#[test]
fn every_bad_json_line_is_named_by_its_number() {
    let text = concat!(
        "{\"input\": {\"q\": 1}}\n",
        "{\"input\": [1]}\n",
        "not json\n",
        "{\"input\": {}, \"extra\": 1}\n",
    );
    let problems = read_json_lines(text).unwrap_err();
    let lines: Vec<usize> = problems.iter().map(|problem| problem.line).collect();
    assert_eq!(lines, [2, 3, 4]);
    assert!(
        problems[0].to_string().starts_with("line 2: at input: "),
        "{}",
        problems[0]
    );
    assert!(problems[2].to_string().contains("extra"), "{}", problems[2]);
    assert_eq!(
        read_json_lines("\n \n").unwrap_err()[0].to_string(),
        "the file holds no examples"
    );
}

#[test]
fn a_value_past_the_servers_bounds_is_refused_at_its_line() {
    let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    let text = format!("{{\"input\": {{\"q\": {deep}}}}}\n");
    let problems = read_json_lines(&text).unwrap_err();
    assert_eq!(problems[0].line, 1);
    assert!(
        problems[0].message.starts_with("the input: "),
        "{}",
        problems[0]
    );
    let long = "x".repeat(MAX_LABEL_CHARS + 1);
    let text = format!("{{\"input\": {{\"q\": 1}}, \"label\": \"{long}\"}}");
    assert!(
        read_json_lines(&text).unwrap_err()[0]
            .message
            .contains("label")
    );
}

#[test]
fn problems_stop_at_twenty() {
    let text = "nope\n".repeat(100);
    assert_eq!(read_json_lines(&text).unwrap_err().len(), MAX_PROBLEMS);
}

#[test]
fn a_table_maps_columns_by_name_then_by_what_is_left() {
    let table = read_table(
        "cases.csv",
        "id,question,expected,notes\nr1,\"Where is, my order?\",shipped,\nr2,Refund?,14 days,vip\n",
    )
    .unwrap();
    assert_eq!(table.headers, ["id", "question", "expected", "notes"]);
    let only_messages = &channels()[..1];
    let mapping = guess_mapping(&table.headers, only_messages);
    assert_eq!(
        mapping,
        [
            ColumnUse::Label,
            ColumnUse::Input("messages".into()),
            ColumnUse::Reference("answer".into()),
            ColumnUse::Reference("notes".into()),
        ]
    );
    let examples = examples_from_table(&table, &mapping, only_messages).unwrap();
    assert_eq!(examples[0].label.as_deref(), Some("r1"));
    assert_eq!(
        examples[0].input["messages"],
        json!([{"role": "user", "content": "Where is, my order?"}])
    );
    // An empty cell is left out.
    assert_eq!(examples[0].reference, Some(json!({"answer": "shipped"})));
    assert_eq!(
        examples[1].reference,
        Some(json!({"answer": "14 days", "notes": "vip"}))
    );
}

#[test]
fn cells_are_read_as_their_channels_type_and_a_bad_one_is_named() {
    let table = read_table(
        "",
        "messages,LIMIT\nhi,3\nhello,three\n\"[{\"\"role\"\":\"\"user\"\",\"\"content\"\":\"\"x\"\"}]\",4\n",
    )
    .unwrap();
    let mapping = guess_mapping(&table.headers, &channels());
    assert_eq!(
        mapping,
        [
            ColumnUse::Input("messages".into()),
            ColumnUse::Input("limit".into())
        ]
    );
    let problems = examples_from_table(&table, &mapping, &channels()).unwrap_err();
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].to_string(),
        "line 3, column `LIMIT`: `three` is not a whole number"
    );
    let fixed = Table {
        rows: vec![table.rows[0].clone(), table.rows[2].clone()],
        ..table
    };
    let examples = examples_from_table(&fixed, &mapping, &channels()).unwrap();
    assert_eq!(examples[0].input["limit"], json!(3));
    assert_eq!(examples[1].input["messages"][0]["content"], "x");
}

#[test]
fn a_mapping_without_an_input_or_with_one_filled_twice_is_refused() {
    let table = read_table("", "a,b\n1,2\n").unwrap();
    let none = [ColumnUse::Label, ColumnUse::Skip];
    assert!(
        examples_from_table(&table, &none, &channels()).unwrap_err()[0]
            .message
            .contains("no column fills an input")
    );
    let twice = [
        ColumnUse::Input("limit".into()),
        ColumnUse::Input("limit".into()),
    ];
    assert_eq!(
        examples_from_table(&table, &twice, &channels()).unwrap_err()[0].to_string(),
        "line 1, column `b`: input `limit` is filled by an earlier column too"
    );
}

#[test]
fn a_ragged_or_headless_table_is_refused_at_its_line() {
    let problem = read_table("", "a,b\n1,2\n1,2,3\n").unwrap_err();
    assert_eq!(
        problem.to_string(),
        "line 3: 3 cells where the header has 2"
    );
    assert!(
        read_table("", "a,a\n1,2\n")
            .unwrap_err()
            .message
            .contains("two columns")
    );
    assert!(
        read_table("", "a,b\n")
            .unwrap_err()
            .message
            .contains("no rows")
    );
    assert!(
        read_table("", ",\n1,2\n")
            .unwrap_err()
            .message
            .contains("name the columns")
    );
}

#[test]
fn tab_separated_tables_are_read_too() {
    let table = read_table("", "question\tlabel\nhi, there\tone\n").unwrap();
    assert_eq!(table.headers, ["question", "label"]);
    assert_eq!(
        table.rows[0],
        (2, vec!["hi, there".to_string(), "one".to_string()])
    );
}

#[test]
fn the_format_is_known_by_name_then_by_content() {
    assert_eq!(FileFormat::of("a.CSV", "{"), FileFormat::Csv);
    assert_eq!(FileFormat::of("a.jsonl", "q,a"), FileFormat::JsonLines);
    assert_eq!(
        FileFormat::of("", "  {\"input\": {}}"),
        FileFormat::JsonLines
    );
    assert_eq!(FileFormat::of("pasted", "q,a"), FileFormat::Csv);
}

#[test]
fn batches_hold_at_most_a_thousand_examples_and_about_the_bytes_given() {
    let example = |text: &str| ExampleInput {
        input: Map::from_iter([("q".to_string(), json!(text))]),
        reference: None,
        label: None,
    };
    let many: Vec<ExampleInput> = (0..2_500).map(|_| example("x")).collect();
    let sizes: Vec<usize> = batches(&many, usize::MAX).iter().map(|b| b.len()).collect();
    assert_eq!(sizes, [1_000, 1_000, 500]);
    let big: Vec<ExampleInput> = (0..5).map(|_| example(&"y".repeat(100))).collect();
    let sizes: Vec<usize> = batches(&big, 300).iter().map(|b| b.len()).collect();
    assert_eq!(sizes, [2, 2, 1]);
    // One example larger than the budget still goes, alone.
    assert_eq!(batches(&big[..1], 10).len(), 1);
}
