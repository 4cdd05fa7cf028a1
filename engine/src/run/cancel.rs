//! Cancelling a run from outside: the handle sets the nodes' flag and wakes
//! the executor, which drops the step's in-flight node futures at once.

use tokio::sync::watch;

use crate::node::CancelFlag;

/// Cancels one run. Cloneable; cancelling twice is harmless.
#[derive(Debug, Clone)]
pub struct CancelHandle {
    flag: CancelFlag,
    wake: watch::Sender<bool>,
}

impl CancelHandle {
    pub(crate) fn new() -> Self {
        CancelHandle {
            flag: CancelFlag::new(),
            wake: watch::Sender::new(false),
        }
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
