//! A tool whose results go through a recording: given back when one is
//! recorded for the arguments, else asked of the real tool and recorded.

use std::sync::Arc;

use serde_json::Value;

use super::line::{Line, ToolResult};
use super::{Book, key};
use crate::model::ToolSpec;
use crate::node::NodeContext;
use crate::tools::{Tool, ToolError, ToolFuture};

pub(super) struct RecordedTool {
    inner: Arc<dyn Tool>,
    book: Arc<Book>,
}

impl RecordedTool {
    pub(super) fn new(inner: Arc<dyn Tool>, book: Arc<Book>) -> Self {
        RecordedTool { inner, book }
    }

    /// The recorded result for `key`, if one is left.
    fn replay(&self, key: &str) -> Option<Result<Value, ToolError>> {
        let line = self.book.take(key)?;
        let Line::Tool { result, .. } = &line else {
            return None;
        };
        let result = result.clone().into_result();
        self.book.replayed(line);
        Some(result)
    }

    /// Why a call fails when only recorded results may answer.
    fn not_recorded(&self) -> ToolError {
        ToolError::new(format!(
            "no recorded result for this call to {} (replaying only)",
            self.inner.spec().name
        ))
    }

    /// Records what the real tool answered, when it is worth replaying.
    fn record(&self, key: String, result: &Result<Value, ToolError>) {
        let result = match result {
            Ok(value) => ToolResult::Ok(value.clone()),
            Err(error) if error.paused.is_none() && !error.transient => {
                ToolResult::Error(error.message.clone())
            }
            Err(_) => return,
        };
        let line = Line::Tool {
            key,
            tool: self.inner.spec().name,
            result,
        };
        self.book.recorded(line);
    }
}

impl RecordedTool {
    /// Answers a call from the recording, or through `real` (recorded).
    fn answer<'a>(
        &'a self,
        arguments: Value,
        real: impl FnOnce(Value) -> ToolFuture<'a> + Send + 'a,
    ) -> ToolFuture<'a> {
        Box::pin(async move {
            let key = key::tool_call(&self.inner.spec().name, &arguments);
            if let Some(result) = self.replay(&key) {
                return result;
            }
            if !self.book.go_live() {
                return Err(self.not_recorded());
            }
            let result = real(arguments).await;
            self.record(key, &result);
            result
        })
    }
}

impl Tool for RecordedTool {
    fn spec(&self) -> ToolSpec {
        self.inner.spec()
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        self.answer(arguments, |arguments| self.inner.call(arguments))
    }

    fn call_within<'a>(&'a self, arguments: Value, node: &'a NodeContext<'_>) -> ToolFuture<'a> {
        self.answer(arguments, move |arguments| {
            self.inner.call_within(arguments, node)
        })
    }
}
