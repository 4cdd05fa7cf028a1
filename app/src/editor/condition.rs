//! A condition as it is typed (an edge's condition, a `condition` node's
//! expression): checked with the engine's own parser on every keystroke,
//! so the field says what is wrong before anything is saved.

/// What is wrong with a condition, located ("at column 7: ..."), if anything.
pub fn condition_problem(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    heddle_engine::expr::Expr::parse(text)
        .err()
        .map(|error| format!("at column {}: {}", error.offset + 1, error.message))
}

#[cfg(test)]
mod tests {
    use super::condition_problem;

    #[test]
    fn conditions_are_checked_as_typed() {
        assert_eq!(condition_problem(""), None);
        assert_eq!(condition_problem("count < 3"), None);
        let problem = condition_problem("count <").unwrap_or_default();
        assert!(problem.starts_with("at column "), "{problem}");
    }
}
