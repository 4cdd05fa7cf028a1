//! Channel completion inside a template as you type: after `{{` the
//! channels whose names start with what follows are offered; ↑ and ↓
//! choose, Enter or Tab (or a click) writes the name and closes the hole,
//! Escape dismisses. The text rules are plain functions, tested here; the
//! template widget draws the list.

/// A hole being typed: where the name being typed starts (a byte offset)
/// and what of it is typed so far, when the caret is inside an unclosed
/// `{{` followed only by the start of a name.
pub fn pending_hole(before_caret: &str) -> Option<(usize, &str)> {
    let open = before_caret.rfind("{{")?;
    let inside = &before_caret[open + 2..];
    if inside.contains("}}") {
        return None;
    }
    let typed = inside.trim_start();
    let start = before_caret.len() - typed.len();
    let mut chars = typed.chars();
    let name_like = chars
        .next()
        .is_none_or(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    name_like.then_some((start, typed))
}

/// The channels to offer for `typed`: those starting with it (ignoring
/// case) first, then those containing it; at most `limit`.
pub fn suggestions(channels: &[String], typed: &str, limit: usize) -> Vec<String> {
    let typed = typed.to_ascii_lowercase();
    let lower = |name: &String| name.to_ascii_lowercase();
    let starting = channels
        .iter()
        .filter(|name| lower(name).starts_with(&typed));
    let containing = channels
        .iter()
        .filter(|name| !lower(name).starts_with(&typed) && lower(name).contains(&typed));
    starting.chain(containing).take(limit).cloned().collect()
}

/// `text` with the name typed at `start..caret` replaced by `name` and the
/// hole closed (unless a `}}` follows already), and the caret after it.
pub fn complete(text: &str, start: usize, caret: usize, name: &str) -> (String, usize) {
    let after = &text[caret..];
    let closed = after.trim_start_matches([' ', '\t']).starts_with("}}");
    let close = if closed { "" } else { " }}" };
    let next = format!("{}{name}{close}{after}", &text[..start]);
    let at = start + name.len() + close.len();
    (next, at)
}

#[cfg(test)]
mod tests {
    use super::{complete, pending_hole, suggestions};

    #[test]
    fn a_hole_is_pending_only_while_a_name_is_typed_in_it() {
        assert_eq!(pending_hole("Hello {{ "), Some((9, "")));
        assert_eq!(pending_hole("Hello {{ ques"), Some((9, "ques")));
        assert_eq!(pending_hole("Hi {{na"), Some((5, "na")));
        assert_eq!(pending_hole("Hi {{ name }} and"), None);
        assert_eq!(pending_hole("Hi {{ len(x"), None);
        assert_eq!(pending_hole("no hole"), None);
    }

    #[test]
    fn names_starting_with_what_is_typed_come_first() {
        let channels: Vec<String> = ["answer", "question", "questions_asked", "my_question"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            suggestions(&channels, "quest", 8),
            ["question", "questions_asked", "my_question"]
        );
        assert_eq!(suggestions(&channels, "", 2), ["answer", "question"]);
        assert!(suggestions(&channels, "zzz", 8).is_empty());
    }

    #[test]
    fn completing_writes_the_name_and_closes_the_hole_once() {
        let text = "Say {{ qu";
        assert_eq!(
            complete(text, 7, text.len(), "question"),
            ("Say {{ question }}".to_string(), 18)
        );
        let text = "Say {{ qu }} now";
        assert_eq!(
            complete(text, 7, 9, "question"),
            ("Say {{ question }} now".to_string(), 15)
        );
    }
}
