//! How the SQL stores keep a checkpoint's state: whole (a snapshot) or as
//! its changes from an earlier checkpoint of the thread (its base), so a
//! conversation of a thousand turns does not store its whole state four
//! times a turn.
//!
//! A row holds its checkpoint without the state, and either the state or
//! the changes ([`crate::state::changes`]) from its base. Rows made from
//! one snapshot form a chain; every row of a chain names its snapshot, so
//! loading any checkpoint is one indexed read of its chain, then the
//! snapshot with the changes applied in order. A chain ends, and the next
//! checkpoint is a snapshot, once the rows since the last snapshot would
//! outgrow the snapshot itself: what is stored stays within about three
//! times the newest state, and a load reads at most about twice it.
//! (A snapshot every K steps would still grow with the square of a
//! conversation.)
//!
//! The changes are found by comparing the new state with the base's, which
//! the store keeps for the newest checkpoint it wrote of each thread
//! ([`Tips`], bounded in bytes), or reads back when another process wrote
//! it. Rows are never changed once written, so any process may use any
//! stored checkpoint as a base. Rows written before this (no snapshot
//! named) are snapshots.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};

use super::checkpoint::Checkpoint;
use super::store::StoreError;
use crate::ids::{CheckpointId, ThreadId};
use crate::state::changes::{self, Changes};

/// The most state [`Tips`] keeps, in bytes of JSON, across threads.
const TIPS_MAX_BYTES: usize = 64 * 1024 * 1024;
/// The most threads [`Tips`] keeps a state for.
const TIPS_MAX_THREADS: usize = 4096;

/// A checkpoint as a row holds it.
#[derive(Debug)]
pub(crate) struct Encoded {
    /// The checkpoint without its state (`"state": null`) for a row of
    /// changes, or with it for a snapshot.
    pub(crate) body: String,
    /// The changes from `base`, as JSON (`None` for a snapshot).
    pub(crate) changes: Option<String>,
    pub(crate) base: Option<CheckpointId>,
    /// The chain's snapshot (the checkpoint itself for a snapshot).
    pub(crate) snapshot: CheckpointId,
    /// How many bytes the chain may still take before the next snapshot.
    pub(crate) budget: i64,
}

/// A stored row, as the reads select it.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct StoredRow {
    pub(crate) checkpoint_id: String,
    pub(crate) body: String,
    pub(crate) changes: Option<String>,
    pub(crate) base_id: Option<String>,
    pub(crate) snapshot_id: Option<String>,
    pub(crate) budget: i64,
}

/// The columns [`StoredRow`] reads, for the stores' `SELECT`s.
macro_rules! stored_columns {
    () => {
        "checkpoint_id, body, changes, base_id, snapshot_id, budget"
    };
}
pub(crate) use stored_columns;

impl StoredRow {
    /// Whether the row holds its whole state.
    pub(crate) fn is_snapshot(&self) -> bool {
        self.changes.is_none()
    }
}

/// The newest checkpoint a store wrote of a thread, with its whole state:
/// the base the thread's next checkpoint is compared with.
#[derive(Debug, Clone)]
pub(crate) struct Tip {
    pub(crate) id: CheckpointId,
    pub(crate) snapshot: CheckpointId,
    pub(crate) budget: i64,
    pub(crate) state: Map<String, Value>,
    /// About how many bytes of JSON the state is.
    bytes: usize,
    used: u64,
}

impl Tip {
    /// The tip a loaded checkpoint makes (its state taken out of it).
    pub(crate) fn of_loaded(checkpoint: &Checkpoint, row: &StoredRow) -> Option<Tip> {
        let Value::Object(state) = &checkpoint.state else {
            return None;
        };
        Some(Tip {
            id: checkpoint.id.clone(),
            snapshot: CheckpointId::from(
                row.snapshot_id
                    .clone()
                    .unwrap_or_else(|| row.checkpoint_id.clone()),
            ),
            // Rows from before chains: a snapshot with no budget left, so
            // the next checkpoint is a snapshot that starts a chain.
            budget: if row.snapshot_id.is_some() {
                row.budget
            } else {
                0
            },
            bytes: changes::json_size(state),
            state: state.clone(),
            used: 0,
        })
    }
}

/// Each thread's [`Tip`], for the threads written most recently, within
/// [`TIPS_MAX_BYTES`].
#[derive(Default)]
pub(crate) struct Tips {
    inner: Mutex<TipsInner>,
}

impl std::fmt::Debug for Tips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Tips")
            .field("threads", &inner.tips.len())
            .field("bytes", &inner.bytes)
            .finish()
    }
}

