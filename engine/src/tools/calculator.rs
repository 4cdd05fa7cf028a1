//! `calculator`: evaluates arithmetic exactly, with the condition
//! language's numbers and operators (and nothing else: no names, no state).

use serde_json::{Value, json};

use super::{Tool, ToolError, ToolFuture};
use crate::expr::Expr;
use crate::model::ToolSpec;

/// The calculator tool.
pub struct Calculator;

fn evaluate(arguments: &Value) -> Result<Value, ToolError> {
    let expression = arguments
        .get("expression")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new("expected {\"expression\": \"...\"}"))?;
    let expr = Expr::parse(expression).map_err(|error| ToolError::new(error.to_string()))?;
    if let Some(name) = expr.channels().first() {
        return Err(ToolError::new(format!(
            "`{name}` is not a number; the calculator takes numbers and + - * / % ( )"
        )));
    }
    let value = expr
        .eval(&|_| None)
        .map_err(|error| ToolError::new(error.message))?;
    if !value.is_number() {
        return Err(ToolError::new("the expression is not arithmetic"));
    }
    Ok(value)
}

impl Tool for Calculator {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "calculator".into(),
            description: "Evaluates an arithmetic expression exactly, e.g. `12 * (3 + 4) / 2`."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"expression": {"type": "string", "description": "The arithmetic to evaluate"}},
                "required": ["expression"]
            }),
        }
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(std::future::ready(evaluate(&arguments)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_computes_and_refuses_what_is_not_arithmetic() {
        assert_eq!(
            evaluate(&json!({"expression": "12 * (3 + 4)"})).unwrap(),
            json!(84)
        );
        assert_eq!(
            evaluate(&json!({"expression": "7 / 2"})).unwrap(),
            json!(3.5)
        );
        assert!(
            evaluate(&json!({"expression": "1 / 0"}))
                .unwrap_err()
                .message
                .contains("division by zero")
        );
        assert!(
            evaluate(&json!({"expression": "secret * 2"}))
                .unwrap_err()
                .message
                .contains("not a number")
        );
        assert!(evaluate(&json!({"expr": "1"})).is_err());
    }
}
