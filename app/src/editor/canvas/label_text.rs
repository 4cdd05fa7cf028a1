//! An edge's label as drawn: its route or condition, shortened so long
//! ones keep their start and end and still read apart.

/// An edge's label as drawn: short ones whole; long ones keep their start
/// and their end, so two conditions that share a beginning still read
/// apart (the whole text is the label's tooltip).
pub fn edge_label(full: &str) -> String {
    const MAX: usize = 28;
    let chars: Vec<char> = full.chars().collect();
    if chars.len() <= MAX {
        return full.to_string();
    }
    let head: String = chars[..MAX / 2].iter().collect();
    let tail: String = chars[chars.len() - (MAX / 2 - 1)..].iter().collect();
    format!("{}…{}", head.trim_end(), tail.trim_start())
}

#[cfg(test)]
mod tests {
    use super::edge_label;

    #[test]
    fn long_labels_keep_their_start_and_end_so_they_read_apart() {
        assert_eq!(edge_label("count < 3"), "count < 3");
        let a = edge_label("len(last(messages).tool_calls) > 0");
        let b = edge_label("len(last(messages).tool_calls) == 0");
        assert_ne!(a, b);
        assert_eq!(a, "len(last(messa…ol_calls) > 0");
        assert!(a.chars().count() <= 28, "{a}");
        assert!(b.ends_with("== 0"), "{b}");
    }
}
