//! Experiments, driven: every server on the database looks a few times a
//! second for running experiments it drives (or whose driver's lease
//! lapsed: that server died), and moves each one on by a round:
//!
//! 1. it decides again that the experiment's maker may run the graph (a
//!    maker who lost the right stops the experiment);
//! 2. it records the runs its items chose but that were never recorded (a
//!    crash came between), scores the runs that ended, and counts those
//!    still going;
//! 3. it stops the experiment past its token or cost ceiling, cancelling
//!    what still runs;
//! 4. it starts a window of pending items: no more than the maker's share
//!    leaves free (their per-starter limit, and their account's limit less
//!    what the account runs already, one place kept for the person's own
//!    runs), so an experiment never meets a 429 and the run queue's fair
//!    turns between owners hold as for any other runs;
//! 5. it ends the experiment when nothing is pending or going.
//!
//! Each item's run id is chosen and stored before the run is recorded
//! with it, and the item's key is (experiment, example, repetition): a
//! restart at any point finds each item's run, or records it, and no
//! example runs twice.

mod replies;
mod score;

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::RunId;
use heddle_engine::recording::Recording;
use heddle_engine::run::RunStatus;
use heddle_store::access::{Allowed, Principal, Trigger, require_run, require_trigger};
use heddle_store::accounts;
use heddle_store::db::Db;
use heddle_store::experiments::{self as records, Driving, Item};
use heddle_store::runs as run_records;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::experiments::ExperimentStatus;
use heddle_wire::runs::RunOrigin;

use crate::runs::{Prepared, Runs};

/// How often a server looks for experiments to move on (sooner when one
/// of its runs ends).
const TICK: Duration = Duration::from_millis(250);
/// The most runs one experiment has queued or running at once, whatever
/// its maker's limits allow.
pub const WINDOW: usize = 8;

/// Drives experiments until the task is aborted: at every tick it takes
/// (or renews) the experiments it drives and moves each on; when one of
/// its runs ends, it moves on those it holds at once, without taking
/// anything (a run's end is frequent; a lease's renewal need not be).
pub fn keep_driving(runs: Runs) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // On SQLite this server is the file's only one: at start, every
        // running experiment is its own at once.
        let mut all = matches!(runs.db(), Db::Sqlite(_));
        let mut held: Vec<String> = Vec::new();
        let mut notices = runs.notices();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let taking = tokio::select! {
                _ = tick.tick() => true,
                notice = notices.recv() => {
                    if held.is_empty()
                        || matches!(notice, Ok(ref notice) if notice.status.is_active())
                    {
                        continue;
                    }
                    false
                }
            };
            if taking {
                match take(&runs, all).await {
                    Ok(ids) => held = ids,
                    Err(error) => tracing::warn!(%error, "cannot take experiments to drive"),
                }
                all = false;
            }
            held = drive(&runs, std::mem::take(&mut held)).await;
        }
    })
}

/// The running experiments this server drives now: those it drove, and
/// those free to take (with `all`, every running one).
pub async fn take(runs: &Runs, all: bool) -> Result<Vec<String>, AppError> {
    let lease = runs.lease();
    let until = heddle_store::db::from_now(lease.duration);
    records::claim(runs.db(), &lease.owner, &until, all).await
}

/// Moves each of `ids` on by one round; those still running.
pub async fn drive(runs: &Runs, ids: Vec<String>) -> Vec<String> {
    let mut running = Vec::with_capacity(ids.len());
    for id in ids {
        match round(runs, &id).await {
            Ok(true) => running.push(id),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(experiment = %id, %error, "an experiment's round failed");
                running.push(id);
            }
        }
    }
    running
}

