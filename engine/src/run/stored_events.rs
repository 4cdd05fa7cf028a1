//! How a batch of a run's events is stored: a body that names its
//! protocol version, with a node's consecutive streamed tokens kept as one
//! text.
//!
//! Live viewers get every token as its own event; stored one by one, a
//! word of six bytes cost about 130 bytes of envelope. A batch keeps each
//! run of consecutive `token` events of one node as one text with each
//! token's length and how long after the one before it came, and reading
//! expands them back: the same events, numbers and times as were sent.
//!
//! Versions of the body:
//! - 1: a JSON array of events (stored before versions were named);
//! - 2: `{"protocol": 2, "events": [...], "tokens": [...]}`.
//!
//! A body of a newer version than this build reads is refused with a
//! message saying so, never misread.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::event::{Event, EventPayload, Hop};
use super::store::StoreError;
use crate::ids::{NodeId, RunId};

/// The version of the stored batch this build writes.
pub const PROTOCOL: u32 = 2;

/// The name of a streamed token's event (`EventPayload::Custom`).
const TOKEN: &str = "token";

/// A stored batch, version 2.
#[derive(Serialize, Deserialize)]
struct Body {
    protocol: u32,
    /// The events that are not in a token run, in order.
    events: Vec<Event>,
    /// The token runs, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tokens: Vec<TokenRun>,
}

/// Consecutive `token` events of one node, as one text.
#[derive(Serialize, Deserialize)]
struct TokenRun {
    /// The first token's number; the others follow without a gap.
    seq: u64,
    /// The first token's time.
    at_us: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    path: Vec<Hop>,
    node: NodeId,
    /// The fanned-out instance of the node that streamed them, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instance: Option<u32>,
    /// The tokens' texts, joined.
    text: String,
    /// Each token's length in `text`, in bytes.
    lens: Vec<usize>,
    /// How long after the one before each token came, in microseconds (0
    /// for the first).
    gaps_us: Vec<u64>,
    /// The last token's time (not stored: while taking tokens in).
    #[serde(skip)]
    last_us: u64,
}

impl TokenRun {
    fn starting(event: &Event, token: Token<'_>) -> Self {
        let Token {
            node,
            instance,
            text,
        } = token;
        TokenRun {
            seq: event.seq,
            at_us: event.at_us,
            path: event.path.clone(),
            node: node.clone(),
            instance,
            text: text.to_owned(),
            lens: vec![text.len()],
            gaps_us: vec![0],
            last_us: event.at_us,
        }
    }

    /// Takes `event` in when it is the next token of this run's node (and
    /// instance).
    fn take(&mut self, event: &Event, token: Token<'_>) -> bool {
        let next = self.seq + self.lens.len() as u64;
        if event.seq != next
            || *token.node != self.node
            || token.instance != self.instance
            || event.path != self.path
        {
            return false;
        }
        let text = token.text;
        let Some(gap) = event.at_us.checked_sub(self.last_us) else {
            return false;
        };
        self.text.push_str(text);
        self.lens.push(text.len());
        self.gaps_us.push(gap);
        self.last_us = event.at_us;
        true
    }

    /// The token events again, checking what a damaged body could break.
    fn expand(self, run: &RunId) -> Result<Vec<Event>, StoreError> {
        let corrupt = |why: &str| {
            StoreError::Corrupt(format!(
                "the stored tokens of run `{run}` from event {} {why}",
                self.seq
            ))
        };
        if self.lens.len() != self.gaps_us.len() {
            return Err(corrupt("have as many lengths as times"));
        }
        let mut events = Vec::with_capacity(self.lens.len());
        let mut start: usize = 0;
        let mut at_us = self.at_us;
        for (i, (&len, &gap)) in self.lens.iter().zip(&self.gaps_us).enumerate() {
            let end = start.saturating_add(len);
            let Some(text) = self.text.get(start..end) else {
                return Err(corrupt("do not split their text where tokens begin"));
            };
            let (Some(seq), Some(at)) = (self.seq.checked_add(i as u64), at_us.checked_add(gap))
            else {
                return Err(corrupt("are numbered past the largest number"));
            };
            at_us = at;
            let mut data = Map::new();
            data.insert("text".into(), Value::String(text.to_owned()));
            events.push(Event {
                run_id: run.clone(),
                seq,
                at_us,
                path: self.path.clone(),
                payload: EventPayload::Custom {
                    node: self.node.clone(),
                    instance: self.instance,
                    name: TOKEN.into(),
                    data: Value::Object(data),
                },
            });
            start = end;
        }
        if start != self.text.len() {
            return Err(corrupt("have text after their last token"));
        }
        Ok(events)
    }
}

