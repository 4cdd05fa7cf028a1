//! Why an expression could not be parsed, shared by the lexer and the
//! parser (each finds some of the problems).

/// Why an expression could not be parsed: what, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at offset {offset})")]
pub struct ParseError {
    /// Byte offset in the source where the problem was found.
    pub offset: usize,
    /// What is wrong, for people.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        ParseError {
            offset,
            message: message.into(),
        }
    }
}
