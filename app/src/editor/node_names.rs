//! Nodes named as a person reads them. Messages from the engine (problems,
//! fixes, version summaries, a run's failure) name nodes by id in
//! backticks (`` `llm_2` ``); wherever a person reads one, each node is
//! named by its label instead (“Writer”), as the canvas shows it.

// A plain function over text, so both the editor (`Editor::named`) and
// the words said of an edit (`edit_words`) use it without an import circle.

/// A message with each node it names in backticks (`` `llm_2` ``) named by
/// its label instead (“Writer”), when it has one.
pub fn name_nodes(message: &str, label_of: impl Fn(&str) -> Option<String>) -> String {
    let mut named = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let Some(length) = rest[open + 1..].find('`') else {
            break;
        };
        let inner = &rest[open + 1..open + 1 + length];
        named.push_str(&rest[..open]);
        match label_of(inner) {
            Some(label) => {
                named.push('“');
                named.push_str(&label);
                named.push('”');
            }
            None => {
                named.push('`');
                named.push_str(inner);
                named.push('`');
            }
        }
        rest = &rest[open + length + 2..];
    }
    named.push_str(rest);
    named
}

#[cfg(test)]
mod tests {
    use super::name_nodes;

    #[test]
    fn nodes_named_in_a_message_are_named_by_their_labels() {
        let label = |id: &str| (id == "llm_2").then(|| "Writer".to_string());
        assert_eq!(
            name_nodes(
                "node `llm_2` reads `messages`, which `start` never sets",
                label
            ),
            "node “Writer” reads `messages`, which `start` never sets"
        );
        assert_eq!(name_nodes("an odd ` quote", label), "an odd ` quote");
        assert_eq!(name_nodes("", label), "");
    }
}
