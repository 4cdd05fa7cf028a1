//! One tool call under its policy: the breakers asked first, a place among
//! the calls in flight, the timeout, retries with backoff. Each retry and
//! each breaker that changes state is a run event (`tool_retry`,
//! `tool_breaker`), so the canvas and the trace show them.

use std::sync::Arc;

use serde_json::Value;
#[cfg(feature = "runtime")]
use serde_json::json;

use super::policy::EffectivePolicy;
use super::{Tool, ToolError};
use crate::model::ToolCall;
use crate::node::NodeContext;

/// A tool as a node calls it: with its policy and its shared gate.
#[derive(Clone)]
pub struct BoundTool {
    pub name: String,
    pub tool: Arc<dyn Tool>,
    pub policy: EffectivePolicy,
    #[cfg(feature = "runtime")]
    pub(crate) gate: Arc<super::gate::ToolGate>,
}

/// How a call ended.
pub(crate) struct Called {
    pub result: Result<Value, ToolError>,
    pub attempts: u32,
    /// From the first attempt to the end, waits and retries included.
    pub took: std::time::Duration,
}

impl BoundTool {
    /// Calls the tool with the arguments the model wrote.
    pub(crate) async fn call(&self, call: &ToolCall, ctx: &NodeContext<'_>) -> Called {
        let started = std::time::Instant::now();
        let arguments: Value = match serde_json::from_str(&call.arguments) {
            Ok(arguments) => arguments,
            Err(error) => {
                return Called {
                    result: Err(ToolError::new(format!(
                        "the arguments are not JSON: {error}"
                    ))),
                    attempts: 0,
                    took: started.elapsed(),
                };
            }
        };
        let (result, attempts) = self.attempts(call, arguments, ctx).await;
        Called {
            result,
            attempts,
            took: started.elapsed(),
        }
    }

    #[cfg(feature = "runtime")]
    async fn attempts(
        &self,
        call: &ToolCall,
        arguments: Value,
        ctx: &NodeContext<'_>,
    ) -> (Result<Value, ToolError>, u32) {
        let mut attempt = 1;
        loop {
            let result = self.attempt(arguments.clone(), ctx).await;
            let error = match result {
                Ok(value) => return (Ok(value), attempt),
                Err(Failure::Refused(error)) => return (Err(error), attempt),
                Err(Failure::Failed(error)) if error.paused.is_some() => {
                    return (Err(error), attempt);
                }
                Err(Failure::Failed(error)) => error,
            };
            let retry = self.policy.retry.as_ref().filter(|retry| {
                attempt < retry.max_attempts
                    && (retry.retry_on == crate::format::RetryOn::All || error.transient)
            });
            let Some(retry) = retry else {
                return (Err(error), attempt);
            };
            let wait = crate::run::retry::delay(retry, attempt, (ctx.run_id, ctx.node, &call.id));
            ctx.emit(
                "tool_retry",
                json!({
                    "id": call.id,
                    "name": self.name,
                    "attempt": attempt,
                    "delay_ms": u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "error": error.message,
                }),
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    #[cfg(feature = "runtime")]
    async fn attempt(&self, arguments: Value, ctx: &NodeContext<'_>) -> Result<Value, Failure> {
        let (admission, opened) = self.gate.admit(&self.policy.breakers).map_err(|why| {
            Failure::Refused(ToolError::new(format!(
                "`{}` is not called: {why}",
                self.name
            )))
        })?;
        self.report(opened, ctx);
        let slot = self.gate.slot(self.policy.max_concurrent).await;
        let limit = std::time::Duration::from_millis(self.policy.timeout_ms);
        let result = match tokio::time::timeout(limit, self.tool.call_within(arguments, ctx)).await
        {
            Ok(result) => result,
            Err(_) => Err(ToolError::transient(format!(
                "timed out after {} ms",
                limit.as_millis()
            ))),
        };
        drop(slot);
        // A pause is not a failure: it never opens a breaker.
        let failed = result.as_ref().is_err_and(|error| error.paused.is_none());
        self.report(admission.finish(!failed), ctx);
        result.map_err(Failure::Failed)
    }

    #[cfg(feature = "runtime")]
    fn report(&self, transitions: Vec<super::gate::Transition>, ctx: &NodeContext<'_>) {
        for transition in transitions {
            ctx.emit(
                "tool_breaker",
                json!({
                    "name": self.name,
                    "state": transition.state,
                    "failures": transition.breaker.failures,
                    "window_ms": transition.breaker.window_ms,
                    "cool_down_ms": transition.breaker.cool_down_ms,
                }),
            );
        }
    }

    #[cfg(not(feature = "runtime"))]
    async fn attempts(
        &self,
        _: &ToolCall,
        arguments: Value,
        _: &NodeContext<'_>,
    ) -> (Result<Value, ToolError>, u32) {
        (self.tool.call(arguments).await, 1)
    }
}

/// Why an attempt did not succeed.
#[cfg(feature = "runtime")]
enum Failure {
    /// A breaker refused it; not retried.
    Refused(ToolError),
    /// The tool failed or timed out.
    Failed(ToolError),
}
