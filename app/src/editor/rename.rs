//! Renaming a state channel everywhere the graph uses it: the channel
//! itself, every node setting that names it (found through the kinds'
//! config schemas, so a kind added later is covered), map keys that name
//! channels, reads of it in conditions, expressions and `{{ }}` templates.
//! Scripts are code and are not rewritten; the ones that mention the name
//! are reported so their author can check them.

use heddle_engine::expr::rename_channel as rename_in_expression;
use heddle_engine::format::GraphDocument;
use heddle_engine::kinds::{BuiltinKind, rename_in_template};
use heddle_engine::node::FieldHint;
use serde_json::Value;
use thiserror::Error;

use super::config_form::shape::{Field, Shape, fields};

/// What a rename did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Renamed {
    /// How many places now say the new name (the channel's own entry
    /// included).
    pub places: usize,
    /// Nodes whose scripts mention the old name, left as they are.
    pub scripts: Vec<String>,
}

/// Why a rename was refused; nothing changed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RenameError {
    #[error("there is no channel `{0}`")]
    Unknown(String),
    #[error("a channel named `{0}` exists already")]
    Taken(String),
    #[error("`{0}` is not a channel name: use letters, digits and `_`, not starting with a digit")]
    BadName(String),
    #[error("{place} does not parse ({reason}); fix it first")]
    Broken { place: String, reason: String },
}

/// Renames channel `from` to `to` in `document`, everywhere: all or
/// nothing.
pub fn rename_channel(
    document: &mut GraphDocument,
    from: &str,
    to: &str,
) -> Result<Renamed, RenameError> {
    if !document.state.channels.contains_key(from) {
        return Err(RenameError::Unknown(from.to_string()));
    }
    if document.state.channels.contains_key(to) {
        return Err(RenameError::Taken(to.to_string()));
    }
    let readable = to
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && to.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !readable {
        return Err(RenameError::BadName(to.to_string()));
    }
    let mut work = document.clone();
    let mut walk = Walk {
        from,
        to,
        done: Renamed::default(),
        place: String::new(),
    };
    if let Some(channel) = work.state.channels.remove(from) {
        work.state.channels.insert(to.to_string(), channel);
        walk.done.places += 1;
    }
    for edge in &mut work.edges {
        if let Some(condition) = &mut edge.condition {
            walk.place = format!("the condition of edge `{}`", edge.id);
            walk.text(condition, FieldHint::Expression)?;
        }
    }
    for node in &mut work.nodes {
        let Some(kind) = BuiltinKind::from_name(&node.kind) else {
            continue;
        };
        let schema = kind.config_schema();
        walk.place = format!("a setting of node `{}`", node.id);
        walk.record(&fields(&schema), &mut node.config, node.id.as_str())?;
    }
    *document = work;
    Ok(walk.done)
}

/// The rename under way, and where it is (for errors).
struct Walk<'a> {
    from: &'a str,
    to: &'a str,
    done: Renamed,
    place: String,
}