/// One round of experiment `id`; whether it is still running after it.
async fn round(runs: &Runs, id: &str) -> Result<bool, AppError> {
    let db = runs.db();
    let Some(experiment) = records::driving(db, id).await? else {
        return Ok(false);
    };
    if experiment.status != ExperimentStatus::Running {
        return Ok(false);
    }
    let Some(allowed) = maker_may_run(db, &experiment).await? else {
        stop(
            runs,
            &experiment,
            None,
            "its maker may no longer run this graph",
        )
        .await?;
        return Ok(false);
    };
    let scorers = match records::check_scorers(&experiment.scorers) {
        Ok(scorers) => scorers,
        Err(error) => {
            stop(runs, &experiment, Some(&allowed), &error.to_string()).await?;
            return Ok(false);
        }
    };

    // The version, compiled once for the runs this round starts.
    let mut prepared = None;
    // What the started items' runs came to.
    let mut going = 0;
    // The runs this round records.
    let mut started = Vec::new();
    for item in records::started(db, id).await? {
        match run_records::get(db, &item.run_id).await? {
            None => {
                // Chosen, never recorded (a crash or a full queue came
                // between): record it now, with the id chosen.
                match start(runs, &allowed, &experiment, &mut prepared, &item).await {
                    Ok(()) => {
                        going += 1;
                        started.push(item.run_id.clone());
                    }
                    Err(AppError::TooManyRuns { .. }) => {}
                    Err(error) => {
                        let outcome = score::refused(&scorers, &error);
                        records::record(db, id, &item, &outcome).await?;
                    }
                }
            }
            Some(run) if run.status.is_active() => going += 1,
            Some(run) => {
                // With its final state (kept in its last checkpoint).
                let run = runs.record(&run.id).await?;
                let events = match run.status {
                    RunStatus::Finished => runs.stored_events(&item.run_id).await?,
                    _ => Vec::new(),
                };
                // A recorded run's judging goes through its recording too,
                // so a replay asks no model even to judge.
                let recording = replies::finish(&item.run_id);
                let recorded = recording
                    .as_ref()
                    .map(|recording| recording.wrap(runs.registry().clone()));
                let registry = recorded.as_ref().unwrap_or(runs.registry());
                let maker: Arc<str> = allowed.user().id.as_str().into();
                let outcome = score::ended(registry, maker, &scorers, &item, &run, &events).await;
                if let Some(recording) = recording {
                    keep_recorded(db, id, &item, &recording).await?;
                }
                records::record(db, id, &item, &outcome).await?;
            }
        }
    }

    if let Some(reason) = past_a_ceiling(db, &experiment).await? {
        stop(runs, &experiment, Some(&allowed), &reason).await?;
        return Ok(false);
    }

    let room = room(runs, &allowed, going).await?;
    for item in records::choose(db, id, room).await? {
        match start(runs, &allowed, &experiment, &mut prepared, &item).await {
            Ok(()) => started.push(item.run_id),
            // Another start of the maker's took the place meanwhile: the
            // item keeps its run id, and the next round records it.
            Err(AppError::TooManyRuns { .. }) => break,
            Err(error) => {
                let outcome = score::refused(&scorers, &error);
                records::record(db, id, &item, &outcome).await?;
            }
        }
    }

    // Cancelled (or stopped) while this round started runs: the cancel
    // may have looked for them before they were recorded.
    if !started.is_empty()
        && records::driving(db, id)
            .await?
            .is_none_or(|now| now.status != ExperimentStatus::Running)
    {
        cancel_runs(runs, Principal::User(allowed.user()), &started).await;
        return Ok(false);
    }
    if !records::unfinished(db, id).await? {
        records::end(db, id, ExperimentStatus::Finished, None).await?;
        return Ok(false);
    }
    Ok(true)
}

