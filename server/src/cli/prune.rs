//! `heddle prune`: the retention policy applied once, now, to the
//! database a server uses (SQLite or PostgreSQL), safe while servers run
//! on it. One line per thread and run it pruned, then the totals.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use heddle_engine::run::postgres::PostgresStore;
use heddle_engine::run::sqlite::SqliteStore;
use heddle_engine::run::{CheckpointStore, Pruned, StoreError};
use heddle_store::db::Db;
use heddle_store::db::open as db;

use super::{CliError, Outcome};
use crate::config::PruneArgs;

/// Prunes the database `args` names, writing what it does to `out`.
pub async fn prune(args: &PruneArgs, out: Box<dyn Write + Send>) -> Result<Outcome, CliError> {
    let database = db::connect(&args.database_url)
        .await
        .map_err(|error| StoreError::Backend(error.to_string()))?;
    let store: Arc<dyn CheckpointStore> = match &database {
        Db::Sqlite(pool) => SqliteStore::from_pool(pool.clone()).await?.shared(),
        Db::Postgres(pool) => PostgresStore::from_pool(pool.clone()).await?.shared(),
    };
    let out = Mutex::new(out);
    let written = Mutex::new(Ok(()));
    let say = |line: String| {
        let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
        let result = writeln!(out, "{line}").and_then(|()| out.flush());
        if let Err(error) = result {
            *written.lock().unwrap_or_else(PoisonError::into_inner) = Err(error);
        }
    };
    let total = store
        .prune(
            args.retention.policy(),
            crate::retention::now_us(),
            0,
            &|pruned: Pruned| say(line(&pruned)),
        )
        .await;
    database.close().await;
    let total = total?;
    say(format!(
        "Pruned {} checkpoints of {} threads ({} kept ones stored again) and {} events of {} runs.",
        total.checkpoints, total.threads, total.rebased, total.events, total.runs
    ));
    written
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)?;
    Ok(Outcome::Done)
}

/// What was pruned of one thread or run, in words.
fn line(pruned: &Pruned) -> String {
    match pruned.runs {
        0 => format!(
            "thread {}: removed {} checkpoints, stored {} kept ones again",
            pruned.what, pruned.checkpoints, pruned.rebased
        ),
        _ => format!(
            "run {}: compacted its log to its outcome, removed {} events",
            pruned.what, pruned.events
        ),
    }
}
