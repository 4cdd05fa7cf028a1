//! Text templates: literal text with `{{ expression }}` holes, each hole an
//! expression of the condition language. Strings are inserted as they are,
//! `null` as nothing, anything else as JSON.

use serde_json::Value;

use crate::expr::{EvalError, Expr, ParseError};
use crate::node::ConfigIssue;

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Hole(Expr),
}

impl Template {
    pub(crate) fn parse(source: &str) -> Result<Template, ParseError> {
        let mut parts = Vec::new();
        let mut rest = source;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                return Err(ParseError::new(offset + open, "`{{` is not closed by `}}`"));
            };
            let expr = Expr::parse(&after[..close]).map_err(|error| {
                ParseError::new(offset + open + 2 + error.offset, error.message)
            })?;
            parts.push(Part::Hole(expr));
            let consumed = open + 2 + close + 2;
            offset += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// Parses the template in config field `field`; a parse error becomes an
    /// issue at that field and `None`, so a node can report every issue.
    pub(crate) fn parse_field(
        field: &str,
        source: &str,
        issues: &mut Vec<ConfigIssue>,
    ) -> Option<Template> {
        Template::parse(source)
            .map_err(|error| issues.push(ConfigIssue::new(field, error.to_string())))
            .ok()
    }

    pub(crate) fn render(
        &self,
        scope: &dyn Fn(&str) -> Option<Value>,
    ) -> Result<String, EvalError> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Hole(expr) => match expr.eval(scope)? {
                    Value::String(text) => out.push_str(&text),
                    Value::Null => {}
                    other => out.push_str(&other.to_string()),
                },
            }
        }
        Ok(out)
    }
}

/// `source` with every read of channel `from` in its holes made a read of
/// `to`, and whether anything changed; the text around the holes is kept
/// as it is. A template that does not parse is refused.
pub fn rename_in_template(
    source: &str,
    from: &str,
    to: &str,
) -> Result<(String, bool), ParseError> {
    Template::parse(source)?;
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    let mut changed = false;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        // The template parsed: every hole is closed.
        let close = after.find("}}").unwrap_or(after.len());
        let (hole, renamed) = crate::expr::rename_channel(&after[..close], from, to)?;
        out.push_str(&rest[..open + 2]);
        out.push_str(&hole);
        changed |= renamed;
        rest = &after[close..];
    }
    out.push_str(rest);
    Ok((out, changed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holes_are_filled_from_the_scope() {
        let template =
            Template::parse("Hi {{ name }}, you have {{ count + 1 }} {{missing}}items").unwrap();
        let state = json!({"name": "Ada", "count": 2});
        let text = template.render(&|n| state.get(n).cloned()).unwrap();
        assert_eq!(text, "Hi Ada, you have 3 items");
    }

    #[test]
    fn unclosed_and_bad_holes_are_located() {
        assert_eq!(Template::parse("ab {{ x").unwrap_err().offset, 3);
        assert_eq!(Template::parse("ab {{ x + }}").unwrap_err().offset, 10);
        assert_eq!(
            Template::parse("no holes")
                .unwrap()
                .render(&|_| None)
                .unwrap(),
            "no holes"
        );
    }

    #[test]
    fn a_channel_renamed_in_a_template_keeps_the_text_around_it() {
        let (text, changed) = super::rename_in_template(
            "Dear {{ name }}, {{name}} is {{ 'name' }} of {{ len(name) }}: name",
            "name",
            "who",
        )
        .unwrap();
        assert!(changed);
        assert_eq!(
            text,
            "Dear {{ who }}, {{who}} is {{ 'name' }} of {{ len(who) }}: name"
        );
        assert_eq!(
            super::rename_in_template("plain", "name", "who").unwrap(),
            ("plain".to_string(), false)
        );
        assert!(super::rename_in_template("{{ name", "name", "who").is_err());
    }
}