/// Who streamed a token, and its text.
#[derive(Clone, Copy)]
struct Token<'a> {
    node: &'a NodeId,
    instance: Option<u32>,
    text: &'a str,
}

/// The streamed token of an event (`{"text": "..."}` and nothing else),
/// which a token run can hold.
fn token(event: &Event) -> Option<Token<'_>> {
    let EventPayload::Custom {
        node,
        instance,
        name,
        data,
    } = &event.payload
    else {
        return None;
    };
    let Value::Object(data) = data else {
        return None;
    };
    match (name == TOKEN, data.len(), data.get("text")) {
        (true, 1, Some(Value::String(text))) => Some(Token {
            node,
            instance: *instance,
            text,
        }),
        _ => None,
    }
}

/// The stored body of `events` (one run's, in order).
pub(crate) fn encode<'a>(
    events: impl IntoIterator<Item = &'a Event>,
) -> Result<String, serde_json::Error> {
    let mut body = Body {
        protocol: PROTOCOL,
        events: Vec::new(),
        tokens: Vec::new(),
    };
    for event in events {
        match token(event) {
            Some(token) => {
                let taken = body
                    .tokens
                    .last_mut()
                    .is_some_and(|run| run.take(event, token));
                if !taken {
                    body.tokens.push(TokenRun::starting(event, token));
                }
            }
            None => body.events.push(event.clone()),
        }
    }
    serde_json::to_string(&body)
}

