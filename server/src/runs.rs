//! Runs on the server: started as background tasks (at most a configured
//! number at once, the rest queued), watched live through a hub per
//! running execution, and recovered after a restart.
//!
//! Closing the browser does not stop a run. Shutting the server down drops
//! the running tasks between or inside steps; their last checkpoints are in
//! the database, and the next start finishes them.

pub mod embed;
mod fence;
pub mod follow;
mod hub;
mod manager;
pub mod outcome;
mod replay;
mod requests;
mod turns;
pub mod wake;

pub use heddle_wire::runs::{ForkRequest, RunInfo, StartRequest, ThreadInfo, ThreadView};
pub use hub::{Frame, Replay, RunHub};
pub use manager::{DEFAULT_MAX_PER_OWNER, Prepared, Runs};
