//! The built-in offline model: deterministic, instant to set up, and honest
//! about what it is. Every text it writes says it is the offline model.
//! It does what a graph needs to be exercised end to end without a key or
//! a network:
//!
//! - it calls a bound tool when the user's words ask for what the tool
//!   does: an arithmetic expression goes to a calculator, a question about
//!   the time or date to a clock, a tool named in the message to that tool;
//! - it answers from tool results;
//! - it picks a route by matching the user's words against the routes'
//!   names and descriptions;
//! - it remembers the conversation (a name it was told, how many turns);
//! - asked for a value of a schema (structured output), it answers one
//!   that fits, read from the message where it can (see [`values`]);
//! - it streams its reply word by word at a readable pace.

use std::time::Duration;

use serde_json::json;

use super::{
    ChatMessage, ChatModel, ChatReply, ChatRequest, Delta, ModelFuture, ReplyFormat, Role,
    ToolCall, ToolSpec, Usage,
};

mod values;

/// The offline model.
#[derive(Debug, Clone)]
pub struct OfflineModel {
    pace: Duration,
}

impl Default for OfflineModel {
    fn default() -> Self {
        OfflineModel {
            pace: Duration::from_millis(25),
        }
    }
}

impl OfflineModel {
    /// The offline model, streaming a word every 25 ms.
    pub fn new() -> Self {
        OfflineModel::default()
    }

    /// The pause between streamed words (zero for tests and benchmarks).
    pub fn with_pace(mut self, pace: Duration) -> Self {
        self.pace = pace;
        self
    }
}

const SIGNATURE: &str = "(offline model)";

impl ChatModel for OfflineModel {
    fn name(&self) -> &str {
        "offline"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let reply = answer(&request);
            if reply.tool_calls.is_empty() {
                for (i, word) in reply.content.split_inclusive(' ').enumerate() {
                    if i > 0 {
                        pause(self.pace).await;
                    }
                    deltas(Delta::Text(word.to_string()));
                }
            } else {
                for (index, call) in reply.tool_calls.iter().enumerate() {
                    deltas(Delta::ToolCall {
                        index: index as u32,
                        id: Some(call.id.clone()),
                        name: Some(call.name.clone()),
                        arguments: call.arguments.clone(),
                    });
                }
            }
            Ok(reply)
        })
    }
}

async fn pause(pace: Duration) {
    #[cfg(feature = "runtime")]
    if !pace.is_zero() {
        tokio::time::sleep(pace).await;
    }
    // Without the executor nothing runs a model; nothing to wait for.
    #[cfg(not(feature = "runtime"))]
    let _ = pace;
}

/// The whole decision: deterministic in the request.
fn answer(request: &ChatRequest) -> ChatReply {
    let words = |text: &str| text.split_whitespace().count() as u32;
    let prompt_tokens = request.messages.iter().map(|m| words(&m.content)).sum();
    let (content, tool_calls) = decide(request);
    ChatReply {
        usage: Usage {
            prompt_tokens,
            completion_tokens: words(&content) + tool_calls.len() as u32,
            cached_tokens: 0,
        },
        finish_reason: Some(
            if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .into(),
        ),
        content,
        tool_calls,
        model: "offline".into(),
    }
}

fn decide(request: &ChatRequest) -> (String, Vec<ToolCall>) {
    let user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or("");

    if let ReplyFormat::Choice(choices) = &request.format
        && !choices.is_empty()
    {
        return (choose(choices, user), Vec::new());
    }

    // Tool results since the model last asked for tools: answer from them.
    if request
        .messages
        .last()
        .is_some_and(|m| m.role == Role::Tool)
    {
        let results: Vec<String> = request
            .messages
            .iter()
            .rev()
            .take_while(|m| m.role == Role::Tool)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(|m| {
                format!(
                    "{} says {}",
                    m.name.as_deref().unwrap_or("the tool"),
                    m.content.trim()
                )
            })
            .collect();
        if let ReplyFormat::Schema(wanted) = &request.format {
            let read = format!("{user}\n{}", results.join("\n"));
            return (values::for_schema(wanted, &read).to_string(), Vec::new());
        }
        return (format!("{SIGNATURE} {}.", results.join("; ")), Vec::new());
    }

    if !request.tools_off
        && request
            .messages
            .last()
            .is_some_and(|m| m.role == Role::User)
    {
        let calls = tool_calls(&request.tools, user);
        if !calls.is_empty() {
            return (String::new(), calls);
        }
    }

    match &request.format {
        ReplyFormat::JsonObject => {
            return (
                json!({"offline_model": true, "you_said": user}).to_string(),
                Vec::new(),
            );
        }
        ReplyFormat::Schema(wanted) => {
            return (values::for_schema(wanted, user).to_string(), Vec::new());
        }
        ReplyFormat::Text | ReplyFormat::Choice(_) => {}
    }
    (converse(&request.messages, user), Vec::new())
}