/// The experiment's maker's right to run its graph, labelled with the
/// experiment; `None` when they have it no more (or are gone).
async fn maker_may_run(db: &Db, experiment: &Driving) -> Result<Option<Allowed>, AppError> {
    let Some(maker) = &experiment.maker else {
        return Ok(None);
    };
    let Some(user) = accounts::user_by_id(db, maker).await? else {
        return Ok(None);
    };
    let trigger = Trigger {
        origin: RunOrigin::Experiment,
        id: experiment.id.clone(),
        name: experiment.name.clone(),
    };
    match require_trigger(db, &user, experiment.graph_id.as_str(), trigger).await {
        Ok(allowed) => Ok(Some(allowed)),
        Err(AppError::NotFound { .. } | AppError::Forbidden(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// How many more runs the experiment may start now: its window, within
/// the maker's per-starter limit, and within what their account's limit
/// leaves (one place kept for the person's own runs when the limit has
/// more than one).
async fn room(runs: &Runs, allowed: &Allowed, going: usize) -> Result<usize, AppError> {
    let limits = runs.limits();
    let owner_active = run_records::active_of_owner(runs.db(), allowed.user().id.as_str()).await?;
    let owner_active = usize::try_from(owner_active).unwrap_or(usize::MAX);
    let kept = usize::from(limits.per_owner > 1);
    let owner_room = limits
        .per_owner
        .saturating_sub(kept)
        .saturating_sub(owner_active);
    Ok(WINDOW
        .min(limits.per_starter)
        .saturating_sub(going)
        .min(owner_room))
}

/// Records and launches an item's run, with the id the item chose; one
/// already recorded is left as it is. The version is compiled at the
/// round's first start and kept in `prepared` for the rest.
async fn start(
    runs: &Runs,
    allowed: &Allowed,
    experiment: &Driving,
    prepared: &mut Option<Prepared>,
    item: &Item,
) -> Result<(), AppError> {
    if run_records::get(runs.db(), &item.run_id).await?.is_some() {
        return Ok(());
    }
    if experiment.record_replies {
        // A run of its own compile, answered through its own recording.
        let recording = recording_for(runs.db(), experiment, item).await?;
        let compiled = runs
            .prepare_for_experiment(allowed, experiment.graph_version, Some(&recording))
            .await?;
        replies::begin(&item.run_id, recording);
        let started = runs
            .start_for_experiment(
                allowed,
                experiment.graph_version,
                &compiled,
                item.input.clone(),
                &item.run_id,
            )
            .await;
        if started.is_err() {
            replies::finish(&item.run_id);
        }
        return started.map(|_| ());
    }
    let compiled = match prepared {
        Some(compiled) => compiled,
        None => prepared.insert(
            runs.prepare_for_experiment(allowed, experiment.graph_version, None)
                .await?,
        ),
    };
    runs.start_for_experiment(
        allowed,
        experiment.graph_version,
        compiled,
        item.input.clone(),
        &item.run_id,
    )
    .await
    .map(|_| ())
}

/// The recording a run of `item` starts with: the replies its source
/// experiment recorded for the same example and repetition (the first
/// repetition's when the source ran fewer), or none.
async fn recording_for(db: &Db, experiment: &Driving, item: &Item) -> Result<Recording, AppError> {
    let Some(source) = &experiment.replay_from else {
        return Ok(Recording::new());
    };
    let mut lines = records::replies_of(db, source, &item.example_id, item.repetition).await?;
    if lines.is_none() && item.repetition > 1 {
        lines = records::replies_of(db, source, &item.example_id, 1).await?;
    }
    let Some(lines) = lines else {
        return Ok(Recording::new());
    };
    Ok(Recording::read(lines.as_bytes()).unwrap_or_else(|error| {
        tracing::warn!(experiment = %experiment.id, %source, %error,
            "recorded replies that do not read back; the run asks the models");
        Recording::new()
    }))
}

/// Keeps what `item`'s run (and its judging) recorded.
async fn keep_recorded(
    db: &Db,
    experiment: &str,
    item: &Item,
    recording: &Recording,
) -> Result<(), AppError> {
    let mut lines = Vec::new();
    if let Err(error) = recording.write(&mut lines) {
        tracing::warn!(%experiment, run = %item.run_id, %error, "cannot write a run's replies");
        return Ok(());
    }
    if lines.len() > replies::MAX_KEPT_BYTES {
        tracing::warn!(%experiment, run = %item.run_id, bytes = lines.len(),
            "a run's replies are too big to keep; its example will be asked again");
        return Ok(());
    }
    let counts = recording.counts();
    let lines = String::from_utf8_lossy(&lines);
    records::keep_replies(db, experiment, item, &lines, counts.replayed, counts.live).await
}

/// Why the experiment must stop now, if it is past a ceiling.
async fn past_a_ceiling(db: &Db, experiment: &Driving) -> Result<Option<String>, AppError> {
    if experiment.max_tokens.is_none() && experiment.max_cost_usd.is_none() {
        return Ok(None);
    }
    let (tokens, cost) = records::spent(db, &experiment.id).await?;
    if let Some(max) = experiment.max_tokens
        && tokens >= max
    {
        return Ok(Some(format!(
            "its runs used {tokens} tokens, past its ceiling of {max}"
        )));
    }
    if let Some(max) = experiment.max_cost_usd
        && cost >= max
    {
        return Ok(Some(format!(
            "its runs cost ${cost:.4}, past its ceiling of ${max:.4}"
        )));
    }
    Ok(None)
}

/// Ends the experiment as stopped, for `reason`, and cancels the runs it
/// still has going (as its maker, when they may still act on them).
async fn stop(
    runs: &Runs,
    experiment: &Driving,
    allowed: Option<&Allowed>,
    reason: &str,
) -> Result<(), AppError> {
    let db = runs.db();
    let going = records::end(db, &experiment.id, ExperimentStatus::Stopped, Some(reason))
        .await?
        .unwrap_or_default();
    if let Some(allowed) = allowed {
        cancel_runs(runs, Principal::User(allowed.user()), &going).await;
    }
    Ok(())
}

/// Cancels the runs of a cancelled or stopped experiment that are still
/// going, as `who` (each through its own access decision); a run that
/// ended meanwhile, or that `who` may not stop, is left.
pub async fn cancel_runs(runs: &Runs, who: Principal<'_>, run_ids: &[RunId]) {
    for run_id in run_ids {
        let Ok(run) = require_run(runs.db(), who, run_id, Role::Editor).await else {
            continue;
        };
        if let Err(error) = runs.cancel(&run).await {
            tracing::debug!(run = %run_id, %error, "an experiment's run was not cancelled");
        }
    }
}
