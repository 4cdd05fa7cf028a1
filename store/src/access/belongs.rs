//! Which graph a run or a thread is of, and whether an API key started
//! it: the reads of the runs ledger's tables (`runs`, `threads`) that an
//! access decision starts from. They are here, below the ledger, because
//! the ledger's own functions take the decisions these reads make.

use heddle_engine::ids::{RunId, ThreadId};
use heddle_wire::AppError;

use crate::db::Db;
use crate::on_db;

/// The graph a run belongs to (404 when there is no such run).
pub async fn graph_of_run(db: &Db, run_id: &RunId) -> Result<String, AppError> {
    on_db!(db, pool => sqlx::query_scalar("SELECT graph_id FROM runs WHERE id = $1")
        .bind(run_id.as_str())
        .fetch_optional(pool)
        .await)?
    .ok_or_else(|| AppError::not_found(format!("run {run_id}")))
}

/// Whether run `run_id` was started with key `key_id`.
pub async fn started_run(db: &Db, key_id: &str, run_id: &RunId) -> Result<bool, AppError> {
    let found: i64 = on_db!(db, pool => sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs WHERE id = $1 AND api_key_id = $2",
    )
    .bind(run_id.as_str())
    .bind(key_id)
    .fetch_one(pool)
    .await)?;
    Ok(found > 0)
}

/// Whether thread `thread_id` was started by a run with key `key_id`.
pub async fn started_thread(db: &Db, key_id: &str, thread_id: &ThreadId) -> Result<bool, AppError> {
    let found: i64 = on_db!(db, pool => sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs WHERE thread_id = $1 AND api_key_id = $2",
    )
    .bind(thread_id.as_str())
    .bind(key_id)
    .fetch_one(pool)
    .await)?;
    Ok(found > 0)
}

/// The graph a thread belongs to (404 when there is no such thread).
pub async fn graph_of_thread(db: &Db, thread_id: &ThreadId) -> Result<String, AppError> {
    thread_graph(db, thread_id)
        .await?
        .ok_or_else(|| AppError::not_found(format!("thread {thread_id}")))
}

/// The graph a thread belongs to, if the thread exists.
pub async fn thread_graph(db: &Db, thread_id: &ThreadId) -> Result<Option<String>, AppError> {
    Ok(
        on_db!(db, pool => sqlx::query_scalar("SELECT graph_id FROM threads WHERE id = $1")
            .bind(thread_id.as_str())
            .fetch_optional(pool)
            .await)?,
    )
}