#[derive(Default)]
struct TipsInner {
    tips: HashMap<ThreadId, Tip>,
    bytes: usize,
    clock: u64,
}

impl Tips {
    /// Takes the thread's tip out (a save puts the next one back once it
    /// is written; a failed save leaves none, and the next save reads its
    /// base back).
    pub(crate) fn take(&self, thread: &ThreadId) -> Option<Tip> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let tip = inner.tips.remove(thread)?;
        inner.bytes = inner.bytes.saturating_sub(tip.bytes);
        Some(tip)
    }

    /// The state of the thread's tip, when the tip is checkpoint `id`: a
    /// load of the newest checkpoint need not read its chain back.
    pub(crate) fn state_if(&self, thread: &ThreadId, id: &str) -> Option<Map<String, Value>> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .tips
            .get(thread)
            .filter(|tip| tip.id.as_str() == id)
            .map(|tip| tip.state.clone())
    }

    /// Makes `tip` the thread's unless it has one (a load's, which a
    /// writer's own tip takes precedence over).
    pub(crate) fn offer(&self, thread: &ThreadId, tip: Tip) {
        let present = self
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tips
            .contains_key(thread);
        if !present {
            self.put(thread.clone(), tip);
        }
    }

    /// Makes `tip` the thread's, dropping the least recently written
    /// threads' past the bounds.
    pub(crate) fn put(&self, thread: ThreadId, mut tip: Tip) {
        if tip.bytes > TIPS_MAX_BYTES / 4 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        tip.used = inner.clock;
        inner.bytes += tip.bytes;
        if let Some(old) = inner.tips.insert(thread, tip) {
            inner.bytes = inner.bytes.saturating_sub(old.bytes);
        }
        while inner.bytes > TIPS_MAX_BYTES || inner.tips.len() > TIPS_MAX_THREADS {
            let Some(oldest) = inner
                .tips
                .iter()
                .min_by_key(|(_, tip)| tip.used)
                .map(|(thread, _)| thread.clone())
            else {
                break;
            };
            if let Some(gone) = inner.tips.remove(&oldest) {
                inner.bytes = inner.bytes.saturating_sub(gone.bytes);
            }
        }
    }
}

/// Checkpoints written in a transaction not yet committed: the tips they
/// make, which the store takes up once the transaction commits
/// ([`crate::run::postgres::PostgresStore::committed`]). Dropped instead
/// (a transaction that did not commit), the store reads the bases of
/// those threads back from what is stored.
#[must_use = "give it to the store once the transaction commits"]
pub struct Written {
    pub(crate) tips: Vec<(ThreadId, Tip)>,
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field("threads", &self.tips.len())
            .finish()
    }
}

impl Tips {
    /// Takes up the tips of a committed transaction.
    pub(crate) fn settle(&self, written: Written) {
        for (thread, tip) in written.tips {
            self.put(thread, tip);
        }
    }
}

/// A record read back from its JSON column. A record stored before run
/// values were bounded may nest deeper than the parser goes (128 levels):
/// its too-deep parts are read as a note saying they were cut, so the run
/// still opens (see [`crate::state::from_stored_json`]).
pub(crate) fn parse<T: serde::de::DeserializeOwned>(body: &str) -> Result<T, StoreError> {
    crate::state::from_stored_json(body)
        .map_err(|e| StoreError::Corrupt(format!("a stored record does not read back: {e}")))
}

fn encode_error(checkpoint: &Checkpoint) -> impl Fn(serde_json::Error) -> StoreError + '_ {
    move |e| StoreError::Corrupt(format!("cannot encode checkpoint `{}`: {e}", checkpoint.id))
}

