//! Pruning on a period: every server prunes its database by the retention
//! policy (`CheckpointStore::prune`, see docs/runs.md, "Retention") once
//! per period, the first time one period after it starts. Several servers
//! on one database may prune at once: each thread and run is pruned in a
//! transaction of its own, and a second prune finds nothing left to do.
//! Each pass after the first looks only at threads written since the
//! previous one began; the logs of runs that ended long ago are looked at
//! every time (a run ages without being written).

use std::time::Duration;

use heddle_engine::format::Retention;
use heddle_engine::run::{CheckpointStore, Pruned};

use crate::runs::Runs;

/// Prunes `runs`' store by `policy` every `every` until aborted; `None`
/// when there is nothing to do (no period, or a policy that keeps all).
pub fn keep_pruning(
    runs: Runs,
    policy: Retention,
    every: Duration,
) -> Option<tokio::task::JoinHandle<()>> {
    if every.is_zero() || policy.is_default() {
        return None;
    }
    Some(tokio::spawn(async move {
        let mut since_us = 0;
        loop {
            tokio::time::sleep(every).await;
            let started_us = now_us();
            match pass(runs.store().as_ref(), policy, started_us, since_us).await {
                Ok(total) => {
                    since_us = started_us;
                    if total != Pruned::default() {
                        tracing::info!(
                            threads = total.threads,
                            checkpoints = total.checkpoints,
                            runs = total.runs,
                            events = total.events,
                            "pruned by the retention policy"
                        );
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot prune by the retention policy"),
            }
        }
    }))
}

/// One prune of `store` by `policy` at `now_us`, of threads written after
/// `since_us`, each thread and run it pruned logged at debug level.
pub async fn pass(
    store: &dyn CheckpointStore,
    policy: Retention,
    now_us: u64,
    since_us: u64,
) -> Result<Pruned, heddle_engine::run::StoreError> {
    store
        .prune(policy, now_us, since_us, &|pruned| {
            tracing::debug!(what = %pruned.what, checkpoints = pruned.checkpoints,
                            events = pruned.events, "pruned");
        })
        .await
}

/// Now, in microseconds since the Unix epoch.
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
        })
}
