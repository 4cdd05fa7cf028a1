//! Turns tokens into an expression tree, with precedence climbing and a
//! nesting limit so hostile input cannot exhaust the stack.

use std::fmt;

use serde_json::Value;

use super::error::ParseError;
use super::lexer::{Token, tokenize};
use super::{MAX_DEPTH, MAX_OPERATIONS, MAX_SOURCE_LEN};

/// A parsed expression, ready to evaluate any number of times.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub(crate) node: Node,
    source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Literal(Value),
    List(Vec<Node>),
    Object(Vec<(String, Node)>),
    Channel(String),
    Field(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Call(Function, Vec<Node>),
    Unary(UnaryOp, Box<Node>),
    Binary(BinaryOp, Box<Node>, Box<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// The built-in functions, with how many arguments each takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Function {
    Len,
    Contains,
    StartsWith,
    EndsWith,
    Lower,
    Upper,
    First,
    Last,
    Exists,
    Number,
    String,
    Sum,
    Split,
    Join,
    Trim,
    ParseJson,
    ToJson,
}

impl Function {
    fn from_name(name: &str) -> Option<Function> {
        Some(match name {
            "len" | "length" => Function::Len,
            "contains" => Function::Contains,
            "starts_with" => Function::StartsWith,
            "ends_with" => Function::EndsWith,
            "lower" => Function::Lower,
            "upper" => Function::Upper,
            "first" => Function::First,
            "last" => Function::Last,
            "exists" => Function::Exists,
            "number" => Function::Number,
            "string" => Function::String,
            "sum" => Function::Sum,
            "split" => Function::Split,
            "join" => Function::Join,
            "trim" => Function::Trim,
            "parse_json" => Function::ParseJson,
            "to_json" => Function::ToJson,
            _ => return None,
        })
    }

    fn arity(self) -> usize {
        match self {
            Function::Contains
            | Function::StartsWith
            | Function::EndsWith
            | Function::Split
            | Function::Join => 2,
            _ => 1,
        }
    }
}

impl Expr {
    /// Parses `source`, or says what is wrong and where.
    pub fn parse(source: &str) -> Result<Expr, ParseError> {
        if source.len() > MAX_SOURCE_LEN {
            return Err(ParseError::new(
                MAX_SOURCE_LEN,
                format!("expression is longer than {MAX_SOURCE_LEN} bytes"),
            ));
        }
        if source.trim().is_empty() {
            return Err(ParseError::new(0, "expression is empty"));
        }
        let tokens = tokenize(source)?;
        let mut parser = Parser {
            tokens,
            position: 0,
            depth: 0,
            operations: 0,
        };
        let node = parser.expression()?;
        match parser.peek() {
            Token::End => Ok(Expr {
                node,
                source: source.to_string(),
            }),
            _ => Err(parser.error("unexpected text after the expression")),
        }
    }

    /// The text the expression was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The state channels the expression reads, each once, in order.
    pub fn channels(&self) -> Vec<&str> {
        fn walk<'a>(node: &'a Node, out: &mut Vec<&'a str>) {
            match node {
                Node::Channel(name) => {
                    if !out.contains(&name.as_str()) {
                        out.push(name);
                    }
                }
                Node::Literal(_) => {}
                Node::List(items) | Node::Call(_, items) => items.iter().for_each(|n| walk(n, out)),
                Node::Object(fields) => fields.iter().for_each(|(_, n)| walk(n, out)),
                Node::Field(inner, _) | Node::Unary(_, inner) => walk(inner, out),
                Node::Index(a, b) | Node::Binary(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.node, &mut out);
        out
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    position: usize,
    depth: usize,
    operations: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens
            .get(self.position)
            .map_or(&Token::End, |(token, _)| token)
    }

    fn offset(&self) -> usize {
        self.tokens
            .get(self.position)
            .map_or(0, |(_, offset)| *offset)
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if self.position < self.tokens.len() {
            self.position += 1;
        }
        token
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError::new(self.offset(), message)
    }

    fn expect(&mut self, token: Token, what: &str) -> Result<(), ParseError> {
        if *self.peek() == token {
            self.advance();
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "expression is nested more than {MAX_DEPTH} levels deep"
            )));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Counts one operator, field, index or call: long chains such as
    /// `a+a+a+...` build deep trees without nesting, and are bounded here.
    fn count_operation(&mut self) -> Result<(), ParseError> {
        self.operations += 1;
        if self.operations > MAX_OPERATIONS {
            return Err(self.error(format!(
                "expression has more than {MAX_OPERATIONS} operations"
            )));
        }
        Ok(())
    }

    fn expression(&mut self) -> Result<Node, ParseError> {
        self.nested(Self::or)
    }

    fn or(&mut self) -> Result<Node, ParseError> {
        let mut left = self.and()?;
        while *self.peek() == Token::Or {
            self.advance();
            self.count_operation()?;
            let right = self.and()?;
            left = Node::Binary(BinaryOp::Or, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, ParseError> {
        let mut left = self.not()?;
        while *self.peek() == Token::And {
            self.advance();
            self.count_operation()?;
            let right = self.not()?;
            left = Node::Binary(BinaryOp::And, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Node, ParseError> {
        if *self.peek() == Token::Not {
            self.advance();
            let inner = self.nested(Self::not)?;
            return Ok(Node::Unary(UnaryOp::Not, Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Node, ParseError> {
        let left = self.additive()?;
        let op = match self.peek() {
            Token::Eq => BinaryOp::Eq,
            Token::Ne => BinaryOp::Ne,
            Token::Lt => BinaryOp::Lt,
            Token::Le => BinaryOp::Le,
            Token::Gt => BinaryOp::Gt,
            Token::Ge => BinaryOp::Ge,
            Token::Ident(word) if word == "in" => BinaryOp::In,
            _ => return Ok(left),
        };
        self.advance();
        let right = self.additive()?;
        Ok(Node::Binary(op, Box::new(left), Box::new(right)))
    }

    fn additive(&mut self) -> Result<Node, ParseError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Token::Plus => BinaryOp::Add,
                Token::Minus => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.advance();
            self.count_operation()?;
            let right = self.multiplicative()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn multiplicative(&mut self) -> Result<Node, ParseError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Token::Star => BinaryOp::Mul,
                Token::Slash => BinaryOp::Div,
                Token::Percent => BinaryOp::Rem,
                _ => return Ok(left),
            };
            self.advance();
            self.count_operation()?;
            let right = self.unary()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Node, ParseError> {
        if *self.peek() == Token::Minus {
            self.advance();
            let inner = self.nested(Self::unary)?;
            return Ok(match inner {
                Node::Literal(Value::Number(n)) => Node::Literal(negate(&n)),
                other => Node::Unary(UnaryOp::Neg, Box::new(other)),
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Node, ParseError> {
        let mut node = self.primary()?;
        loop {
            match self.peek() {
                Token::Dot => {
                    self.advance();
                    match self.advance() {
                        Token::Ident(field) => node = Node::Field(Box::new(node), field),
                        _ => return Err(self.error("expected a field name after `.`")),
                    }
                }
                Token::LBracket => {
                    self.advance();
                    let index = self.expression()?;
                    self.expect(Token::RBracket, "`]`")?;
                    node = Node::Index(Box::new(node), Box::new(index));
                }
                _ => return Ok(node),
            }
            self.count_operation()?;
        }
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let offset = self.offset();
        match self.advance() {
            Token::Integer(n) => Ok(Node::Literal(Value::from(n))),
            Token::Number(n) => serde_json::Number::from_f64(n)
                .map(|n| Node::Literal(Value::Number(n)))
                .ok_or_else(|| ParseError::new(offset, "number is not finite")),
            Token::Str(text) => Ok(Node::Literal(Value::String(text))),
            Token::LParen => {
                let inner = self.expression()?;
                self.expect(Token::RParen, "`)`")?;
                Ok(inner)
            }
            Token::LBracket => {
                let items = self.list(Token::RBracket, "`]`")?;
                Ok(Node::List(items))
            }
            Token::LBrace => self.object(),
            Token::Ident(name) => match name.as_str() {
                "true" => Ok(Node::Literal(Value::Bool(true))),
                "false" => Ok(Node::Literal(Value::Bool(false))),
                "null" => Ok(Node::Literal(Value::Null)),
                _ if *self.peek() == Token::LParen => {
                    let function = Function::from_name(&name).ok_or_else(|| {
                        ParseError::new(offset, format!("unknown function `{name}`"))
                    })?;
                    self.advance();
                    let args = self.list(Token::RParen, "`)`")?;
                    if args.len() != function.arity() {
                        return Err(ParseError::new(
                            offset,
                            format!(
                                "`{name}` takes {} argument{}, not {}",
                                function.arity(),
                                if function.arity() == 1 { "" } else { "s" },
                                args.len()
                            ),
                        ));
                    }
                    Ok(Node::Call(function, args))
                }
                _ => Ok(Node::Channel(name)),
            },
            Token::End => Err(ParseError::new(offset, "expression ends too early")),
            other => Err(ParseError::new(
                offset,
                format!("unexpected {}", describe(&other)),
            )),
        }
    }

    /// `{key: value, 'other key': value}`; the `{` is consumed.
    fn object(&mut self) -> Result<Node, ParseError> {
        let mut fields = Vec::new();
        if *self.peek() == Token::RBrace {
            self.advance();
            return Ok(Node::Object(fields));
        }
        loop {
            let key = match self.advance() {
                Token::Ident(key) | Token::Str(key) => key,
                _ => return Err(self.error("expected a field name")),
            };
            self.expect(Token::Colon, "`:` after the field name")?;
            fields.push((key, self.expression()?));
            match self.advance() {
                Token::Comma => {}
                Token::RBrace => return Ok(Node::Object(fields)),
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn list(&mut self, close: Token, what: &str) -> Result<Vec<Node>, ParseError> {
        let mut items = Vec::new();
        if *self.peek() == close {
            self.advance();
            return Ok(items);
        }
        loop {
            items.push(self.expression()?);
            match self.peek() {
                Token::Comma => {
                    self.advance();
                }
                token if *token == close => {
                    self.advance();
                    return Ok(items);
                }
                _ => return Err(self.error(format!("expected `,` or {what}"))),
            }
        }
    }
}

fn negate(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64().and_then(i64::checked_neg) {
        Value::from(i)
    } else {
        n.as_f64()
            .and_then(|f| serde_json::Number::from_f64(-f))
            .map_or(Value::Null, Value::Number)
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::RParen => "`)`".into(),
        Token::RBracket => "`]`".into(),
        Token::RBrace => "`}`".into(),
        Token::Colon => "`:`".into(),
        Token::Comma => "`,`".into(),
        Token::Dot => "`.`".into(),
        Token::And => "`&&`".into(),
        Token::Or => "`||`".into(),
        _ => format!("{token:?}").to_lowercase(),
    }
}
