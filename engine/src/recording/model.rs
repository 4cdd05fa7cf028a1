//! A model whose replies go through a recording: given back when one is
//! recorded for the request, else asked of the real model and recorded.

use std::sync::{Arc, Mutex};

use super::line::{Line, RecordedDelta};
use super::{Book, key, lock};
use crate::model::{ChatModel, ChatRequest, Delta, ModelError, ModelFuture, SharedModel};

pub(super) struct RecordedModel {
    inner: SharedModel,
    book: Arc<Book>,
}

impl RecordedModel {
    pub(super) fn new(inner: SharedModel, book: Arc<Book>) -> Self {
        RecordedModel { inner, book }
    }
}

impl ChatModel for RecordedModel {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let key = key::model_call(self.inner.name(), &request);
            if let Some(line) = self.book.take(&key)
                && let Line::Model {
                    deltas: recorded,
                    reply,
                    ..
                } = &line
            {
                for delta in recorded {
                    deltas(Delta::from(delta.clone()));
                }
                let reply = reply.clone().into();
                self.book.replayed(line);
                return Ok(reply);
            }
            let streamed: Mutex<Vec<RecordedDelta>> = Mutex::new(Vec::new());
            let forward = |delta: Delta| {
                lock(&streamed).push(RecordedDelta::from(&delta));
                deltas(delta);
            };
            if !self.book.go_live() {
                return Err(ModelError::Refused(format!(
                    "no recorded reply for this call to {} (replaying only)",
                    self.inner.name()
                )));
            }
            let reply = self.inner.chat(request, &forward).await?;
            let line = Line::Model {
                key,
                model: self.inner.name().to_string(),
                deltas: std::mem::take(&mut *lock(&streamed)),
                reply: (&reply).into(),
            };
            self.book.recorded(line);
            Ok(reply)
        })
    }
}
