//! The database every data module works on: SQLite (embedded, the
//! default) or PostgreSQL (for teams), chosen by the scheme of
//! `DATABASE_URL` when the server starts.
//!
//! Each domain module (graphs, accounts, sharing, secrets, runs) is the
//! only place its tables are touched. Their queries are written once, in
//! the SQL both databases speak (`$1` parameters, `ON CONFLICT`,
//! timestamps bound from Rust), and run on whichever pool [`Db`] holds
//! through [`on_db!`](crate::on_db): the macro expands the same code once per
//! driver, so rows stay typed and nothing goes through a dynamic driver.
//! The few statements that differ (locking) live behind [`WritePool`].

pub mod open;

use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};

/// Runs `$body` with `$pool` bound to the pool `$db` holds: the body is
/// compiled once per database, so it must be SQL both understand.
#[macro_export]
macro_rules! on_db {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite($pool) => $body,
            $crate::db::Db::Postgres($pool) => $body,
        }
    };
}

/// An open database.
#[derive(Clone, Debug)]
pub enum Db {
    /// One file, one machine: the default.
    Sqlite(SqlitePool),
    /// A PostgreSQL server: several Heddle servers may share it.
    Postgres(PgPool),
}

/// Which database a [`Db`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Its name in messages and figures.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

impl Db {
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Closes every connection (waiting for those in use).
    pub async fn close(&self) {
        on_db!(self, pool => pool.close().await)
    }
}

/// A pool that can open a transaction that writes after it reads, without
/// another writer of the same thing in between.
pub trait WritePool {
    type Database: sqlx::Database;

    /// Begins a transaction holding the write lock named `key`.
    ///
    /// SQLite has one writer at a time: the transaction begins IMMEDIATE
    /// (a deferred one would fail at once, not wait, when another write
    /// commits in between), whatever the key. PostgreSQL takes a
    /// transaction-scoped advisory lock on the key, so writers of other
    /// things go on in parallel.
    fn begin_write(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Transaction<'static, Self::Database>, sqlx::Error>> + Send;
}

/// The engine's run tables as the store may touch them: only through the
/// engine's own functions (it owns `heddle_runs` and what hangs off it),
/// inside the store's transaction.
pub trait EngineRuns: WritePool {
    /// Deletes the engine's records of `runs` (their checkpoints and events
    /// go with them) in `tx`.
    fn delete_engine_runs<'t>(
        &self,
        tx: &'t mut Transaction<'static, Self::Database>,
        runs: &'t [String],
    ) -> impl Future<Output = Result<u64, heddle_engine::run::StoreError>> + Send + 't;
}

impl EngineRuns for SqlitePool {
    fn delete_engine_runs<'t>(
        &self,
        tx: &'t mut Transaction<'static, Sqlite>,
        runs: &'t [String],
    ) -> impl Future<Output = Result<u64, heddle_engine::run::StoreError>> + Send + 't {
        heddle_engine::run::sqlite::delete_runs_with(tx, runs)
    }
}

impl EngineRuns for PgPool {
    fn delete_engine_runs<'t>(
        &self,
        tx: &'t mut Transaction<'static, Postgres>,
        runs: &'t [String],
    ) -> impl Future<Output = Result<u64, heddle_engine::run::StoreError>> + Send + 't {
        heddle_engine::run::postgres::delete_runs_with(tx, runs)
    }
}

impl WritePool for SqlitePool {
    type Database = Sqlite;

    async fn begin_write(&self, _key: &str) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        self.begin_with("BEGIN IMMEDIATE").await
    }
}

impl WritePool for PgPool {
    type Database = Postgres;

    async fn begin_write(&self, key: &str) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(key)
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }
}

/// Now, as the text every timestamp column holds: ISO-8601 UTC with
/// milliseconds (`2026-11-22T19:30:00.123Z`), which sorts as text.
pub fn now() -> String {
    timestamp(time::OffsetDateTime::now_utc())
}

/// `hours` from now, in the same form as [`now`].
pub fn hours_from_now(hours: i64) -> String {
    timestamp(time::OffsetDateTime::now_utc() + time::Duration::hours(hours))
}

/// `duration` from now, in the same form as [`now`].
pub fn from_now(duration: std::time::Duration) -> String {
    let duration = time::Duration::try_from(duration).unwrap_or(time::Duration::DAY);
    timestamp(time::OffsetDateTime::now_utc() + duration)
}

/// `duration` ago, in the same form as [`now`].
pub fn ago(duration: std::time::Duration) -> String {
    let duration = time::Duration::try_from(duration).unwrap_or(time::Duration::ZERO);
    timestamp(time::OffsetDateTime::now_utc() - duration)
}

/// Seconds since 1970 of a stored timestamp (as [`now`] writes them);
/// `None` for text that is not one.
pub fn unix_seconds(stored: &str) -> Option<i64> {
    heddle_wire::time::Timestamp::parse(stored).map(|at| at.millis().div_euclid(1000))
}

fn timestamp(at: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::timestamp;

    #[test]
    fn timestamps_are_fixed_width_utc_text() {
        let at = time::OffsetDateTime::from_unix_timestamp_nanos(1_795_000_000_007_000_000)
            .expect("a valid time");
        assert_eq!(timestamp(at), "2026-11-18T11:06:40.007Z");
    }
}
