//! The `schedules` and `schedule_fires` tables, and the cron arithmetic
//! (croner, in the schedule's time zone from chrono-tz). A time is fired
//! by whichever server first moves the schedule's `next_at` past it with
//! a compare-and-set, and recorded once in `schedule_fires`.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use serde_json::Value;

use crate::access::Allowed;
use crate::db::Db;
use crate::on_db;
use heddle_engine::ids::RunId;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::graphs::GraphId;
use heddle_wire::schedules::{Missed, Schedule, ScheduleSettings};

/// A parsed schedule: when, and in which zone.
pub struct When {
    cron: Cron,
    zone: Tz,
}

impl When {
    /// Reads a cron expression and a time zone, or says what is wrong.
    pub fn parse(cron: &str, timezone: &str) -> Result<When, AppError> {
        let cron = Cron::from_str(cron.trim()).map_err(|error| {
            AppError::InvalidInput(format!(
                "`cron`: `{cron}` is not a cron expression ({error}); five fields are `minute \
                 hour day month weekday`, e.g. `0 9 * * MON-FRI`"
            ))
        })?;
        let zone = Tz::from_str(timezone.trim()).map_err(|_| {
            AppError::InvalidInput(format!(
                "`timezone`: `{timezone}` is not a time zone (IANA names such as `Europe/Paris`, \
                 or `UTC`)"
            ))
        })?;
        Ok(When { cron, zone })
    }

    /// The first time strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&after.with_timezone(&self.zone), false)
            .ok()
            .map(|at| at.with_timezone(&Utc))
    }

    /// The next `count` times after `after`, as people read them in the
    /// schedule's zone.
    fn upcoming(&self, after: DateTime<Utc>, count: usize) -> Vec<String> {
        let mut times = Vec::with_capacity(count);
        let mut at = after;
        while times.len() < count {
            let Some(next) = self.next_after(at) else {
                break;
            };
            times.push(
                next.with_timezone(&self.zone)
                    .format("%a %Y-%m-%d %H:%M:%S %Z")
                    .to_string(),
            );
            at = next;
        }
        times
    }
}

