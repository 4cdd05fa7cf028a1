//! A run as the graph page shows it, built from the run's events as they
//! arrive over the websocket.
//!
//! - [`log`]: every event received, and what the panels read from it (the
//!   view at a step, the state after each step, the executions).
//! - [`view`]: the canvas's view of a run at one moment, a pure fold.
//! - [`compare`]: two runs side by side, step by step and channel by channel.
//! - [`protocol`]: the websocket's messages, shared with the server.
//! - `socket` (in the browser): the websocket, batching events into one
//!   update per animation frame.
//! - [`api`]: starting, stopping, resuming and forking runs, and reading
//!   them, through the typed server functions of [`crate::runs`].

pub mod compare;
pub mod log;
pub use heddle_wire::protocol;
pub mod view;

pub mod api;
#[cfg(feature = "hydrate")]
pub mod socket;

use heddle_engine::ids::{RunId, ThreadId};
use heddle_engine::run::RunStatus;
use leptos::prelude::*;

pub use self::log::{Execution, Outcome, RunLog, TokenChunk, status_after, step_of};
pub use self::view::{NodeState, NodeStats, RunView};

/// What the socket reports besides the run itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Live,
    /// Access to the graph ended (a revoked link, a removed role).
    Revoked,
    /// The socket closed (log-out, server shutdown, network).
    Closed,
}

/// The run the page watches, shared by the canvas and the run panels.
#[derive(Clone, Copy)]
pub struct Watch {
    /// Every event of the run received so far.
    pub log: RwSignal<RunLog>,
    /// What the canvas shows: the run now, or at the replay's step.
    pub view: RwSignal<RunView>,
    /// A replay's step; `None` follows the run as it happens.
    pub cursor: RwSignal<Option<u32>>,
    pub link: RwSignal<Link>,
    /// The thread of the watched run, when known.
    pub thread: RwSignal<Option<ThreadId>>,
    /// Where the run stands now, whatever moment the page shows.
    pub status: RwSignal<Option<RunStatus>>,
    /// Counts the graph's experiment runs that started or ended: what
    /// moves the Evaluations section on, as it happens.
    pub experiment_runs: RwSignal<u64>,
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            log: RwSignal::new(RunLog::default()),
            view: RwSignal::new(RunView::default()),
            cursor: RwSignal::new(None),
            link: RwSignal::new(Link::Connecting),
            thread: RwSignal::new(None),
            status: RwSignal::new(None),
            experiment_runs: RwSignal::new(0),
        }
    }

    /// Starts watching `run_id` afresh (a new run, or another one opened).
    pub fn reset(&self, run_id: &RunId, thread: Option<ThreadId>) {
        self.log.set(RunLog::new(run_id));
        self.view.set(RunView::of(run_id));
        self.cursor.set(None);
        self.thread.set(thread);
        self.status.set(Some(RunStatus::Running));
    }

    /// Moves the replay to `step` (`None`: the run as it is now).
    pub fn seek(&self, step: Option<u32>) {
        self.cursor.set(step);
        let view = self.log.with_untracked(|log| log.view_at(step));
        self.view.set(view);
    }
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new()
    }
}
