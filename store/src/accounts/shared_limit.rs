//! Rate limits shared by every server on the database: a GCRA (the
//! algorithm of the `governor` crate, which keeps its state in one
//! process) whose state per key is one row of `rate_limits`, updated in
//! one statement, so concurrent attempts on any servers are counted
//! exactly. Rows of keys that have fully recovered are swept now and then.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;

/// A burst of `burst` attempts, then one more every `refill`.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub burst: u32,
    pub refill: Duration,
}

/// Attempts between two sweeps of recovered keys (per process).
const SWEEP_EVERY: u64 = 1024;
static TAKEN: AtomicU64 = AtomicU64::new(0);

/// Takes one attempt of `key` under `limit`: `Ok(Ok(()))` when allowed,
/// `Ok(Err(wait))` when over the limit, with how long until the next.
pub async fn take(db: &Db, key: &str, limit: Limit) -> Result<Result<(), Duration>, AppError> {
    if TAKEN.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
        sweep(db).await?;
    }
    let now = now_ms();
    let interval = i64::try_from(limit.refill.as_millis()).unwrap_or(i64::MAX / 4);
    let window = interval.saturating_mul(i64::from(limit.burst.max(1)));
    // The key's arrival time moves on by one interval from now or from
    // where it was, whichever is later, unless that leaves it more than a
    // burst's worth ahead of now: then the attempt is refused, unchanged.
    let allowed: Option<i64> = on_db!(db, pool => sqlx::query_scalar(
        "INSERT INTO rate_limits (key, tat) VALUES ($1, $2 + $3)
         ON CONFLICT (key) DO UPDATE
            SET tat = CASE WHEN rate_limits.tat > $2 THEN rate_limits.tat ELSE $2 END + $3
          WHERE CASE WHEN rate_limits.tat > $2 THEN rate_limits.tat ELSE $2 END + $3 - $4 <= $2
         RETURNING tat",
    )
    .bind(key)
    .bind(now)
    .bind(interval)
    .bind(window)
    .fetch_optional(pool)
    .await)?;
    if allowed.is_some() {
        return Ok(Ok(()));
    }
    let tat: Option<i64> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT tat FROM rate_limits WHERE key = $1"
    )
    .bind(key)
    .fetch_optional(pool)
    .await)?;
    let wait = tat.unwrap_or(now).max(now) + interval - window - now;
    Ok(Err(Duration::from_millis(u64::try_from(wait).unwrap_or(0))))
}

/// Deletes the rows of keys that have fully recovered.
async fn sweep(db: &Db) -> Result<u64, AppError> {
    Ok(
        on_db!(db, pool => sqlx::query("DELETE FROM rate_limits WHERE tat < $1")
        .bind(now_ms())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?,
    )
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX / 2)
        })
}
