//! What a prune of a thread keeps, and how the SQL stores carry it out
//! (see docs/runs.md, "Retention").
//!
//! A thread keeps its newest checkpoints (the policy's number), every
//! pause, every fork point (a checkpoint two others go on from, or a run
//! began from), each run's last checkpoint (its outcome, which run lists
//! show) and every pinned checkpoint. The rest go.
//!
//! Kept rows stored as changes (`run::stored_state`) may build on rows
//! that go: each such row is stored again as its changes from its nearest
//! kept ancestor in the chain, and the chain's snapshot stays, so every
//! kept checkpoint reads back exactly as before. Nothing is rewritten
//! whole: a pruned conversation stays linear in its length.
//!
//! The plan is made from the rows alone; the stores run it in one
//! transaction per thread that no save interleaves with (a save whose
//! base went meanwhile is written whole: see the stores).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::checkpoint::Checkpoint;
use super::event::{Event, EventPayload};
use super::sql::{Batch, BatchRow, integer};
use super::store::{CheckpointPin, CheckpointStore, StoreError};
use super::stored_state::{StoredRow, parse};
use crate::format::Retention;
use crate::ids::RunId;
use crate::state::changes::{self, Changes};

/// A checkpoint row as a prune first reads it: where it is and what it
/// builds on, not what it holds.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RowMeta {
    pub(crate) position: i64,
    pub(crate) checkpoint_id: String,
    pub(crate) run_id: String,
    pub(crate) parent_id: Option<String>,
    pub(crate) status: String,
    pub(crate) base_id: Option<String>,
    /// Whether it holds its state whole.
    pub(crate) whole: bool,
}

/// The columns [`RowMeta`] reads.
macro_rules! meta_columns {
    () => {
        "position, checkpoint_id, run_id, parent_id, status, base_id,
         (changes IS NULL) AS whole"
    };
}
pub(crate) use meta_columns;

/// What a prune does to one thread.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plan {
    /// The rows that go, by position.
    pub(crate) delete: Vec<i64>,
    /// Kept rows whose base goes: the row's position and id, and the kept
    /// row its changes are to be taken from instead.
    pub(crate) rebase: Vec<(i64, String, String)>,
}

/// The plan for a thread whose rows are `rows` (in position order), keeping
/// the newest `keep_last` and those `pinned`.
pub(crate) fn plan(
    rows: &[RowMeta],
    keep_last: usize,
    pinned: &HashSet<String>,
) -> Result<Plan, StoreError> {
    let mut keep: HashSet<&str> = HashSet::new();
    let newest = rows.len().saturating_sub(keep_last.max(1));
    let mut children: HashMap<&str, usize> = HashMap::new();
    let mut last_of_run: HashMap<&str, &str> = HashMap::new();
    for row in rows {
        if let Some(parent) = row.parent_id.as_deref() {
            *children.entry(parent).or_default() += 1;
        }
        last_of_run.insert(&row.run_id, &row.checkpoint_id);
    }
    let run_of: HashMap<&str, &str> = rows
        .iter()
        .map(|row| (row.checkpoint_id.as_str(), row.run_id.as_str()))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        // Where a run began (a fork point, or the turn before): its first
        // event names it, and its viewers rebuild from it.
        if let Some(parent) = row.parent_id.as_deref()
            && run_of.get(parent).is_some_and(|run| *run != row.run_id)
        {
            keep.insert(parent);
        }
        let id = row.checkpoint_id.as_str();
        if i >= newest
            || row.status == "interrupted"
            || children.get(id).is_some_and(|n| *n > 1)
            || pinned.contains(id)
        {
            keep.insert(id);
        }
    }
    keep.extend(last_of_run.into_values());

    let by_id: HashMap<&str, &RowMeta> = rows
        .iter()
        .map(|row| (row.checkpoint_id.as_str(), row))
        .collect();
    // Each kept row of changes builds on its nearest kept ancestor, at
    // worst its chain's snapshot, which is then kept too.
    let mut rebase = Vec::new();
    let mut snapshots: HashSet<&str> = HashSet::new();
    for row in rows {
        if row.whole || !keep.contains(row.checkpoint_id.as_str()) {
            continue;
        }
        let mut at = row;
        let mut steps = 0;
        let base = loop {
            let Some(base) = at.base_id.as_deref().and_then(|id| by_id.get(id)) else {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint `{}` is stored as changes from a checkpoint that is not stored",
                    at.checkpoint_id
                )));
            };
            steps += 1;
            if steps > rows.len() {
                return Err(StoreError::Corrupt(format!(
                    "the chain of checkpoint `{}` loops",
                    row.checkpoint_id
                )));
            }
            if keep.contains(base.checkpoint_id.as_str()) || base.whole {
                break *base;
            }
            at = base;
        };
        snapshots.insert(&base.checkpoint_id);
        if row.base_id.as_deref() != Some(base.checkpoint_id.as_str()) {
            rebase.push((
                row.position,
                row.checkpoint_id.clone(),
                base.checkpoint_id.clone(),
            ));
        }
    }
    keep.extend(snapshots);
    Ok(Plan {
        delete: rows
            .iter()
            .filter(|row| !keep.contains(row.checkpoint_id.as_str()))
            .map(|row| row.position)
            .collect(),
        rebase,
    })
}

