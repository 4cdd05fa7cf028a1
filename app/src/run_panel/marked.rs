//! A value as readable JSON with the lines that differ from another value
//! marked, so a changed channel or two runs' states show *what* differs,
//! not only that something does: a step's new message, the one field a
//! fork edited. Lines are diffed with `similar` (Myers), so a list that
//! grew marks only its new items.

use leptos::prelude::*;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::show_json;

/// One line of a value as shown, and whether it differs from the other
/// value's lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub text: String,
    pub differs: bool,
}

/// The lines of `value` (as `show_json` writes it, cut at `limit`), each
/// marked when it is not among `other`'s lines at that place.
pub fn marked_lines(value: &Value, other: &Value, limit: usize) -> Vec<Line> {
    let (mine, theirs) = (show_json(value, limit), show_json(other, limit));
    TextDiff::from_lines(&theirs, &mine)
        .iter_all_changes()
        .filter(|change| change.tag() != ChangeTag::Delete)
        .map(|change| Line {
            text: change.value().trim_end_matches('\n').to_string(),
            differs: change.tag() == ChangeTag::Insert,
        })
        .collect()
}

/// `value` as JSON, its lines that differ from `against` highlighted; the
/// text is the value's own (a reader or a test reads the value). With
/// `label_of`, a message's `"name"` that is a node's id shows that node's
/// label beside it, as the canvas names it ("llm_3" · Billing), drawn by
/// the style sheet: the text stays the value's.
#[component]
pub fn MarkedJson(
    value: Value,
    against: Value,
    #[prop(default = 2000)] limit: usize,
    #[prop(optional)] label_of: Option<Callback<String, Option<String>>>,
) -> impl IntoView {
    // A block per line, so a marked line is marked across the cell.
    view! {
        <pre tabindex="0" class="json marked">
            {marked_lines(&value, &against, limit).into_iter().map(|line| {
                let label = label_of
                    .and_then(|label_of| named_in(&line.text).and_then(|id| label_of.run(id.to_string())));
                view! { <span class:differs=line.differs class:named=label.is_some() data-label=label>{line.text}</span> }
            }).collect_view()}
        </pre>
    }
}

/// The name a line of JSON gives as `"name": "…"` (a message's author).
fn named_in(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("\"name\": \"")?;
    let name = rest
        .strip_suffix("\",")
        .or_else(|| rest.strip_suffix('"'))?;
    (!name.contains('"')).then_some(name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{marked_lines, named_in};

    #[test]
    fn a_messages_author_is_read_from_its_line() {
        assert_eq!(named_in(r#"    "name": "llm_3","#), Some("llm_3"));
        assert_eq!(named_in(r#"  "name": "triage""#), Some("triage"));
        assert_eq!(named_in(r#"  "content": "name""#), None);
        assert_eq!(named_in(r#"  "name": "a\"b","#), None);
    }

    fn differing(value: serde_json::Value, other: serde_json::Value) -> Vec<String> {
        marked_lines(&value, &other, 10_000)
            .into_iter()
            .filter(|line| line.differs)
            .map(|line| line.text.trim().to_string())
            .collect()
    }

    #[test]
    fn a_grown_list_marks_only_its_new_items() {
        let before = json!([{"role": "user", "content": "hi"}]);
        let after = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"}
        ]);
        let marked = differing(after, before);
        assert!(
            marked.contains(&"\"content\": \"hello\",".to_string()),
            "{marked:?}"
        );
        assert!(
            !marked.iter().any(|line| line.contains("\"hi\"")),
            "{marked:?}"
        );
    }

    #[test]
    fn an_edited_field_is_the_one_line_marked() {
        let marked = differing(
            json!({"count": 3, "target": 8}),
            json!({"count": 3, "target": 5}),
        );
        assert_eq!(marked, vec!["\"target\": 8".to_string()]);
    }

    #[test]
    fn equal_values_mark_nothing_and_text_is_the_value() {
        let lines = marked_lines(&json!("plain text"), &json!("plain text"), 100);
        assert_eq!(lines.len(), 1);
        assert!(!lines[0].differs);
        assert_eq!(lines[0].text, "plain text");
        assert_eq!(differing(json!(2), json!(1)), vec!["2".to_string()]);
    }
}
