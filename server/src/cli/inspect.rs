//! `heddle threads` and `heddle history --thread ID`.

use std::io::Write;

use heddle_engine::ThreadId;
use heddle_engine::run::CheckpointStore;

use super::{CliError, Outcome};

/// Lists the threads, most recently active first.
pub async fn threads(
    store: &dyn CheckpointStore,
    out: &mut dyn Write,
) -> Result<Outcome, CliError> {
    let threads = store.threads().await?;
    if threads.is_empty() {
        writeln!(
            out,
            "no threads yet: start one with `heddle run GRAPH.json`"
        )?;
    }
    for thread in threads {
        writeln!(
            out,
            "{}\t{}\t{} run{}\tlast run {} at step {}",
            thread.thread_id,
            thread.latest.status.as_str(),
            thread.runs,
            if thread.runs == 1 { "" } else { "s" },
            thread.latest.run_id,
            thread.latest.step
        )?;
    }
    Ok(Outcome::Done)
}

/// Lists a thread's checkpoints, oldest first.
pub async fn history(
    store: &dyn CheckpointStore,
    thread: &str,
    out: &mut dyn Write,
) -> Result<Outcome, CliError> {
    let history = store.history(&ThreadId::from(thread)).await?;
    if history.is_empty() {
        writeln!(out, "thread `{thread}` has no checkpoints")?;
    }
    for checkpoint in history {
        let next: Vec<&str> = checkpoint.next.iter().map(|node| node.as_str()).collect();
        writeln!(
            out,
            "{}\trun {}\tstep {}\t{}\tnext: {}",
            checkpoint.id,
            checkpoint.run_id,
            checkpoint.step,
            checkpoint.status.as_str(),
            if next.is_empty() {
                "-".to_string()
            } else {
                next.join(", ")
            }
        )?;
    }
    Ok(Outcome::Done)
}
