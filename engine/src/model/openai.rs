//! A [`ChatModel`] for any OpenAI-compatible chat-completions endpoint
//! (OpenAI, Azure, Ollama, vLLM, LM Studio, DeepSeek, ...), on
//! async-openai (feature `openai`).
//!
//! Requests are written as the chat-completions JSON the endpoints share
//! (async-openai's "bring your own types" calls), so one client fits them
//! all. Replies stream (token and tool-call deltas) when `stream` is on;
//! an endpoint that answers a stream request without events is asked
//! again without streaming.
//! Rate limits (429) and server errors (5xx) are retried by async-openai's
//! own policy (three retries, exponential backoff from 100 ms, honouring
//! `Retry-After`); each attempt also has a timeout, and timeouts and
//! dropped connections are retried here, with exponential backoff, unless
//! part of the reply had already streamed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::{
    ChatMessage, ChatModel, ChatReply, ChatRequest, Delta, ModelError, ModelFuture, Role, ToolCall,
    Usage,
};

mod reply_format;

/// Where and how to reach an endpoint. Its `Debug` hides the key.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API base, e.g. `https://api.openai.com/v1` or
    /// `http://localhost:11434/v1` for Ollama.
    pub base_url: String,
    /// The API key, if the endpoint needs one. Never logged.
    pub api_key: Option<String>,
    /// The model name the endpoint knows.
    pub model: String,
    /// The longest one attempt may take.
    pub timeout: Duration,
    /// Attempts after the first, for timeouts and dropped connections.
    pub max_retries: u32,
    /// The first retry's wait; each next one doubles.
    pub initial_backoff: Duration,
    /// Stream replies.
    pub stream: bool,
    /// Whether the endpoint takes `response_format` of type `json_schema`
    /// (structured output). When not, a schema is sent as an instruction.
    /// A request refused for its response format is asked again with the
    /// instruction; an endpoint that says it does not support
    /// `json_schema` is not sent one again.
    pub json_schema: bool,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("stream", &self.stream)
            .field("json_schema", &self.json_schema)
            .finish()
    }
}

impl OpenAiConfig {
    /// An endpoint at `base_url` serving `model`, with defaults: 60 s per
    /// attempt, 3 retries from 500 ms, streaming on, `json_schema` taken.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(60),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            stream: true,
            json_schema: true,
        }
    }
}

/// A model behind an OpenAI-compatible endpoint.
pub struct OpenAiModel {
    client: Client<OpenAIConfig>,
    config: OpenAiConfig,
    /// Set once the endpoint said it does not support `json_schema`.
    refused_json_schema: AtomicBool,
}

impl OpenAiModel {
    /// A client for the endpoint.
    pub fn new(config: OpenAiConfig) -> Self {
        let mut openai = OpenAIConfig::new().with_api_base(config.base_url.trim_end_matches('/'));
        // Endpoints that need no key (a local Ollama) still get a header.
        openai = openai.with_api_key(config.api_key.clone().unwrap_or_else(|| "none".into()));
        OpenAiModel {
            client: Client::with_config(openai),
            config,
            refused_json_schema: AtomicBool::new(false),
        }
    }
}

impl OpenAiModel {
    /// A model error from the client's, with the key masked: endpoints
    /// echo what they were sent ("Incorrect API key provided: sk-..."),
    /// and error text is stored in runs and shown to every viewer.
    fn error(&self, error: OpenAIError) -> ModelError {
        let error = model_error(error);
        match self.config.api_key.as_deref() {
            Some(key) if !key.is_empty() => error.map_message(|text| mask_secret(&text, key)),
            _ => error,
        }
    }
}

/// `text` with every occurrence of `secret` (and of its longer prefixes,
/// as endpoints often echo a truncated key) replaced by `***`.
pub fn mask_secret(text: &str, secret: &str) -> String {
    let mut masked = text.replace(secret, "***");
    // "sk-abc...wxyz": the first characters are enough to be a leak.
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() >= 12 {
        let prefix: String = chars[..8].iter().collect();
        while let Some(at) = masked.find(&prefix) {
            let end = masked[at..]
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',')
                .map_or(masked.len(), |len| at + len);
            masked.replace_range(at..end, "***");
        }
    }
    masked
}

