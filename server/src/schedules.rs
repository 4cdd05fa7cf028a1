//! Firing schedules: every server on the database looks once a second for
//! schedules whose time has come. The server that moves a schedule's
//! `next_at` past that time (a compare-and-set) fires it, so each time is
//! fired exactly once however many servers run; `schedule_fires` records
//! it (its key would refuse a second record). Every time is fired, even
//! one a look finds a little late; a time found more than a minute late
//! was missed (no server was running): the missed times are skipped, or
//! run once for all of them, as the schedule says.

use heddle_engine::ids::RunId;
use std::time::Duration;

use chrono::Utc;
use heddle_store::access::{Trigger, require_trigger};
use heddle_store::schedules::{self as schedules, Due, When};
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunOrigin, StartRequest};
use heddle_wire::schedules::Missed;

use crate::runs::Runs;

/// How often servers look for due schedules.
const TICK: Duration = Duration::from_secs(1);
/// How late a time may be found and still count as on time.
const GRACE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// Fires due schedules until the task is aborted.
pub fn keep_firing(runs: Runs) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(error) = fire_due(&runs).await {
                tracing::warn!(%error, "cannot fire due schedules");
            }
        }
    })
}

/// How many times a look fires at most: each time due is fired (a time
/// a tick found late still leaves the next one due), within reason.
const ROUNDS: usize = 10;

/// Fires every schedule time due now (those another server fires are
/// left to it); how many this server fired.
pub async fn fire_due(runs: &Runs) -> Result<usize, AppError> {
    let now = Utc::now();
    let mut fired = 0;
    for _ in 0..ROUNDS {
        let due = schedules::due(runs.db(), now).await?;
        if due.is_empty() {
            break;
        }
        for due in due {
            if fire(runs, &due, now).await? {
                fired += 1;
            }
        }
    }
    Ok(fired)
}

/// Fires one due schedule, if this server wins its time.
async fn fire(runs: &Runs, due: &Due, now: chrono::DateTime<Utc>) -> Result<bool, AppError> {
    let db = runs.db();
    let when = match When::parse(&due.cron, &due.timezone) {
        Ok(when) => when,
        Err(error) => {
            tracing::error!(schedule = %due.id, %error, "a stored schedule does not parse");
            return Ok(false);
        }
    };
    let fire_at = schedules::read(&due.next_at).unwrap_or(now);
    let late = now - fire_at > GRACE;
    // On time, the next time follows this one (it may be due already: the
    // next round fires it). Late, the times missed are one: the next time
    // follows now.
    let next = when
        .next_after(if late { now } else { fire_at })
        .map_or_else(|| "9999-12-31T23:59:59.999Z".to_string(), schedules::stored);
    if !schedules::advance(db, &due.id, &due.next_at, &next).await? {
        return Ok(false);
    }
    if late && Missed::parse(&due.missed) != Some(Missed::RunOnce) {
        schedules::record_fire(
            db,
            &due.id,
            &due.next_at,
            None,
            Some("skipped: no server was running at that time"),
        )
        .await?;
        return Ok(true);
    }
    let started = start(runs, due).await;
    let (run, error) = match &started {
        Ok(run) => (Some(run), None),
        Err(error) => (None, Some(error.to_string())),
    };
    if let Some(error) = &error {
        tracing::warn!(schedule = %due.id, %error, "a schedule's run did not start");
    }
    schedules::record_fire(db, &due.id, &due.next_at, run, error.as_deref()).await?;
    Ok(true)
}

/// Starts the schedule's run as its maker; the run's id.
async fn start(runs: &Runs, due: &Due) -> Result<RunId, AppError> {
    let db = runs.db();
    let maker = heddle_store::accounts::user_by_id(db, &due.created_by)
        .await?
        .ok_or_else(|| AppError::Forbidden("the schedule's maker no longer exists".into()))?;
    let trigger = Trigger {
        origin: RunOrigin::Schedule,
        id: due.id.clone(),
        name: due.name.clone(),
    };
    let allowed = require_trigger(db, &maker, &due.graph_id, trigger)
        .await
        .map_err(|error| match error {
            AppError::NotFound { .. } | AppError::Forbidden(_) => AppError::Forbidden(format!(
                "{} is no longer an editor of the graph",
                maker.username
            )),
            other => other,
        })?;
    // An input that does not read is this fire's error, never an empty
    // input run in its place.
    let input = heddle_engine::state::from_stored_json(&due.input).map_err(|error| {
        AppError::InvalidInput(format!("the schedule's input does not read: {error}"))
    })?;
    let request = StartRequest {
        input,
        ..StartRequest::default()
    };
    Ok(runs.start_published(&allowed, request).await?.id)
}
