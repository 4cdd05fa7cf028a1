//! The recordings of the experiment runs this process started: each run
//! of an experiment that records its replies gets a recording of its own
//! (given the replies of the same item of the experiment it replays), and
//! its driver keeps what it holds when the run ends.
//!
//! They live in this process only: a run that a restart or another server
//! resumes is compiled again without its recording, so the rest of its
//! calls go to the models and are not kept (its item is then replayed in
//! part, or not at all, next time). A recording whose run never ends here
//! (its experiment deleted meanwhile) is dropped after a day.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use heddle_engine::RunId;
use heddle_engine::recording::Recording;

/// How long a recording waits for its run's end before it is dropped.
const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// The most one run's replies may take in the database; a bigger one is
/// not kept (and said so in the log).
pub(super) const MAX_KEPT_BYTES: usize = 8 << 20;

static RECORDINGS: LazyLock<Mutex<HashMap<RunId, (Instant, Recording)>>> =
    LazyLock::new(Default::default);

fn recordings() -> MutexGuard<'static, HashMap<RunId, (Instant, Recording)>> {
    // A panic while the map was held leaves it usable: it holds no invariant.
    RECORDINGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Holds `recording` until `run` ends.
pub(super) fn begin(run: &RunId, recording: Recording) {
    let mut held = recordings();
    held.retain(|_, (since, _)| since.elapsed() < KEPT_FOR);
    held.insert(run.clone(), (Instant::now(), recording));
}

/// The recording `run` was started with here, taken.
pub(super) fn finish(run: &RunId) -> Option<Recording> {
    recordings().remove(run).map(|(_, recording)| recording)
}