impl ChatModel for OpenAiModel {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let mut json_schema =
                self.config.json_schema && !self.refused_json_schema.load(Ordering::Relaxed);
            let (mut body, mut read) = request_body(&request, &self.config, json_schema);
            let mut attempt = 0;
            loop {
                let streamed = AtomicBool::new(false);
                let forward = |delta: Delta| {
                    streamed.store(true, Ordering::Relaxed);
                    deltas(delta);
                };
                let call = async {
                    if !self.config.stream {
                        return self.whole(body.clone()).await;
                    }
                    match self.streamed(body.clone(), &forward).await? {
                        Some(reply) => Ok(reply),
                        // The endpoint answered a stream request with no
                        // events (some ignore `stream`): ask again plainly.
                        None => {
                            let mut plain = body.clone();
                            plain["stream"] = Value::Bool(false);
                            if let Some(fields) = plain.as_object_mut() {
                                fields.remove("stream_options");
                            }
                            self.whole(plain).await
                        }
                    }
                };
                let result = match tokio::time::timeout(self.config.timeout, call).await {
                    Ok(result) => result,
                    Err(_) => Err(ModelError::Timeout(self.config.timeout.as_millis() as u64)),
                };
                match result {
                    Ok(mut reply) => {
                        reply.content = reply_format::read_back(read, reply.content);
                        return Ok(reply);
                    }
                    // The endpoint does not take `json_schema`: ask again
                    // with the schema as an instruction, and from now on.
                    Err(ModelError::Refused(message))
                        if json_schema
                            && body.get("response_format").is_some()
                            && !streamed.load(Ordering::Relaxed)
                            && reply_format::refuses_json_schema(&message) =>
                    {
                        if reply_format::never_takes_json_schema(&message) {
                            self.refused_json_schema.store(true, Ordering::Relaxed);
                        }
                        json_schema = false;
                        (body, read) = request_body(&request, &self.config, false);
                    }
                    Err(ModelError::Timeout(_) | ModelError::Transport(_))
                        if attempt < self.config.max_retries
                            && !streamed.load(Ordering::Relaxed) =>
                    {
                        let wait = self.config.initial_backoff * 2u32.saturating_pow(attempt);
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                    }
                    Err(error) => return Err(error),
                }
            }
        })
    }
}