impl Walk<'_> {
    fn record(
        &mut self,
        fields: &[Field],
        value: &mut Value,
        node: &str,
    ) -> Result<(), RenameError> {
        let Some(object) = value.as_object_mut() else {
            return Ok(());
        };
        for field in fields {
            if let Some(value) = object.get_mut(&field.key) {
                self.value(&field.shape, value, node)?;
            }
        }
        Ok(())
    }

    fn value(&mut self, shape: &Shape, value: &mut Value, node: &str) -> Result<(), RenameError> {
        match shape {
            Shape::Text(Some(FieldHint::Script)) => {
                let mentions = value.as_str().is_some_and(|code| mentions(code, self.from));
                if mentions && !self.done.scripts.iter().any(|n| n == node) {
                    self.done.scripts.push(node.to_string());
                }
            }
            Shape::Text(Some(hint)) => {
                if let Value::String(text) = value {
                    self.text(text, *hint)?;
                }
            }
            Shape::Names(hint) if names_channel(*hint) => {
                for item in value.as_array_mut().into_iter().flatten() {
                    if item.as_str() == Some(self.from) {
                        *item = Value::String(self.to.to_string());
                        self.done.places += 1;
                    }
                }
            }
            Shape::List(item) => {
                for value in value.as_array_mut().into_iter().flatten() {
                    self.value(item, value, node)?;
                }
            }
            Shape::Record(fields) => self.record(fields, value, node)?,
            Shape::Map { key, value: shape } => {
                let Some(map) = value.as_object_mut() else {
                    return Ok(());
                };
                if key.is_some_and(names_channel)
                    && let Some(moved) = map.remove(self.from)
                {
                    map.insert(self.to.to_string(), moved);
                    self.done.places += 1;
                }
                for value in map.values_mut() {
                    self.value(shape, value, node)?;
                }
            }
            Shape::Variants(variants) => {
                let Some(map) = value.as_object_mut() else {
                    return Ok(());
                };
                for variant in variants {
                    if let Some(value) = map.get_mut(&variant.key) {
                        self.value(&variant.shape, value, node)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A text naming or reading channels, by its hint.
    fn text(&mut self, text: &mut String, hint: FieldHint) -> Result<(), RenameError> {
        let renamed = match hint {
            FieldHint::Channel | FieldHint::MessagesChannel => {
                (text == self.from).then(|| self.to.to_string())
            }
            FieldHint::Expression => self.parsed(rename_in_expression(text, self.from, self.to))?,
            FieldHint::Template => self.parsed(rename_in_template(text, self.from, self.to))?,
            _ => None,
        };
        if let Some(renamed) = renamed {
            *text = renamed;
            self.done.places += 1;
        }
        Ok(())
    }

    fn parsed(
        &self,
        result: Result<(String, bool), heddle_engine::expr::ParseError>,
    ) -> Result<Option<String>, RenameError> {
        let (text, changed) = result.map_err(|error| RenameError::Broken {
            place: self.place.clone(),
            reason: error.to_string(),
        })?;
        Ok(changed.then_some(text))
    }
}

fn names_channel(hint: FieldHint) -> bool {
    matches!(hint, FieldHint::Channel | FieldHint::MessagesChannel)
}

/// Whether `code` has `name` as a whole word.
fn mentions(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let word = |c: char| c == '_' || c.is_ascii_alphanumeric();
        let before = code[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = code[at + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
}

#[cfg(test)]
mod tests {
    use heddle_engine::format::GraphDocument;
    use serde_json::json;

    use super::{RenameError, rename_channel};

    fn document() -> GraphDocument {
        GraphDocument::from_value(json!({
            "format_version": 2,
            "name": "t",
            "state": {"channels": {
                "question": {"type": "string"},
                "answer": {"type": "string"},
                "messages": {"type": "messages", "reducer": "add_messages"},
                "tries": {"type": "integer", "reducer": "sum"}
            }},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["question", "messages"]}},
                {"id": "ask", "kind": "llm", "config": {
                    "prompt": "Answer {{ question }} (not {{ 'question' }})",
                    "messages": "messages", "output": "answer"
                }},
                {"id": "count", "kind": "set", "config": {"values": {
                    "tries": {"value": 1},
                    "answer": {"template": "{{ question }}!"}
                }}},
                {"id": "code", "kind": "script", "config": {"source": "#{ answer: state.question }"}},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "ask"},
                {"id": "e2", "from": "ask", "to": "count"},
                {"id": "e3", "from": "count", "to": "code", "condition": "len(question) > tries"},
                {"id": "e4", "from": "code", "to": "end"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn a_channel_is_renamed_everywhere_it_is_used_and_scripts_are_named() {
        let mut doc = document();
        let done = rename_channel(&mut doc, "question", "query").unwrap();
        let text = doc.to_json();
        assert!(!text.contains("{{ question }}"), "{text}");
        assert!(doc.state.channels.contains_key("query"));
        assert!(!doc.state.channels.contains_key("question"));
        let node = |id: &str| {
            doc.nodes
                .iter()
                .find(|n| n.id.as_str() == id)
                .unwrap()
                .config
                .clone()
        };
        assert_eq!(node("start")["inputs"], json!(["query", "messages"]));
        assert_eq!(
            node("ask")["prompt"],
            "Answer {{ query }} (not {{ 'question' }})"
        );
        assert_eq!(
            node("count")["values"]["answer"]["template"],
            "{{ query }}!"
        );
        assert_eq!(
            doc.edges[2].condition.as_deref(),
            Some("len(query) > tries")
        );
        // The script is code: left alone, and named.
        assert_eq!(node("code")["source"], "#{ answer: state.question }");
        assert_eq!(done.scripts, vec!["code".to_string()]);
        assert_eq!(done.places, 5);
        // Map keys that name channels follow too.
        let done = rename_channel(&mut doc, "answer", "reply").unwrap();
        assert!(node_has_key(&doc, "count", "reply"));
        assert_eq!(
            doc.nodes
                .iter()
                .find(|n| n.id.as_str() == "ask")
                .unwrap()
                .config["output"],
            "reply"
        );
        assert_eq!(done.places, 3);
    }

    fn node_has_key(doc: &GraphDocument, node: &str, key: &str) -> bool {
        doc.nodes
            .iter()
            .find(|n| n.id.as_str() == node)
            .unwrap()
            .config["values"]
            .get(key)
            .is_some()
    }

    #[test]
    fn a_refused_rename_changes_nothing() {
        let mut doc = document();
        let before = doc.clone();
        assert_eq!(
            rename_channel(&mut doc, "question", "answer"),
            Err(RenameError::Taken("answer".into()))
        );
        assert_eq!(
            rename_channel(&mut doc, "nope", "x"),
            Err(RenameError::Unknown("nope".into()))
        );
        assert!(matches!(
            rename_channel(&mut doc, "question", "2bad"),
            Err(RenameError::BadName(_))
        ));
        doc.edges[2].condition = Some("len(question) >".into());
        let broken = doc.clone();
        let error = rename_channel(&mut doc, "question", "query").unwrap_err();
        assert!(error.to_string().contains("edge `e3`"), "{error}");
        assert_eq!(doc, broken, "all or nothing");
        assert_ne!(doc, before);
    }
}
