//! The live websocket's messages (`GET /api/v1/ws`), one type each way,
//! shared by the server (`server/src/ws.rs`) and the browser
//! (`app/src/live/socket.rs`): the two ends cannot disagree on a field's name or
//! a status's spelling. Each is a JSON text frame tagged by `type`.

use std::sync::Arc;

use heddle_engine::ids::{RunId, ThreadId};
use heddle_engine::run::{Event, RunStatus};

use crate::graphs::GraphId;
use serde::{Deserialize, Serialize};

/// What a client asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// The run's events from `from_seq` on: the stored ones, then live.
    Subscribe {
        run_id: RunId,
        #[serde(default)]
        from_seq: u64,
    },
    /// No more of that run's events.
    Unsubscribe { run_id: RunId },
    /// Notices of the graph's runs starting, pausing and ending.
    WatchGraph { graph_id: GraphId },
    /// Asks for a `pong`.
    Ping,
}

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// One engine event (with its `run_id` and `seq`).
    Event { event: Arc<Event> },
    /// A node's streamed tokens, standing for its token events `first_seq`
    /// to `last_seq`.
    Tokens {
        run_id: RunId,
        node: String,
        /// The fanned-out instance of the node that streamed them, when a
        /// fan-out started it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instance: Option<u32>,
        text: String,
        first_seq: u64,
        last_seq: u64,
    },
    /// Sent before a run's first event when that event holds the changes
    /// from a stored checkpoint of the thread rather than the whole state
    /// the run started from (`EventPayload::base_checkpoint`): that
    /// checkpoint's state, once per subscription.
    Base {
        run_id: RunId,
        checkpoint: String,
        state: serde_json::Map<String, serde_json::Value>,
    },
    /// The stored events are sent; what follows is live.
    CaughtUp { run_id: RunId, next_seq: u64 },
    /// The run is not executing now (finished, paused or stopped);
    /// `status` is `None` when it cannot be read.
    RunIdle {
        run_id: RunId,
        status: Option<RunStatus>,
        next_seq: u64,
    },
    /// A watched graph's run changed state.
    Notice(RunNotice),
    /// The viewer's access to the graph ended: the subscription to
    /// `run_id` (or the graph's watch, when there is none) is over.
    AccessRevoked {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<RunId>,
        graph_id: GraphId,
        message: String,
    },
    /// A request the server could not answer, in words.
    Error { message: String },
    /// The answer to a `ping`.
    Pong,
}

impl ServerMessage {
    /// The message as the text frame that carries it.
    pub fn to_text(&self) -> String {
        // Every field serializes (strings, numbers, engine events built
        // from JSON values), so this cannot fail; an empty frame if it did.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl ClientMessage {
    /// The message as the text frame that carries it.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::{ClientMessage, ServerMessage};
    use heddle_engine::run::RunStatus;
    use serde_json::json;

    #[test]
    fn messages_keep_their_wire_names() {
        let subscribe: ClientMessage =
            serde_json::from_value(json!({"type": "subscribe", "run_id": "r"})).unwrap();
        assert_eq!(
            subscribe,
            ClientMessage::Subscribe {
                run_id: "r".into(),
                from_seq: 0
            }
        );
        let idle = ServerMessage::RunIdle {
            run_id: "r".into(),
            status: Some(RunStatus::Interrupted),
            next_seq: 7,
        };
        assert_eq!(
            serde_json::to_value(&idle).unwrap(),
            json!({"type": "run_idle", "run_id": "r", "status": "interrupted", "next_seq": 7})
        );
        let back: ServerMessage = serde_json::from_str(&idle.to_text()).unwrap();
        assert_eq!(back, idle);
    }
}

/// A change of a run's state that its graph's watchers hear about, on any
/// server: what the run manager announces and the websocket sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunNotice {
    pub graph_id: GraphId,
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub status: RunStatus,
    /// How the run started. A page follows the runs people start, not an
    /// experiment's (those move its Evaluations section on instead).
    #[serde(default)]
    pub origin: crate::runs::RunOrigin,
}
