//! Messages name channels, nodes and fields in backticks, as the engine
//! writes them (`` set `source` ``). Shown as they are, a screen reader
//! says "backtick" twice for each name, and a person reads stray marks;
//! here each name is drawn as code and the marks go.

use leptos::prelude::*;

/// `text` with each `` `name` `` drawn as `<code>name</code>`. A lone
/// backtick (no closing one) stays as it is.
#[component]
pub fn CodeSpans(#[prop(into)] text: String) -> impl IntoView {
    spans(&text)
        .into_iter()
        .map(|span| match span {
            Span::Text(text) => text.into_any(),
            Span::Code(name) => view! { <code>{name}</code> }.into_any(),
        })
        .collect_view()
}

#[derive(Debug, PartialEq)]
enum Span {
    Text(String),
    Code(String),
}

fn spans(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`') else {
            break;
        };
        if open > 0 {
            spans.push(Span::Text(rest[..open].to_string()));
        }
        spans.push(Span::Code(rest[open + 1..open + 1 + close].to_string()));
        rest = &rest[open + 2 + close..];
    }
    if !rest.is_empty() {
        spans.push(Span::Text(rest.to_string()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::{Span, spans};

    #[test]
    fn names_in_backticks_become_code_and_a_lone_mark_stays() {
        assert_eq!(
            spans("set `source`: it is required"),
            [
                Span::Text("set ".into()),
                Span::Code("source".into()),
                Span::Text(": it is required".into())
            ]
        );
        assert_eq!(
            spans("`a` and `b`"),
            [
                Span::Code("a".into()),
                Span::Text(" and ".into()),
                Span::Code("b".into())
            ]
        );
        assert_eq!(spans("it's 5` tall"), [Span::Text("it's 5` tall".into())]);
    }
}
