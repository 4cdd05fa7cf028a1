//! Token batching: a streaming model emits an event per token; a node's
//! consecutive tokens within 50 ms go to the client as one `tokens`
//! message (`node`, `text`, `first_seq`, `last_seq`), so the socket stays
//! light. Every other event passes through as it is, after any pending
//! tokens, so order is kept; nothing but tokens is ever coalesced.

use heddle_engine::ids::RunId;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes};
use heddle_engine::run::{Event, EventPayload};
use heddle_wire::protocol::ServerMessage;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long tokens may wait to be sent together.
pub(super) const WINDOW: Duration = Duration::from_millis(50);

struct Pending {
    node: String,
    instance: Option<u32>,
    text: String,
    first_seq: u64,
    last_seq: u64,
    since: Instant,
}

use crate::runs::Runs;
use crate::runs::follow::Follower;
pub(super) use crate::runs::follow::Gone;

/// One subscription's outgoing events.
pub(super) struct Batcher {
    out: mpsc::Sender<Message>,
    run_id: RunId,
    pending: Option<Pending>,
    /// The `seq` after the last event handled.
    pub(super) next: u64,
    /// Where the state a run started from is read (see `base`).
    runs: Runs,
}

impl Batcher {
    pub(super) fn new(out: mpsc::Sender<Message>, run_id: RunId, next: u64, runs: Runs) -> Self {
        Batcher {
            out,
            run_id,
            pending: None,
            next,
            runs,
        }
    }

    /// Before a run's first event that holds the changes from a checkpoint
    /// of the thread: that checkpoint's state (`ServerMessage::Base`), so
    /// the viewer can rebuild the state at every step.
    async fn base(&mut self, event: &Event) -> Result<(), Gone> {
        let Some(checkpoint) = event.payload.base_checkpoint().filter(|_| event.seq == 0) else {
            return Ok(());
        };
        match self
            .runs
            .base_state(&self.run_id, checkpoint.as_str())
            .await
        {
            Ok(Some(state)) => {
                let message = ServerMessage::Base {
                    run_id: self.run_id.clone(),
                    checkpoint: checkpoint.to_string(),
                    state,
                };
                self.control(message).await
            }
            // The thread's history was deleted: the viewer shows the
            // changes from an empty state.
            Ok(None) => Ok(()),
            Err(error) => {
                tracing::warn!(run = %self.run_id, %error, "cannot read the state a run started from");
                Ok(())
            }
        }
    }

    /// When the pending tokens must go out.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.pending.as_ref().map(|pending| pending.since + WINDOW)
    }

    /// Handles one event; `text` is its message when already serialized.
    pub(super) async fn event(
        &mut self,
        event: &Arc<Event>,
        text: Option<&Utf8Bytes>,
    ) -> Result<(), Gone> {
        if event.seq < self.next {
            return Ok(());
        }
        self.next = event.seq + 1;
        // Tokens of the run's own nodes are batched by node (and fanned-out
        // instance); a child graph's go as events, with their path.
        if let EventPayload::Custom {
            node,
            instance,
            name,
            data,
        } = &event.payload
            && name == "token"
            && !event.is_nested()
        {
            let token = data["text"].as_str().unwrap_or_default();
            match &mut self.pending {
                Some(pending) if pending.node == node.as_str() && pending.instance == *instance => {
                    pending.text.push_str(token);
                    pending.last_seq = event.seq;
                }
                _ => {
                    self.flush().await?;
                    self.pending = Some(Pending {
                        node: node.to_string(),
                        instance: *instance,
                        text: token.to_string(),
                        first_seq: event.seq,
                        last_seq: event.seq,
                        since: Instant::now(),
                    });
                }
            }
            if self
                .deadline()
                .is_some_and(|deadline| Instant::now() >= deadline)
            {
                self.flush().await?;
            }
            return Ok(());
        }
        self.flush().await?;
        self.base(event).await?;
        let message = match text {
            Some(text) => Message::Text(text.clone()),
            None => Message::Text(Utf8Bytes::from(
                ServerMessage::Event {
                    event: Arc::clone(event),
                }
                .to_text(),
            )),
        };
        self.out.send(message).await.map_err(|_| Gone)
    }

    /// Sends the pending tokens, if any.
    pub(super) async fn flush(&mut self) -> Result<(), Gone> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let message = ServerMessage::Tokens {
            run_id: self.run_id.clone(),
            node: pending.node,
            instance: pending.instance,
            text: pending.text,
            first_seq: pending.first_seq,
            last_seq: pending.last_seq,
        };
        self.out
            .send(Message::Text(Utf8Bytes::from(message.to_text())))
            .await
            .map_err(|_| Gone)
    }

    /// Sends a control message (after any pending tokens).
    pub(super) async fn control(&mut self, message: ServerMessage) -> Result<(), Gone> {
        self.flush().await?;
        self.out
            .send(Message::Text(Utf8Bytes::from(message.to_text())))
            .await
            .map_err(|_| Gone)
    }
}

impl Follower for Batcher {
    fn next(&self) -> u64 {
        self.next
    }

    fn deadline(&self) -> Option<Instant> {
        Batcher::deadline(self)
    }

    async fn event(&mut self, event: &Arc<Event>, text: Option<&Utf8Bytes>) -> Result<(), Gone> {
        Batcher::event(self, event, text).await
    }

    async fn flush(&mut self) -> Result<(), Gone> {
        Batcher::flush(self).await
    }

    async fn caught_up(&mut self) -> Result<(), Gone> {
        let message = ServerMessage::CaughtUp {
            run_id: self.run_id.clone(),
            next_seq: self.next,
        };
        self.control(message).await
    }

    async fn failed(&mut self, message: &str) -> Result<(), Gone> {
        let message = ServerMessage::Error {
            message: message.to_string(),
        };
        self.control(message).await
    }
}