/// The new changes of each row `plan` rebases (its position and the
/// changes as JSON), from the thread's rows with what they hold, in
/// position order.
pub(crate) fn rebased(rows: &[StoredRow], plan: &Plan) -> Result<Vec<(i64, String)>, StoreError> {
    let mut wanted: HashSet<&str> = HashSet::new();
    for (_, id, base) in &plan.rebase {
        wanted.insert(id);
        wanted.insert(base);
    }
    let states = states(rows, &wanted)?;
    plan.rebase
        .iter()
        .map(|(position, id, base)| {
            let (Some(state), Some(from)) = (states.get(id.as_str()), states.get(base.as_str()))
            else {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint `{id}` or `{base}` is not stored"
                )));
            };
            let found: Changes = changes::diff(from, state);
            let json = serde_json::to_string(&found).map_err(|e| {
                StoreError::Corrupt(format!("cannot encode the changes of `{id}`: {e}"))
            })?;
            Ok((*position, json))
        })
        .collect()
}

/// The states of the `wanted` rows, rebuilt along their chains. Only the
/// states a later row still builds on are held at a time.
fn states(
    rows: &[StoredRow],
    wanted: &HashSet<&str>,
) -> Result<HashMap<String, Map<String, Value>>, StoreError> {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for row in rows.iter().filter(|row| !row.is_snapshot()) {
        if let Some(base) = row.base_id.as_deref() {
            *uses.entry(base).or_default() += 1;
        }
    }
    let mut held: HashMap<&str, Map<String, Value>> = HashMap::new();
    let mut found = HashMap::new();
    for row in rows {
        let id = row.checkpoint_id.as_str();
        let needed = wanted.contains(id) || uses.get(id).is_some_and(|n| *n > 0);
        let state = if row.is_snapshot() {
            if !needed {
                continue;
            }
            let checkpoint: super::checkpoint::Checkpoint = parse(&row.body)?;
            match checkpoint.state {
                Value::Object(state) => state,
                _ => Map::new(),
            }
        } else {
            let Some(base) = row.base_id.as_deref() else {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint `{id}` holds changes but names no base"
                )));
            };
            let left = uses.get_mut(base).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            // The last row to build on a base takes its state over.
            let last_use = left == Some(0);
            if !needed {
                if last_use {
                    held.remove(base);
                }
                continue;
            }
            let base_state = match last_use {
                true => held.remove(base),
                false => held.get(base).cloned(),
            };
            let Some(mut state) = base_state else {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint `{id}` is stored as changes from `{base}`, which is not stored \
                     before it"
                )));
            };
            let changes: Changes = parse(row.changes.as_deref().unwrap_or("{}"))?;
            changes::apply(&mut state, &changes)
                .map_err(|e| StoreError::Corrupt(format!("checkpoint `{id}`: {e}")))?;
            state
        };
        if wanted.contains(id) {
            found.insert(id.to_owned(), state.clone());
        }
        if uses.get(id).is_some_and(|n| *n > 0) {
            held.insert(id, state);
        }
    }
    Ok(found)
}

