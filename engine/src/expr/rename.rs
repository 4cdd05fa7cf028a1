//! Renaming a state channel inside an expression's text, for the editor's
//! "rename a channel everywhere it is used". Only the names that read the
//! channel change: a field (`x.count`), a function (`len(..)`), an object
//! key (`{count: 1}`) or a string that happens to spell the name stay as
//! they are, and every other character of the text is kept.

use super::Expr;
use super::error::ParseError;
use super::lexer::{Token, tokenize};

/// `source` with every read of channel `from` made a read of `to`, and
/// whether anything changed. `source` must parse (a broken expression is
/// left for its author to fix first).
pub fn rename_channel(source: &str, from: &str, to: &str) -> Result<(String, bool), ParseError> {
    Expr::parse(source)?;
    let tokens = tokenize(source)?;
    let mut out = String::with_capacity(source.len());
    let mut copied = 0;
    for (i, (token, at)) in tokens.iter().enumerate() {
        let Token::Ident(name) = token else {
            continue;
        };
        let after_dot = i > 0 && tokens[i - 1].0 == Token::Dot;
        let next = tokens.get(i + 1).map(|(token, _)| token);
        let called_or_key = matches!(next, Some(Token::LParen | Token::Colon));
        if name != from || after_dot || called_or_key {
            continue;
        }
        out.push_str(&source[copied..*at]);
        out.push_str(to);
        copied = at + name.len();
    }
    if copied == 0 {
        return Ok((source.to_string(), false));
    }
    out.push_str(&source[copied..]);
    Ok((out, true))
}

#[cfg(test)]
mod tests {
    use super::rename_channel;

    fn renamed(source: &str) -> String {
        rename_channel(source, "count", "total").unwrap().0
    }

    #[test]
    fn reads_of_the_channel_are_renamed_and_nothing_else() {
        assert_eq!(
            renamed("count < 3 && count != limit"),
            "total < 3 && total != limit"
        );
        assert_eq!(renamed("len(count)  >  x.count"), "len(total)  >  x.count");
        assert_eq!(renamed("{count: count}"), "{count: total}");
        assert_eq!(renamed("'count' == counter"), "'count' == counter");
        assert_eq!(renamed("count[0].count"), "total[0].count");
        assert_eq!(
            rename_channel("limit > 1", "count", "total").unwrap(),
            ("limit > 1".to_string(), false)
        );
    }

    #[test]
    fn a_broken_expression_is_refused() {
        assert!(rename_channel("count <", "count", "total").is_err());
    }
}
