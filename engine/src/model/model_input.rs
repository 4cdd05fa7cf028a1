//! What a node asked its model, as a run's trace shows it: the system
//! prompt as rendered for this call, how many messages of the
//! conversation went with it, and the last message (the question). A node
//! that calls a model reports it once per execution as a custom event
//! ([`MODEL_INPUT_EVENT`]), so a person can check what the model was told
//! without a debugger. The conversation itself is in the state (the State
//! tab); it is counted, not copied, so a long chat's log does not grow
//! with the square of its length.

use serde::{Deserialize, Serialize};

use super::{ChatMessage, Role};

/// The custom event's name.
pub const MODEL_INPUT_EVENT: &str = "model_input";

/// The most characters of a text kept (the rest is said to be cut).
pub const MODEL_INPUT_CHARS: usize = 4_000;

/// What a node asked its model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInput {
    /// The system messages' text, joined.
    #[serde(default)]
    pub system: String,
    /// Messages between the system prompt and the last one.
    #[serde(default)]
    pub earlier: u32,
    /// The last message, when there is one besides the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<LastMessage>,
}

/// The last message sent: who said it, and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastMessage {
    pub role: Role,
    pub text: String,
}

impl ModelInput {
    /// The input of a request of `messages`, long texts cut to
    /// [`MODEL_INPUT_CHARS`].
    pub fn of(messages: &[ChatMessage]) -> ModelInput {
        let system: Vec<&str> = messages
            .iter()
            .filter(|message| message.role == Role::System)
            .map(|message| message.content.as_str())
            .collect();
        let rest: Vec<&ChatMessage> = messages
            .iter()
            .filter(|message| message.role != Role::System)
            .collect();
        ModelInput {
            system: cut(&system.join("\n\n")),
            earlier: u32::try_from(rest.len().saturating_sub(1)).unwrap_or(u32::MAX),
            last: rest.last().map(|message| LastMessage {
                role: message.role,
                text: cut(&message.content),
            }),
        }
    }
}

/// `text` cut to [`MODEL_INPUT_CHARS`] characters, saying it was.
fn cut(text: &str) -> String {
    match cut_at_chars(text, MODEL_INPUT_CHARS) {
        (kept, Some(more)) => format!("{kept}… ({more} more characters)"),
        (kept, None) => kept.to_string(),
    }
}

/// The first `most` characters of `text` (cut on a character, never
/// inside one), and how many more there are when it was cut.
pub fn cut_at_chars(text: &str, most: usize) -> (&str, Option<usize>) {
    match text.char_indices().nth(most) {
        Some((at, _)) => (&text[..at], Some(text[at..].chars().count())),
        None => (text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_told_by_its_system_prompt_its_last_message_and_a_count() {
        let messages = vec![
            ChatMessage::new(Role::System, "You answer billing questions."),
            ChatMessage::new(Role::User, "hello"),
            ChatMessage::new(Role::Assistant, "hi"),
            ChatMessage::new(Role::User, "I was charged twice"),
        ];
        let input = ModelInput::of(&messages);
        assert_eq!(input.system, "You answer billing questions.");
        assert_eq!(input.earlier, 2);
        assert_eq!(
            input.last,
            Some(LastMessage {
                role: Role::User,
                text: "I was charged twice".into()
            })
        );
        // Nothing but a system prompt: no last message, none earlier.
        let alone = ModelInput::of(&messages[..1]);
        assert_eq!((alone.earlier, alone.last), (0, None));
        assert_eq!(ModelInput::of(&[]), ModelInput::default());
    }

    #[test]
    fn long_texts_are_cut_on_a_character_and_say_so() {
        let long = "温".repeat(MODEL_INPUT_CHARS + 10);
        let input = ModelInput::of(&[
            ChatMessage::new(Role::System, long.clone()),
            ChatMessage::new(Role::User, long),
        ]);
        assert!(
            input.system.ends_with("… (10 more characters)"),
            "{}",
            &input.system[input.system.len() - 40..]
        );
        let last = input.last.expect("last");
        assert_eq!(
            last.text.chars().count(),
            MODEL_INPUT_CHARS + "… (10 more characters)".chars().count()
        );
    }
}
