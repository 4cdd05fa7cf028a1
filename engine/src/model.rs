//! Chat models: the [`ChatModel`] trait the LLM node kinds call, the
//! message and tool types they exchange, and the deterministic offline
//! model that makes every graph runnable with no key and no network; and
//! (feature `openai`) [`openai::OpenAiModel`] for any OpenAI-compatible
//! endpoint.

#[cfg(feature = "runtime")]
mod gate;
mod message;
mod model_input;
mod offline;
#[cfg(feature = "openai")]
pub mod openai;

#[cfg(feature = "runtime")]
pub use crate::fair_share::on_behalf_of;
#[cfg(feature = "runtime")]
pub use gate::ModelGate;
pub use message::{ChatMessage, Role, ToolCall, Usage};
pub use model_input::{
    LastMessage, MODEL_INPUT_CHARS, MODEL_INPUT_EVENT, ModelInput, cut_at_chars,
};
pub use offline::OfflineModel;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool a model may call: its name, what it does, and its arguments'
/// JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One call to a model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    /// The model name (the endpoint's default when `None`).
    pub model: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// The shape the reply must have.
    pub format: ReplyFormat,
    /// The tools stay in the request but the model may not call them (an
    /// agent out of tool rounds): the request keeps the start it had, which
    /// providers cache.
    pub tools_off: bool,
}

/// The shape a reply must have. Endpoints that can are constrained to it
/// (an OpenAI-compatible one gets a `response_format`); the node that asked
/// checks the reply either way.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ReplyFormat {
    /// Free text.
    #[default]
    Text,
    /// Any JSON object.
    JsonObject,
    /// Exactly one of these names (a router's routes); the reply's content
    /// is the name.
    Choice(Vec<Choice>),
    /// A JSON value that fits a schema (structured output); the reply's
    /// content is the value's JSON.
    Schema(ReplySchema),
}

/// A value a model is asked for: a schema of the subset
/// [`crate::schema`] documents.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplySchema {
    /// What the value is called (the channel it is for): endpoints name
    /// the formats they are given.
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

impl ReplyFormat {
    /// The routes a [`ReplyFormat::Choice`] allows (none otherwise).
    pub fn choices(&self) -> &[Choice] {
        match self {
            ReplyFormat::Choice(choices) => choices,
            _ => &[],
        }
    }
}

/// One of the answers a constrained request allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub name: String,
    pub description: String,
}

/// What a model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatReply {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// The model that answered.
    pub model: String,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, ...), when the
    /// endpoint says.
    pub finish_reason: Option<String>,
}

/// A piece of a reply as it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// More text.
    Text(String),
    /// A part of the `index`-th tool call.
    ToolCall {
        index: u32,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No answer within the time allowed.
    #[error("the model did not answer within {0} ms")]
    Timeout(u64),
    /// The endpoint refused for now (HTTP 429).
    #[error("the model endpoint is rate limiting: {0}")]
    RateLimited(String),
    /// The endpoint failed (HTTP 5xx).
    #[error("the model endpoint failed: {0}")]
    Server(String),
    /// The request was refused (HTTP 4xx other than 429): a bad key, an
    /// unknown model.
    #[error("the model endpoint refused the request: {0}")]
    Refused(String),
    /// The endpoint could not be reached or answered nonsense.
    #[error("cannot talk to the model endpoint: {0}")]
    Transport(String),
}

impl ModelError {
    /// The same error with its message passed through `f` (to mask what
    /// must not be shown).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> ModelError {
        match self {
            ModelError::Timeout(ms) => ModelError::Timeout(ms),
            ModelError::RateLimited(m) => ModelError::RateLimited(f(m)),
            ModelError::Server(m) => ModelError::Server(f(m)),
            ModelError::Refused(m) => ModelError::Refused(f(m)),
            ModelError::Transport(m) => ModelError::Transport(f(m)),
        }
    }

    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ModelError::Timeout(_)
                | ModelError::RateLimited(_)
                | ModelError::Server(_)
                | ModelError::Transport(_)
        )
    }
}

/// The future a model call is.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<ChatReply, ModelError>> + Send + 'a>>;

/// A chat model. `deltas` receives the reply as it streams (models that do
/// not stream call it once with the whole text, or not at all).
pub trait ChatModel: Send + Sync + 'static {
    /// A name for traces and the UI (`offline`, `gpt-4o-mini`, ...).
    fn name(&self) -> &str;

    /// Asks the model.
    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a>;
}

/// Shared model handle.
pub type SharedModel = Arc<dyn ChatModel>;