/// The first event of a run's stored log (`rows`, in order).
pub(crate) fn first_event(run: &RunId, rows: &[BatchRow]) -> Result<Option<Event>, StoreError> {
    match rows.first() {
        Some((_, _, body)) => Ok(super::stored_events::decode(run, body)?.into_iter().next()),
        None => Ok(None),
    }
}

/// What all of a finished run's steps changed: from the state its first
/// event says it started from to its final state (its last checkpoint's).
/// Empty when either is not stored.
pub(crate) async fn net_changes(
    store: &dyn CheckpointStore,
    run: &RunId,
    first: &Event,
) -> Result<Changes, StoreError> {
    let (Some(record), Some(last)) = (store.run(run).await?, store.last_of_run(run).await?) else {
        return Ok(Changes::new());
    };
    let base = match first.payload.base_checkpoint() {
        Some(id) => match store.checkpoint(&record.thread_id, id.as_str()).await? {
            Some(Checkpoint {
                state: Value::Object(state),
                ..
            }) => Some(state),
            _ => None,
        },
        None => None,
    };
    let (Some(Ok(start)), Value::Object(end)) =
        (first.payload.start_state(base.as_ref()), &last.state)
    else {
        return Ok(Changes::new());
    };
    Ok(changes::diff(&start, end))
}

/// The one batch a run's stored log is compacted to, its first and last
/// events, and how many events go; `None` when it is one batch already.
/// The last, when it says the run finished, is given what all the steps
/// changed (`net`, from [`net_changes`]): the log alone still ends in the
/// run's final state, in about the room of that run's own changes.
pub(crate) fn outcome(
    run: &RunId,
    rows: &[BatchRow],
    net: Changes,
) -> Result<Option<(Batch, u64)>, StoreError> {
    if rows.len() < 2 {
        return Ok(None);
    }
    let mut events = Vec::new();
    for (_, _, body) in rows {
        events.extend(super::stored_events::decode(run, body)?);
    }
    let count = events.len() as u64;
    if let Some(Event {
        payload:
            EventPayload::RunFinished {
                changes,
                output: None,
                ..
            },
        ..
    }) = events.last_mut()
    {
        *changes = net;
    }
    let (Some(first), Some(last)) = (events.first(), events.last()) else {
        return Ok(None);
    };
    let kept: Vec<&Event> = match first.seq == last.seq {
        true => vec![first],
        false => vec![first, last],
    };
    let body = super::stored_events::encode(kept.iter().copied()).map_err(|e| {
        StoreError::Corrupt(format!("cannot encode the events of run `{run}`: {e}"))
    })?;
    Ok(Some((
        Batch {
            run: run.clone(),
            first: integer(first.seq, "event")?,
            last: integer(last.seq, "event")?,
            body,
        },
        count - kept.len() as u64,
    )))
}

/// A pin's outcome: whether it is stored (it is not when its checkpoint
/// is not).
pub(crate) fn pinned(pin: &CheckpointPin, stored: bool) -> Result<(), StoreError> {
    match stored {
        true => Ok(()),
        false => Err(StoreError::Missing(format!(
            "checkpoint `{}` of thread `{}` is not stored, so it cannot be pinned",
            pin.checkpoint, pin.thread
        ))),
    }
}