/// The route sharing the most words with the user's message (the first on
/// a tie); when none shares a word, a reply naming no route, so the router
/// takes its `otherwise` route.
fn choose(choices: &[super::Choice], user: &str) -> String {
    let user_words = significant_words(user);
    let score = |choice: &super::Choice| {
        let text = format!(
            "{} {}",
            choice.name.replace(['_', '-'], " "),
            choice.description
        );
        significant_words(&text)
            .iter()
            .filter(|w| user_words.contains(w))
            .count()
    };
    let mut best = &choices[0];
    let mut best_score = score(best);
    for choice in &choices[1..] {
        let s = score(choice);
        if s > best_score {
            best = choice;
            best_score = s;
        }
    }
    if best_score == 0 {
        return format!("{SIGNATURE} no route matches");
    }
    best.name.clone()
}

/// Words every sentence has, which say nothing of where it belongs: "the
/// newsletter and events" shared "and" with "prices and plans" and went
/// to billing.
const STOP_WORDS: &[&str] = &[
    "and", "the", "for", "you", "your", "are", "was", "were", "with", "that", "this", "have",
    "has", "had", "what", "how", "can", "not", "but", "from", "our", "any", "all", "its", "about",
    "into", "there", "their", "they", "then", "than", "who", "why", "when", "where", "which",
    "will", "would", "could", "should", "does", "did", "just", "also", "get", "got",
];

fn significant_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2 && !STOP_WORDS.contains(&w.to_lowercase().as_str()))
        .map(|w| {
            let w = w.to_lowercase();
            // A crude stem, so "refunds" meets "refund".
            w.strip_suffix('s')
                .filter(|s| s.len() > 2)
                .map(str::to_string)
                .unwrap_or(w)
        })
        .collect()
}

fn tool_calls(tools: &[ToolSpec], user: &str) -> Vec<ToolCall> {
    let lower = user.to_lowercase();
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut call = |name: &str, arguments: serde_json::Value| {
        if !calls.iter().any(|c| c.name == name) {
            calls.push(ToolCall {
                id: format!("call_{}", calls.len() + 1),
                name: name.to_string(),
                arguments: arguments.to_string(),
            });
        }
    };
    for tool in tools {
        let name = tool.name.to_lowercase();
        let properties: Vec<&str> = tool.parameters["properties"]
            .as_object()
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mentioned = lower.contains(&name.replace(['_', '-'], " ")) || lower.contains(&name);
        if let Some(target) = name.strip_prefix("transfer_to_") {
            // A handoff: taken when the message names its target.
            let target = target.replace(['_', '-'], " ");
            if lower.contains(&target) {
                call(&tool.name, json!({}));
            }
        } else if properties.contains(&"expression") {
            // A calculator: called when the message holds arithmetic.
            if let Some(expression) = arithmetic(user) {
                call(&tool.name, json!({"expression": expression}));
            }
        } else if properties.is_empty()
            && (name.contains("time") || name.contains("clock") || name.contains("date"))
        {
            if ["time", "date", "clock", "today", "day is it"]
                .iter()
                .any(|w| lower.contains(w))
            {
                call(&tool.name, json!({}));
            }
        } else if mentioned {
            // Any other tool named in the message gets the message as its
            // first argument.
            let argument = tool.parameters["required"][0]
                .as_str()
                .or(properties.first().copied());
            match argument {
                Some(argument) => call(&tool.name, json!({ argument: user })),
                None => call(&tool.name, json!({})),
            }
        }
    }
    calls
}