/// A time as every timestamp column holds it.
pub fn stored(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A stored timestamp read back.
pub fn read(stored: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(stored)
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

#[derive(sqlx::FromRow)]
struct ScheduleRow {
    id: String,
    graph_id: String,
    name: String,
    cron: String,
    timezone: String,
    input: String,
    missed: String,
    enabled: bool,
    next_at: String,
    maker: Option<String>,
    created_at: String,
    last_fired_at: Option<String>,
    last_run_id: Option<String>,
    last_error: Option<String>,
}

/// `SELECT <the schedule columns> FROM schedules s <rest>`, as one literal.
macro_rules! select_schedules {
    ($rest:literal) => {
        concat!(
            "SELECT s.id, s.graph_id, s.name, s.cron, s.timezone, s.input, s.missed, s.enabled, ",
            "s.next_at, (SELECT username FROM users u WHERE u.id = s.created_by) AS maker, ",
            "s.created_at, ",
            "(SELECT MAX(f.fire_at) FROM schedule_fires f WHERE f.schedule_id = s.id) AS last_fired_at, ",
            "(SELECT f.run_id FROM schedule_fires f WHERE f.schedule_id = s.id ORDER BY f.fire_at DESC LIMIT 1) AS last_run_id, ",
            "(SELECT f.error FROM schedule_fires f WHERE f.schedule_id = s.id ORDER BY f.fire_at DESC LIMIT 1) AS last_error ",
            "FROM schedules s ",
            $rest
        )
    };
}

impl ScheduleRow {
    fn into_schedule(self) -> Result<Schedule, AppError> {
        let broken = |what: &str| {
            tracing::error!(schedule = %self.id, "a stored schedule's {what} does not read back");
            AppError::Internal
        };
        let missed = Missed::parse(&self.missed).ok_or_else(|| broken("missed"))?;
        let input: Value =
            heddle_engine::state::from_stored_json(&self.input).map_err(|_| broken("input"))?;
        let upcoming = match (self.enabled, When::parse(&self.cron, &self.timezone)) {
            (true, Ok(when)) => when.upcoming(Utc::now(), 5),
            _ => Vec::new(),
        };
        Ok(Schedule {
            id: self.id,
            graph_id: GraphId::from_stored(self.graph_id),
            name: self.name,
            cron: self.cron,
            timezone: self.timezone,
            input,
            missed,
            enabled: self.enabled,
            next_at: self.next_at,
            upcoming,
            created_by: self.maker,
            created_at: self.created_at,
            last_fired_at: self.last_fired_at,
            last_run_id: self
                .last_run_id
                .filter(|run| !run.is_empty())
                .map(RunId::from),
            last_error: self.last_error,
        })
    }
}

/// The most schedules one graph may have.
pub const MAX_PER_GRAPH: i64 = 20;
/// The shortest time between two firings of a schedule by default, in
/// seconds.
pub const MIN_INTERVAL_SECONDS: i64 = 60;
static MIN_INTERVAL: std::sync::atomic::AtomicI64 =
    std::sync::atomic::AtomicI64::new(MIN_INTERVAL_SECONDS);

/// Sets the shortest time between two firings of any schedule (the
/// server's `--schedule-min-seconds`; at least 1).
pub fn set_min_interval_seconds(seconds: i64) {
    MIN_INTERVAL.store(seconds.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Checks settings against the graph (its newest version's channels take
/// the input, as a run would); the first time after now.
async fn check_for_graph(
    db: &Db,
    allowed: &Allowed,
    settings: &ScheduleSettings,
) -> Result<DateTime<Utc>, AppError> {
    let next = check(settings)?;
    if let Value::Object(fields) = &settings.input {
        let limits = heddle_engine::state::ValueLimits::default();
        for (channel, value) in fields {
            limits
                .check(value)
                .map_err(|error| AppError::InvalidInput(format!("`input.{channel}`: {error}")))?;
        }
        let detail = crate::graphs::get(db, allowed).await?;
        let document = heddle_engine::GraphDocument::from_json(&detail.document)
            .map_err(|_| AppError::InvalidInput("the graph's document does not read".into()))?;
        let problems = heddle_engine::state::check_input(&document.state.channels, fields);
        if !problems.is_empty() {
            let listed: Vec<String> = problems
                .iter()
                .map(|problem| format!("`input.{}`: {}", problem.channel, problem.message))
                .collect();
            return Err(AppError::InvalidInput(format!(
                "the input does not fit the graph's state (version {}): {}",
                detail.version,
                listed.join("; ")
            )));
        }
    }
    Ok(next)
}

/// Checks settings; the first time after now.
fn check(settings: &ScheduleSettings) -> Result<DateTime<Utc>, AppError> {
    let name = settings.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(AppError::InvalidInput(
            "`name`: a schedule's name is 1 to 64 characters".into(),
        ));
    }
    if !matches!(settings.input, Value::Object(_) | Value::Null) {
        return Err(AppError::InvalidInput(
            "`input` must be a JSON object of channel values".into(),
        ));
    }
    let size = settings.input.to_string().len();
    if size > heddle_wire::limits::MAX_INPUT_BYTES {
        return Err(AppError::TooLarge(format!(
            "`input` is {size} bytes; the limit is {}",
            heddle_wire::limits::MAX_INPUT_BYTES
        )));
    }
    let when = When::parse(&settings.cron, &settings.timezone)?;
    let next = when.next_after(Utc::now()).ok_or_else(|| {
        AppError::InvalidInput(format!(
            "`cron`: `{}` never fires from now on",
            settings.cron
        ))
    })?;
    // Every schedule is a stream of runs: at most one a minute (by
    // default), checked over its next firings (an uneven cron may bunch a
    // few together).
    let least = MIN_INTERVAL.load(std::sync::atomic::Ordering::Relaxed);
    let mut previous = next;
    for _ in 0..32 {
        let Some(after) = when.next_after(previous) else {
            break;
        };
        let apart = (after - previous).num_seconds();
        if apart < least {
            return Err(AppError::InvalidInput(format!(
                "`cron`: `{}` fires {apart} s apart; a schedule fires at most once every \
                 {least} s",
                settings.cron
            )));
        }
        previous = after;
    }
    Ok(next)
}

fn input_text(input: &Value) -> String {
    match input {
        Value::Null => "{}".into(),
        other => other.to_string(),
    }
}

/// The graph's schedules, oldest first.
pub async fn list(db: &Db, allowed: &Allowed) -> Result<Vec<Schedule>, AppError> {
    let rows: Vec<ScheduleRow> = on_db!(db, pool => sqlx::query_as(select_schedules!(
        "WHERE s.graph_id = $1 ORDER BY s.created_at, s.id"
    ))
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    rows.into_iter().map(ScheduleRow::into_schedule).collect()
}

/// Who made a schedule (their user id).
async fn maker(db: &Db, allowed: &Allowed, id: &str) -> Result<String, AppError> {
    let maker: Option<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT created_by FROM schedules WHERE graph_id = $1 AND id = $2",
    )
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    maker.ok_or_else(|| AppError::not_found(format!("schedule {id}")))
}

async fn one(db: &Db, allowed: &Allowed, id: &str) -> Result<Schedule, AppError> {
    let row: Option<ScheduleRow> = on_db!(db, pool => sqlx::query_as(select_schedules!(
        "WHERE s.graph_id = $1 AND s.id = $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    row.ok_or_else(|| AppError::not_found(format!("schedule {id}")))?
        .into_schedule()
}

/// Makes a schedule, made by the editor `allowed` names.
pub async fn create(
    db: &Db,
    allowed: &Allowed,
    settings: ScheduleSettings,
) -> Result<Schedule, AppError> {
    allowed.at_least(Role::Editor)?;
    let next = check_for_graph(db, allowed, &settings).await?;
    let count: i64 = on_db!(db, pool => sqlx::query_scalar(
        "SELECT COUNT(*) FROM schedules WHERE graph_id = $1",
    )
    .bind(allowed.graph().as_str())
    .fetch_one(pool)
    .await)?;
    if count >= MAX_PER_GRAPH {
        return Err(AppError::InvalidInput(format!(
            "a graph has at most {MAX_PER_GRAPH} schedules; delete one first"
        )));
    }
    let id = uuid::Uuid::new_v4().to_string();
    on_db!(db, pool => sqlx::query(
        "INSERT INTO schedules (id, graph_id, name, cron, timezone, input, missed, enabled, next_at,
                                created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&id)
    .bind(allowed.graph().as_str())
    .bind(settings.name.trim())
    .bind(settings.cron.trim())
    .bind(settings.timezone.trim())
    .bind(input_text(&settings.input))
    .bind(settings.missed.as_str())
    .bind(settings.enabled)
    .bind(stored(next))
    .bind(allowed.user().id.as_str())
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(schedule = %id, graph = %allowed.graph(), "schedule made");
    one(db, allowed, &id).await
}

/// Changes a schedule; its next time is counted again from now.
pub async fn update(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    settings: ScheduleSettings,
) -> Result<Schedule, AppError> {
    let maker = maker(db, allowed, id).await?;
    crate::access::require_maker(allowed, &maker, "schedule", false)?;
    let next = check_for_graph(db, allowed, &settings).await?;
    on_db!(db, pool => sqlx::query(
        "UPDATE schedules SET name = $1, cron = $2, timezone = $3, input = $4, missed = $5,
                enabled = $6, next_at = $7
         WHERE id = $8 AND graph_id = $9",
    )
    .bind(settings.name.trim())
    .bind(settings.cron.trim())
    .bind(settings.timezone.trim())
    .bind(input_text(&settings.input))
    .bind(settings.missed.as_str())
    .bind(settings.enabled)
    .bind(stored(next))
    .bind(id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
    .map(|_| ()))?;
    one(db, allowed, id).await
}

/// Deletes a schedule.
pub async fn delete(db: &Db, allowed: &Allowed, id: &str) -> Result<(), AppError> {
    let maker = maker(db, allowed, id).await?;
    crate::access::require_maker(allowed, &maker, "schedule", true)?;
    on_db!(db, pool => sqlx::query("DELETE FROM schedules WHERE id = $1 AND graph_id = $2")
        .bind(id)
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// A schedule whose time has come, as the firing server needs it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Due {
    pub id: String,
    pub graph_id: String,
    pub name: String,
    pub cron: String,
    pub timezone: String,
    pub input: String,
    pub missed: String,
    pub next_at: String,
    pub created_by: String,
}

/// Enabled schedules whose next time is at or before `now`.
pub async fn due(db: &Db, now: DateTime<Utc>) -> Result<Vec<Due>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_as(
        "SELECT id, graph_id, name, cron, timezone, input, missed, next_at, created_by
         FROM schedules WHERE enabled AND next_at <= $1 ORDER BY next_at LIMIT 100",
    )
    .bind(stored(now))
    .fetch_all(pool)
    .await)?)
}

/// Moves a schedule's next time from `from` to `to`; `false` when another
/// server moved it first (and so fires that time).
pub async fn advance(db: &Db, id: &str, from: &str, to: &str) -> Result<bool, AppError> {
    let moved = on_db!(db, pool => sqlx::query(
        "UPDATE schedules SET next_at = $1 WHERE id = $2 AND next_at = $3",
    )
    .bind(to)
    .bind(id)
    .bind(from)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(moved == 1)
}

/// Records what became of the time `fire_at`: the run it started, or why
/// none. `false` when that time was recorded already.
pub async fn record_fire(
    db: &Db,
    id: &str,
    fire_at: &str,
    run: Option<&RunId>,
    error: Option<&str>,
) -> Result<bool, AppError> {
    let recorded = on_db!(db, pool => sqlx::query(
        "INSERT INTO schedule_fires (schedule_id, fire_at, run_id, error, fired_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (schedule_id, fire_at) DO NOTHING",
    )
    .bind(id)
    .bind(fire_at)
    .bind(run.map(RunId::as_str))
    .bind(error)
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(recorded == 1)
}

#[cfg(test)]
mod tests {
    use super::{When, read, stored};

    #[test]
    fn times_follow_the_zone_and_read_back() {
        let when = When::parse("0 9 * * *", "Europe/Paris").unwrap();
        let after = read("2026-07-01T12:00:00.000Z").unwrap();
        // 09:00 in Paris in summer is 07:00 UTC.
        assert_eq!(
            stored(when.next_after(after).unwrap()),
            "2026-07-02T07:00:00.000Z"
        );
        let winter = read("2026-12-01T12:00:00.000Z").unwrap();
        assert_eq!(
            stored(when.next_after(winter).unwrap()),
            "2026-12-02T08:00:00.000Z"
        );
        let seconds = When::parse("*/5 * * * * *", "UTC").unwrap();
        assert_eq!(
            stored(seconds.next_after(after).unwrap()),
            "2026-07-01T12:00:05.000Z"
        );
        assert!(When::parse("61 * * * *", "UTC").is_err());
        assert!(When::parse("0 9 * * *", "Mars/Base").is_err());
    }
}
