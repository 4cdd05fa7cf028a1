//! Splits an expression's text into tokens, each with its byte offset.

use super::error::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    Number(f64),
    Integer(i64),
    Str(String),
    Ident(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Colon,
    Comma,
    Dot,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Not,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    End,
}

pub(crate) fn tokenize(source: &str) -> Result<Vec<(Token, usize)>, ParseError> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let two = |next: u8| bytes.get(i + 1) == Some(&next);
        let token = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'(' => Token::LParen,
            b')' => Token::RParen,
            b'[' => Token::LBracket,
            b']' => Token::RBracket,
            b'{' => Token::LBrace,
            b'}' => Token::RBrace,
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'.' => Token::Dot,
            b'+' => Token::Plus,
            b'-' => Token::Minus,
            b'*' => Token::Star,
            b'/' => Token::Slash,
            b'%' => Token::Percent,
            b'!' if two(b'=') => {
                i += 1;
                Token::Ne
            }
            b'!' => Token::Not,
            b'=' if two(b'=') => {
                i += 1;
                Token::Eq
            }
            b'<' if two(b'=') => {
                i += 1;
                Token::Le
            }
            b'<' => Token::Lt,
            b'>' if two(b'=') => {
                i += 1;
                Token::Ge
            }
            b'>' => Token::Gt,
            b'&' if two(b'&') => {
                i += 1;
                Token::And
            }
            b'|' if two(b'|') => {
                i += 1;
                Token::Or
            }
            b'"' | b'\'' => {
                let (text, next) = string(source, i)?;
                tokens.push((Token::Str(text), start));
                i = next;
                continue;
            }
            b'0'..=b'9' => {
                let (token, next) = number(source, i)?;
                tokens.push((token, start));
                i = next;
                continue;
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let mut end = i;
                while end < bytes.len()
                    && (bytes[end] == b'_' || bytes[end].is_ascii_alphanumeric())
                {
                    end += 1;
                }
                let word = &source[i..end];
                let token = match word {
                    "and" => Token::And,
                    "or" => Token::Or,
                    "not" => Token::Not,
                    _ => Token::Ident(word.to_string()),
                };
                tokens.push((token, start));
                i = end;
                continue;
            }
            b'=' => {
                return Err(ParseError::new(
                    i,
                    "`=` is not an operator here; compare with `==`",
                ));
            }
            _ => {
                let shown = source[i..].chars().next().unwrap_or('?');
                return Err(ParseError::new(
                    i,
                    format!("unexpected character `{shown}`"),
                ));
            }
        };
        tokens.push((token, start));
        i += 1;
    }
    tokens.push((Token::End, source.len()));
    Ok(tokens)
}

fn string(source: &str, start: usize) -> Result<(String, usize), ParseError> {
    let quote = source.as_bytes()[start] as char;
    let mut text = String::new();
    let mut chars = source[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            c if c == quote => return Ok((text, start + 1 + offset + 1)),
            '\\' => match chars.next() {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, c @ ('\\' | '"' | '\''))) => text.push(c),
                Some((at, other)) => {
                    return Err(ParseError::new(
                        start + 1 + at,
                        format!("unknown escape `\\{other}`"),
                    ));
                }
                None => break,
            },
            c => text.push(c),
        }
    }
    Err(ParseError::new(start, "string is not closed"))
}

fn number(source: &str, start: usize) -> Result<(Token, usize), ParseError> {
    let bytes = source.as_bytes();
    let mut end = start;
    let mut is_float = false;
    while end < bytes.len() {
        match bytes[end] {
            b'0'..=b'9' => end += 1,
            b'.' if !is_float && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) => {
                is_float = true;
                end += 1;
            }
            _ => break,
        }
    }
    let text = &source[start..end];
    let token = if is_float {
        text.parse().map(Token::Number).ok()
    } else {
        text.parse().map(Token::Integer).ok()
    };
    token
        .map(|token| (token, end))
        .ok_or_else(|| ParseError::new(start, format!("number `{text}` is out of range")))
}
