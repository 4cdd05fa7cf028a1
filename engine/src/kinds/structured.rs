//! Structured output for the model nodes (`llm`, `agent`): a node whose
//! `output` is a typed channel (a number, a boolean, a list, an object) or
//! one with a schema asks the model for a value of that shape, reads the
//! reply as JSON, checks it against the schema, and asks again with the
//! reason when it does not fit, a bounded number of times; then the node
//! fails with an error naming the channel and where in the value.
//!
//! Text channels (`string`, `any`) without a schema keep the reply's text.

use serde_json::{Value, json};

use crate::format::ChannelType;
use crate::model::{ReplyFormat, ReplySchema};
use crate::node::{BuildContext, ConfigIssue, NodeContext, NodeError};
use crate::schema::ValueSchema;

/// How many times a reply that does not fit is asked for again, unless a
/// node says otherwise.
pub(super) const DEFAULT_RETRIES: u32 = 2;
/// The most a node may ask for.
pub(super) const MAX_RETRIES: u32 = 5;

/// What a node's output channel wants of the model's reply.
pub(super) struct Structured {
    channel: String,
    /// The schema as sent (the channel's own, or the one its type implies).
    sent: Value,
    schema: ValueSchema,
    /// Whether a bare text reply may be read as a string value.
    takes_text: bool,
}

/// Why a reply was not taken: for the model (asked again) and, the last
/// time, for the node's error.
pub(super) struct Misfit(pub String);

impl Structured {
    /// What writing `channel` asks of the model: `None` for a text channel.
    /// A channel that does not exist is reported by the node's own check.
    pub(super) fn for_channel(cx: &BuildContext, channel: &str) -> Option<Structured> {
        let spec = cx.state.channels.get(channel)?;
        if spec.ty == ChannelType::Messages {
            return None;
        }
        let sent = match &spec.schema {
            Some(schema) => schema.clone(),
            None => ValueSchema::implied_by(spec.ty)?,
        };
        // A schema that does not read is the graph's validation problem.
        let schema = ValueSchema::parse(&sent).ok()?;
        let takes_text = matches!(spec.ty, ChannelType::String | ChannelType::Any)
            && (schema.types.is_empty() || schema.types.contains(&crate::schema::JsonType::String));
        Some(Structured {
            channel: channel.to_string(),
            sent,
            schema,
            takes_text,
        })
    }

    /// The node's `output_retries`, checked.
    pub(super) fn retries(field: &str, asked: Option<u32>) -> Result<u32, ConfigIssue> {
        match asked {
            None => Ok(DEFAULT_RETRIES),
            Some(n) if n <= MAX_RETRIES => Ok(n),
            Some(n) => Err(ConfigIssue::new(
                field,
                format!("at most {MAX_RETRIES} retries (asked for {n})"),
            )),
        }
    }

    /// The format to ask the model for.
    pub(super) fn format(&self) -> ReplyFormat {
        ReplyFormat::Schema(ReplySchema {
            name: self.channel.clone(),
            schema: self.sent.clone(),
        })
    }

    /// The value in a reply's text, checked.
    pub(super) fn read(&self, content: &str) -> Result<Value, Misfit> {
        let text = unfenced(content);
        let value = match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            // A bare word for a text value (`urgent` for `"urgent"`).
            Err(_) if self.takes_text && !text.is_empty() => Value::String(text.to_string()),
            Err(error) => {
                return Err(Misfit(format!("the reply is not JSON ({error})")));
            }
        };
        match self.schema.check(&value) {
            Ok(()) => Ok(value),
            // Text that happens to read as JSON (`1984`, `true`) is still
            // text for a text channel.
            Err(_) if self.takes_text && !value.is_string() => {
                let text = Value::String(text.to_string());
                self.schema
                    .check(&text)
                    .map(|()| text)
                    .map_err(|misfit| Misfit(misfit.to_string()))
            }
            Err(misfit) => Err(Misfit(misfit.to_string())),
        }
    }

    /// Counts a reply that did not fit in `misfits`: the note the model
    /// reads before it answers again (the attempt shows in the run as an
    /// `output_misfit` event), or, once `retries` are spent, the node's
    /// failure.
    pub(super) fn refuse(
        &self,
        ctx: &NodeContext<'_>,
        misfits: &mut u32,
        retries: u32,
        misfit: &Misfit,
    ) -> Result<String, NodeError> {
        *misfits += 1;
        if *misfits > retries {
            return Err(self.gave_up(*misfits, misfit));
        }
        ctx.emit(
            "output_misfit",
            json!({"attempt": *misfits, "reason": misfit.0}),
        );
        Ok(format!(
            "Your reply does not fit the JSON Schema asked for: {}. Answer again with only the \
             JSON value.",
            misfit.0
        ))
    }

    /// The node's failure once the retries are spent.
    pub(super) fn gave_up(&self, attempts: u32, misfit: &Misfit) -> NodeError {
        NodeError::permanent(format!(
            "the model's reply does not fit channel `{}` after {attempts} {}: {}",
            self.channel,
            if attempts == 1 { "attempt" } else { "attempts" },
            misfit.0
        ))
    }

    /// The failure of an agent that ended on tool calls it could no longer
    /// make, with no answer for the channel.
    pub(super) fn no_answer(&self) -> NodeError {
        NodeError::permanent(format!(
            "the agent ran out of tool rounds without an answer for channel `{}`",
            self.channel
        ))
    }
}

/// The reply without a Markdown code fence around it.
fn unfenced(content: &str) -> &str {
    let text = content.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // The fence's language tag, if any, ends its first line.
    match body.split_once('\n') {
        Some((tag, inner)) if !tag.contains(['{', '[', '"']) => inner.trim(),
        _ => body.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::unfenced;

    #[test]
    fn fences_are_taken_off() {
        assert_eq!(unfenced("```json\n[1, 2]\n```"), "[1, 2]");
        assert_eq!(unfenced("```\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(unfenced("  [1]  "), "[1]");
        assert_eq!(unfenced("```[1]```"), "[1]");
    }
}