/// The longest run of the message that reads as arithmetic (digits and at
/// least one operator), e.g. "what is 12 * (3 + 4)?" gives "12 * (3 + 4)".
fn arithmetic(text: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_digit() || " .+-*/%()".contains(c);
    let mut best = "";
    for run in text.split(|c: char| !allowed(c)) {
        let run = run.trim();
        let has_digit = run.chars().any(|c| c.is_ascii_digit());
        let has_operator = run.chars().any(|c| "+-*/%".contains(c));
        if has_digit && has_operator && run.len() > best.len() {
            best = run;
        }
    }
    let trimmed = best
        .trim_end_matches(['+', '-', '*', '/', '%', ' ', '.'])
        .trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// A reply with no tools to call: it shows what it remembers.
fn converse(messages: &[ChatMessage], user: &str) -> String {
    let lower = user.to_lowercase();
    let told_name = messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .find_map(|m| name_in(&m.content));
    if let Some(name) = name_in(user) {
        return format!(
            "{SIGNATURE} Nice to meet you, {name}. I will remember your name in this conversation."
        );
    }
    if lower.contains("my name") {
        return match told_name {
            Some(name) => format!("{SIGNATURE} Your name is {name}."),
            None => format!("{SIGNATURE} You have not told me your name yet."),
        };
    }
    // The person's turns: a node's own prompt (a user message signed with
    // the node's name) is not one of theirs.
    let turns = messages
        .iter()
        .filter(|m| m.role == Role::User && m.name.is_none())
        .count();
    let earlier = if turns > 1 {
        format!(" This is turn {turns} of our conversation.")
    } else {
        String::new()
    };
    format!(
        "{SIGNATURE} You said: \"{}\".{earlier} I am Heddle's built-in offline model: I can call tools, \
         choose routes and remember this conversation, but I do not understand free text. Set a model \
         endpoint for real answers.",
        user.trim()
    )
}

/// "my name is Ada" gives "Ada".
fn name_in(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let at = lower.find("my name is ")? + "my name is ".len();
    let name: String = text[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '\'')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Choice;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::new(Role::User, text)
    }

    fn tool(name: &str) -> ToolSpec {
        let parameters = if name == "calculator" {
            json!({"type": "object", "properties": {"expression": {"type": "string"}}})
        } else {
            json!({"type": "object", "properties": {}})
        };
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters,
        }
    }

    #[test]
    fn arithmetic_goes_to_the_calculator_and_time_to_the_clock() {
        let request = ChatRequest {
            messages: vec![user("What is 12 * (3 + 4)? And what time is it?")],
            tools: vec![tool("calculator"), tool("current_time")],
            ..ChatRequest::default()
        };
        let (content, calls) = decide(&request);
        assert!(content.is_empty());
        assert_eq!(calls[0].name, "calculator");
        assert_eq!(calls[0].arguments, r#"{"expression":"12 * (3 + 4)"}"#);
        assert_eq!(calls[1].name, "current_time");
    }

    #[test]
    fn tool_results_are_reported() {
        let mut result = ChatMessage::new(Role::Tool, "84");
        result.name = Some("calculator".into());
        let request = ChatRequest {
            messages: vec![user("12*7?"), ChatMessage::new(Role::Assistant, ""), result],
            tools: vec![tool("calculator")],
            ..ChatRequest::default()
        };
        assert_eq!(decide(&request).0, "(offline model) calculator says 84.");
    }

    #[test]
    fn routes_are_chosen_by_matching_words() {
        let choices = vec![
            Choice {
                name: "billing".into(),
                description: "payments, invoices and refunds".into(),
            },
            Choice {
                name: "tech".into(),
                description: "bugs, errors and crashes".into(),
            },
        ];
        assert_eq!(
            choose(&choices, "I want my refunds for the invoice"),
            "billing"
        );
        assert_eq!(choose(&choices, "the app crashes with an error"), "tech");
        assert_eq!(
            choose(&choices, "hello"),
            "(offline model) no route matches"
        );
        // Words every sentence has match nothing: "and" is in both.
        assert_eq!(
            choose(&choices, "Tell me about the newsletter and events"),
            "(offline model) no route matches"
        );
    }

    #[test]
    fn it_remembers_a_name_across_turns() {
        let messages = vec![
            user("Hi, my name is Ada"),
            ChatMessage::new(Role::Assistant, "..."),
            user("What is my name?"),
        ];
        let request = ChatRequest {
            messages,
            ..ChatRequest::default()
        };
        assert_eq!(decide(&request).0, "(offline model) Your name is Ada.");
    }

    #[test]
    fn a_nodes_own_prompt_is_not_a_turn_of_the_persons() {
        let mut prompt = user("Findings: 3 topics researched.");
        prompt.name = Some("summarize".into());
        let reply = |messages: Vec<ChatMessage>| {
            decide(&ChatRequest {
                messages,
                ..ChatRequest::default()
            })
            .0
        };
        let first = reply(vec![user("How do heat pumps work?"), prompt.clone()]);
        assert!(!first.contains("turn"), "{first}");
        let second = reply(vec![
            user("How do heat pumps work?"),
            ChatMessage::new(Role::Assistant, "..."),
            user("And in winter?"),
            prompt,
        ]);
        assert!(second.contains("This is turn 2"), "{second}");
    }

    #[test]
    fn every_plain_reply_says_what_it_is() {
        let request = ChatRequest {
            messages: vec![user("Tell me a story")],
            ..ChatRequest::default()
        };
        assert!(decide(&request).0.starts_with("(offline model)"));
    }
}