/// Encodes `checkpoint` as the changes from `base` when the chain has room
/// for them, else as a snapshot; returns the row and the tip it makes.
pub(crate) fn encode(
    checkpoint: &Checkpoint,
    base: Option<Tip>,
) -> Result<(Encoded, Option<Tip>), StoreError> {
    let Value::Object(state) = &checkpoint.state else {
        // Not a state a tip can hold: stored whole, as it is.
        let body = serde_json::to_string(checkpoint).map_err(encode_error(checkpoint))?;
        let budget = body.len() as i64;
        return Ok((snapshot_row(checkpoint, body, budget), None));
    };
    if let Some(mut base) = base {
        let found: Changes = changes::diff(&base.state, state);
        let changes = serde_json::to_string(&found).map_err(encode_error(checkpoint))?;
        let body = body_without_state(checkpoint)?;
        let cost = (changes.len() + body.len()) as i64;
        if cost <= base.budget {
            // The tip moves on: the changes applied to the base's state
            // are the checkpoint's state (they were found by comparing).
            changes::apply(&mut base.state, &found)
                .map_err(|e| StoreError::Corrupt(format!("checkpoint `{}`: {e}", checkpoint.id)))?;
            let encoded = Encoded {
                body,
                changes: Some(changes),
                base: Some(base.id.clone()),
                snapshot: base.snapshot.clone(),
                budget: base.budget - cost,
            };
            let tip = Tip {
                id: checkpoint.id.clone(),
                snapshot: base.snapshot,
                budget: encoded.budget,
                bytes: base.bytes + cost as usize,
                state: base.state,
                used: 0,
            };
            return Ok((encoded, Some(tip)));
        }
    }
    let body = serde_json::to_string(checkpoint).map_err(encode_error(checkpoint))?;
    let budget = body.len() as i64;
    let tip = Tip {
        id: checkpoint.id.clone(),
        snapshot: checkpoint.id.clone(),
        budget,
        bytes: body.len(),
        state: state.clone(),
        used: 0,
    };
    Ok((snapshot_row(checkpoint, body, budget), Some(tip)))
}

fn snapshot_row(checkpoint: &Checkpoint, body: String, budget: i64) -> Encoded {
    Encoded {
        body,
        changes: None,
        base: None,
        snapshot: checkpoint.id.clone(),
        budget,
    }
}

/// The checkpoint as JSON with `"state": null`: a shallow copy without
/// the state, the one large field, which is not cloned.
fn body_without_state(checkpoint: &Checkpoint) -> Result<String, StoreError> {
    let without = Checkpoint {
        state: Value::Null,
        next: checkpoint.next.clone(),
        arrivals: checkpoint.arrivals.clone(),
        interrupts: checkpoint.interrupts.clone(),
        completed: checkpoint.completed.clone(),
        id: checkpoint.id.clone(),
        thread_id: checkpoint.thread_id.clone(),
        run_id: checkpoint.run_id.clone(),
        parent: checkpoint.parent.clone(),
        step: checkpoint.step,
        status: checkpoint.status,
        next_seq: checkpoint.next_seq,
        error: checkpoint.error.clone(),
        created_at_us: checkpoint.created_at_us,
        usage: checkpoint.usage,
        reached_end: checkpoint.reached_end,
    };
    serde_json::to_string(&without).map_err(encode_error(checkpoint))
}

/// Rebuilds the checkpoint `id` from the rows of its chain (any order; rows
/// of other branches of the chain are passed over): the snapshot, then each
/// row's changes from its base, up to `id`.
pub(crate) fn rebuild(id: &str, rows: &[StoredRow]) -> Result<Option<Checkpoint>, StoreError> {
    let by_id: HashMap<&str, &StoredRow> = rows
        .iter()
        .map(|row| (row.checkpoint_id.as_str(), row))
        .collect();
    let Some(target) = by_id.get(id) else {
        return Ok(None);
    };
    // From the target back to the snapshot.
    let mut path: Vec<&StoredRow> = vec![target];
    let mut at = *target;
    while !at.is_snapshot() {
        let Some(base) = at.base_id.as_deref() else {
            return Err(StoreError::Corrupt(format!(
                "checkpoint `{}` holds changes but names no base",
                at.checkpoint_id
            )));
        };
        let Some(row) = by_id.get(base) else {
            return Err(StoreError::Corrupt(format!(
                "checkpoint `{}` is stored as changes from `{base}`, which is not stored",
                at.checkpoint_id
            )));
        };
        if path.len() > rows.len() {
            return Err(StoreError::Corrupt(format!(
                "the chain of checkpoint `{id}` loops"
            )));
        }
        path.push(row);
        at = row;
    }
    let snapshot = path.pop().map(|row| row.body.as_str()).unwrap_or_default();
    let mut checkpoint: Checkpoint = parse(snapshot)?;
    let Value::Object(mut state) = std::mem::take(&mut checkpoint.state) else {
        // A snapshot with another state than an object has no changes after
        // it (see `encode`).
        return match path.is_empty() {
            true => Ok(Some(checkpoint)),
            false => Err(StoreError::Corrupt(format!(
                "checkpoint `{id}` is stored as changes from a state that is not an object"
            ))),
        };
    };
    for row in path.into_iter().rev() {
        let found: Changes = parse(row.changes.as_deref().unwrap_or("{}"))?;
        changes::apply(&mut state, &found)
            .map_err(|e| StoreError::Corrupt(format!("checkpoint `{}`: {e}", row.checkpoint_id)))?;
        checkpoint = parse(&row.body)?;
    }
    checkpoint.state = Value::Object(state);
    Ok(Some(checkpoint))
}
