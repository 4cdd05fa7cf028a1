//! Cancelling a run from outside: the handle sets the nodes' flag and wakes
//! the executor, which drops the step's in-flight node futures at once.
//! The same handle asks a run to *hand over*: to stop after the step in
//! flight, leaving its newest checkpoint for another process to go on from
//! (a server shutting down gracefully).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use crate::node::CancelFlag;

/// Cancels one run. Cloneable; cancelling twice is harmless.
#[derive(Debug, Clone)]
pub struct CancelHandle {
    flag: CancelFlag,
    wake: watch::Sender<bool>,
    hand_over: Arc<AtomicBool>,
}

impl CancelHandle {
    pub(crate) fn new() -> Self {
        CancelHandle {
            flag: CancelFlag::new(),
            wake: watch::Sender::new(false),
            hand_over: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Asks the run to stop after the step in flight, once that step's
    /// checkpoint is stored, without ending: it returns
    /// [`RunError::HandedOver`](super::RunError::HandedOver), records no
    /// end, and goes on from that checkpoint wherever it is recovered.
    pub fn hand_over(&self) {
        self.hand_over.store(true, Ordering::Release);
    }

    /// Whether the run was asked to hand over.
    pub fn is_handing_over(&self) -> bool {
        self.hand_over.load(Ordering::Acquire)
    }

    /// Asks the run to stop. It stops at once: nodes running now are
    /// dropped mid-flight, and the run ends as cancelled.
    pub fn cancel(&self) {
        self.flag.cancel();
        self.wake.send_replace(true);
    }

    /// Whether the run was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled()
    }

    pub(crate) fn flag(&self) -> &CancelFlag {
        &self.flag
    }

    /// Resolves when the run is cancelled.
    pub(crate) async fn cancelled(&self) {
        let mut wake = self.wake.subscribe();
        // The sender lives in `self`, so waiting cannot fail.
        let _ = wake.wait_for(|cancelled| *cancelled).await;
    }
}