impl OpenAiModel {
    async fn whole(&self, body: Value) -> Result<ChatReply, ModelError> {
        let response: Value = self
            .client
            .chat()
            .create_byot(body)
            .await
            .map_err(|error| self.error(error))?;
        let message = &response["choices"][0]["message"];
        let tool_calls = message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| ToolCall {
                        id: call["id"].as_str().unwrap_or_default().to_string(),
                        name: call["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        arguments: call["function"]["arguments"]
                            .as_str()
                            .unwrap_or("{}")
                            .to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(ChatReply {
            content: message["content"].as_str().unwrap_or_default().to_string(),
            tool_calls,
            usage: usage(&response["usage"]),
            model: response["model"]
                .as_str()
                .unwrap_or(&self.config.model)
                .to_string(),
            finish_reason: response["choices"][0]["finish_reason"]
                .as_str()
                .map(str::to_string),
        })
    }

    /// A streamed call; `None` when the stream carried no events at all.
    async fn streamed(
        &self,
        body: Value,
        deltas: &(dyn Fn(Delta) + Send + Sync),
    ) -> Result<Option<ChatReply>, ModelError> {
        let mut stream = self
            .client
            .chat()
            .create_stream_byot::<Value, Value>(body)
            .await
            .map_err(|error| self.error(error))?;
        let mut reply = ChatReply {
            model: self.config.model.clone(),
            ..ChatReply::default()
        };
        let mut chunks = 0;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| self.error(error))?;
            chunks += 1;
            if let Some(model) = chunk["model"].as_str() {
                reply.model = model.to_string();
            }
            if chunk["usage"].is_object() {
                reply.usage = usage(&chunk["usage"]);
            }
            if let Some(reason) = chunk["choices"][0]["finish_reason"].as_str() {
                reply.finish_reason = Some(reason.to_string());
            }
            let delta = &chunk["choices"][0]["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                reply.content.push_str(text);
                deltas(Delta::Text(text.to_string()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap_or(0) as usize;
                while reply.tool_calls.len() <= index {
                    reply.tool_calls.push(ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                }
                let slot = &mut reply.tool_calls[index];
                let id = call["id"].as_str().map(str::to_string);
                let name = call["function"]["name"].as_str().map(str::to_string);
                let arguments = call["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if let Some(id) = &id {
                    slot.id = id.clone();
                }
                if let Some(name) = &name {
                    slot.name.push_str(name);
                }
                slot.arguments.push_str(&arguments);
                deltas(Delta::ToolCall {
                    index: index as u32,
                    id,
                    name,
                    arguments,
                });
            }
        }
        Ok((chunks > 0).then_some(reply))
    }
}

fn usage(value: &Value) -> Usage {
    Usage {
        prompt_tokens: value["prompt_tokens"].as_u64().unwrap_or(0) as u32,
        completion_tokens: value["completion_tokens"].as_u64().unwrap_or(0) as u32,
        cached_tokens: value["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0) as u32,
    }
}

fn message_json(message: &ChatMessage) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut value = json!({"role": role, "content": message.content});
    if !message.tool_calls.is_empty() {
        value["tool_calls"] = json!(
            message
                .tool_calls
                .iter()
                .map(|call| json!({"id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": call.arguments}}))
                .collect::<Vec<_>>()
        );
    }
    if let Some(id) = &message.tool_call_id {
        value["tool_call_id"] = json!(id);
    }
    value
}

/// The chat-completions request body for `request`, and where the answer
/// will sit in the reply. `json_schema` says whether the endpoint takes
/// `response_format: json_schema` (see [`reply_format`]).
fn request_body(
    request: &ChatRequest,
    config: &OpenAiConfig,
    json_schema: bool,
) -> (Value, reply_format::ReadBack) {
    let asked = reply_format::ask(&request.format, json_schema);
    let mut messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    if let Some(instruction) = &asked.instruction {
        messages.push(message_json(instruction));
    }
    let mut body = json!({
        "model": request.model.clone().unwrap_or_else(|| config.model.clone()),
        "messages": messages,
        "stream": config.stream,
    });
    if config.stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = json!(
            request
                .tools
                .iter()
                .map(|tool| json!({"type": "function", "function": {
                    "name": tool.name, "description": tool.description, "parameters": tool.parameters
                }}))
                .collect::<Vec<_>>()
        );
        if request.tools_off {
            body["tool_choice"] = json!("none");
        }
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = request.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(format) = asked.response_format {
        body["response_format"] = format;
    }
    (body, asked.read_back)
}

fn status_error(status: u16, message: String) -> ModelError {
    match status {
        429 => ModelError::RateLimited(message),
        500..=599 => ModelError::Server(message),
        _ => ModelError::Refused(message),
    }
}

fn model_error(error: OpenAIError) -> ModelError {
    match error {
        OpenAIError::ApiError(response) => {
            status_error(response.status_code.as_u16(), response.api_error.message)
        }
        OpenAIError::Reqwest(error) => match error.status() {
            Some(status) => status_error(status.as_u16(), error.to_string()),
            None => ModelError::Transport(error.to_string()),
        },
        OpenAIError::StreamError(error) => {
            // A refused stream reports its status inside the message.
            let message = error.to_string();
            if message.contains("429") {
                ModelError::RateLimited(message)
            } else if ["500", "502", "503", "504"]
                .iter()
                .any(|code| message.contains(code))
            {
                ModelError::Server(message)
            } else {
                ModelError::Transport(message)
            }
        }
        other => ModelError::Transport(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::mask_secret;

    #[test]
    fn keys_echoed_by_an_endpoint_are_masked() {
        let key = "sk-proj-abcdefghijklmnop";
        assert_eq!(
            mask_secret(&format!("Incorrect API key provided: {key}."), key),
            "Incorrect API key provided: ***."
        );
        assert_eq!(
            mask_secret("Incorrect API key provided: sk-proj-*****mnop", key),
            "Incorrect API key provided: ***"
        );
        assert_eq!(mask_secret("no key here", key), "no key here");
    }
}