/// The events of a stored body, in order, with its token runs expanded.
pub(crate) fn decode(run: &RunId, body: &str) -> Result<Vec<Event>, StoreError> {
    if body.trim_start().starts_with('[') {
        // Version 1.
        return super::stored_state::parse(body);
    }
    let newer = |protocol: u32| {
        StoreError::Corrupt(format!(
            "events of run `{run}` were stored by a newer Heddle (protocol {protocol}); this \
             one reads protocols up to {PROTOCOL}"
        ))
    };
    let body: Body = match super::stored_state::parse(body) {
        Ok(parsed) => parsed,
        Err(error) => {
            // A newer body may not read as this version's: say why.
            #[derive(Deserialize)]
            struct Version {
                protocol: u32,
            }
            return Err(match super::stored_state::parse::<Version>(body) {
                Ok(version) if version.protocol > PROTOCOL => newer(version.protocol),
                _ => error,
            });
        }
    };
    if body.protocol > PROTOCOL {
        return Err(newer(body.protocol));
    }
    let mut tokens = Vec::new();
    for token_run in body.tokens {
        tokens.extend(token_run.expand(run)?);
    }
    if tokens.is_empty() {
        return Ok(body.events);
    }
    // Both are in order: merge them by number.
    let mut merged = Vec::with_capacity(body.events.len() + tokens.len());
    let mut others = body.events.into_iter().peekable();
    for token in tokens {
        while let Some(event) = others.next_if(|event| event.seq < token.seq) {
            merged.push(event);
        }
        merged.push(token);
    }
    merged.extend(others);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(seq: u64, at_us: u64, payload: EventPayload) -> Event {
        Event {
            run_id: RunId::from("r"),
            seq,
            at_us,
            path: Vec::new(),
            payload,
        }
    }

    fn custom(seq: u64, at_us: u64, node: &str, name: &str, data: Value) -> Event {
        event(
            seq,
            at_us,
            EventPayload::Custom {
                node: NodeId::from(node),
                instance: None,
                name: name.into(),
                data,
            },
        )
    }

    fn tok(seq: u64, at_us: u64, node: &str, text: &str) -> Event {
        custom(seq, at_us, node, TOKEN, json!({ "text": text }))
    }

    #[test]
    fn tokens_read_back_as_the_events_they_were() {
        let events = vec![
            event(
                0,
                10,
                EventPayload::StepStarted {
                    step: 0,
                    tasks: vec![],
                },
            ),
            tok(1, 20, "a", "Hé"),
            tok(2, 25, "a", "llo"),
            tok(3, 25, "b", " wörld"),
            tok(4, 40, "a", ""),
            custom(5, 41, "a", TOKEN, json!({"text": "x", "extra": 1})),
            custom(6, 42, "a", "tool_call", json!({"name": "t"})),
            tok(7, 43, "a", "!"),
            tok(8, 7, "a", "time went back"),
        ];
        let body = encode(&events).unwrap();
        assert!(body.starts_with(r#"{"protocol":2,"#), "{body}");
        // Runs: [1,2], [3], [4], [7], [8]: `Hé` and `llo` share one text.
        assert!(body.contains(r#""text":"Héllo""#), "{body}");
        assert_eq!(decode(&RunId::from("r"), &body).unwrap(), events);
    }

    #[test]
    fn the_instances_of_a_fan_out_keep_their_own_tokens() {
        let of = |seq: u64, instance: u32, text: &str| {
            let mut event = tok(seq, seq * 10, "research", text);
            if let EventPayload::Custom { instance: at, .. } = &mut event.payload {
                *at = Some(instance);
            }
            event
        };
        // Two instances stream in turns, then one streams on its own.
        let events = vec![
            of(0, 0, "Heat "),
            of(1, 1, "Cost "),
            of(2, 0, "pumps"),
            of(3, 1, "falls"),
            of(4, 1, " fast"),
        ];
        let body = encode(&events).unwrap();
        assert!(body.contains(r#""text":"falls fast""#), "{body}");
        assert!(!body.contains("Heat Cost"), "{body}");
        assert_eq!(decode(&RunId::from("r"), &body).unwrap(), events);
    }

    #[test]
    fn a_batch_of_many_tokens_is_a_small_part_of_their_events() {
        let events: Vec<Event> = (0..500)
            .map(|i| tok(i, 1_000_000 + i * 20_000, "reply", "word "))
            .collect();
        let one_by_one = serde_json::to_string(&events).unwrap().len();
        let stored = encode(&events).unwrap().len();
        assert!(stored * 6 < one_by_one, "{stored} of {one_by_one}");
        assert_eq!(
            decode(&RunId::from("r"), &encode(&events).unwrap()).unwrap(),
            events
        );
    }

    #[test]
    fn the_first_bodies_still_read_and_a_newer_protocol_is_refused() {
        let events = vec![tok(0, 1, "a", "hi")];
        let old = serde_json::to_string(&events).unwrap();
        assert_eq!(decode(&RunId::from("r"), &old).unwrap(), events);
        let newer = r#"{"protocol":3,"events":[],"future":true}"#;
        let error = decode(&RunId::from("r"), newer).unwrap_err().to_string();
        assert!(error.contains("newer Heddle (protocol 3)"), "{error}");
    }

    #[test]
    fn a_damaged_token_run_is_refused_not_misread() {
        let run = RunId::from("r");
        for tokens in [
            json!([{"seq": 0, "at_us": 0, "node": "a", "text": "héllo", "lens": [2], "gaps_us": [0]}]),
            json!([{"seq": 0, "at_us": 0, "node": "a", "text": "ab", "lens": [1], "gaps_us": [0]}]),
            json!([{"seq": 0, "at_us": 0, "node": "a", "text": "ab", "lens": [2, 1], "gaps_us": [0, 0]}]),
            json!([{"seq": 0, "at_us": 0, "node": "a", "text": "ab", "lens": [2], "gaps_us": []}]),
            json!([{"seq": u64::MAX, "at_us": 0, "node": "a", "text": "ab", "lens": [1, 1], "gaps_us": [0, 0]}]),
        ] {
            let body = json!({"protocol": 2, "events": [], "tokens": tokens}).to_string();
            assert!(
                matches!(decode(&run, &body), Err(StoreError::Corrupt(_))),
                "{body}"
            );
        }
    }
}