/// A thread's policy: its newest run's graph's, where that says, else the
/// server's.
pub(crate) fn policy_of(document: Option<&str>, server: Retention) -> Retention {
    #[derive(serde::Deserialize)]
    struct Graph {
        #[serde(default)]
        retention: Retention,
    }
    document
        .and_then(|text| serde_json::from_str::<Graph>(text).ok())
        .map_or(server, |graph| graph.retention.or(server))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of one run, each the child and base of the one before, a
    /// snapshot every `chain` rows.
    fn chain(run: &str, from: usize, count: usize, chain: usize) -> Vec<RowMeta> {
        (from..from + count)
            .map(|i| RowMeta {
                position: i as i64,
                checkpoint_id: format!("c{i}"),
                run_id: run.into(),
                parent_id: (i > 0).then(|| format!("c{}", i - 1)),
                status: "running".into(),
                base_id: (i % chain != 0).then(|| format!("c{}", i - 1)),
                whole: i % chain == 0,
            })
            .collect()
    }

    fn kept(rows: &[RowMeta], plan: &Plan) -> Vec<String> {
        rows.iter()
            .filter(|row| !plan.delete.contains(&row.position))
            .map(|row| row.checkpoint_id.clone())
            .collect()
    }

    #[test]
    fn the_newest_and_each_runs_last_stay_built_on_their_kept_ancestor() {
        let mut rows = chain("a", 0, 6, 100);
        rows.extend(chain("b", 6, 6, 100));
        let plan = plan(&rows, 2, &HashSet::new()).unwrap();
        // c5 ends run a; c10 and c11 are the newest; c0 the snapshot.
        assert_eq!(kept(&rows, &plan), ["c0", "c5", "c10", "c11"]);
        assert_eq!(
            plan.rebase,
            vec![
                (5, "c5".into(), "c0".into()),
                (10, "c10".into(), "c5".into())
            ]
        );
    }

    #[test]
    fn pauses_fork_points_and_pins_stay() {
        let mut rows = chain("a", 0, 10, 4);
        rows[3].status = "interrupted".into();
        // A fork from c1: a second child.
        rows.push(RowMeta {
            position: 10,
            checkpoint_id: "f0".into(),
            run_id: "fork".into(),
            parent_id: Some("c1".into()),
            status: "finished".into(),
            base_id: Some("c9".into()),
            whole: false,
        });
        let pinned = HashSet::from(["c6".to_string()]);
        let plan = plan(&rows, 1, &pinned).unwrap();
        // Snapshots c0, c4, c8 stay where a kept row builds on them.
        assert_eq!(
            kept(&rows, &plan),
            ["c0", "c1", "c3", "c4", "c6", "c8", "c9", "f0"]
        );
        assert_eq!(
            plan.rebase,
            vec![(3, "c3".into(), "c1".into()), (6, "c6".into(), "c4".into())]
        );
    }

    #[test]
    fn a_thread_within_its_policy_is_left_alone() {
        let rows = chain("a", 0, 5, 3);
        assert_eq!(plan(&rows, 5, &HashSet::new()).unwrap(), Plan::default());
        // At least the newest stays, whatever the number says.
        let plan = plan(&rows, 0, &HashSet::new()).unwrap();
        assert_eq!(kept(&rows, &plan), ["c3", "c4"]);
    }

    #[test]
    fn a_chain_that_names_a_missing_base_is_refused() {
        let mut rows = chain("a", 0, 4, 100);
        rows[2].base_id = Some("gone".into());
        assert!(matches!(
            plan(&rows, 1, &HashSet::new()),
            Err(StoreError::Corrupt(_))
        ));
    }

    #[test]
    fn a_graph_says_what_it_keeps_and_the_server_the_rest() {
        let server = Retention {
            keep_checkpoints: std::num::NonZeroU32::new(50),
            keep_events_days: Some(30),
        };
        let graph = r#"{"format_version": 2, "name": "g", "retention": {"keep_checkpoints": 3}}"#;
        let both = policy_of(Some(graph), server);
        assert_eq!(both.keep_checkpoints, std::num::NonZeroU32::new(3));
        assert_eq!(both.keep_events_days, Some(30));
        assert_eq!(policy_of(Some("not json"), server), server);
        assert_eq!(policy_of(None, server), server);
    }
}
