//! Each distinct graph document is stored once on the database stores: runs
//! of the same graph refer to one copy by its hash, a run recorded before
//! documents were shared still reads its own, and a document goes with the
//! last run that refers to it.

use heddle_engine::run::{RunRecord, RunStatus};
use heddle_engine::{RunId, ThreadId};

use crate::stores::{Sql, stores};

fn record(run: &str, graph: &str) -> RunRecord {
    RunRecord {
        run_id: RunId::from(run),
        thread_id: ThreadId::from(format!("thread of {run}")),
        graph: graph.to_string(),
        status: RunStatus::Running,
    }
}

const FIRST: &str = r#"{"format_version":2,"name":"first","nodes":[]}"#;
const SECOND: &str = r#"{"format_version":2,"name":"second","nodes":[]}"#;
const OLD: &str = r#"{"format_version":2,"name":"recorded before","nodes":[]}"#;

impl Sql {
    async fn documents(&self) -> i64 {
        let count = "SELECT COUNT(*) FROM heddle_graphs";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => sqlx::query_scalar(count).fetch_one(pool).await.unwrap(),
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => sqlx::query_scalar(count).fetch_one(pool).await.unwrap(),
        }
    }

    /// A run as an older version recorded it: its own copy of the graph.
    async fn record_old(&self, run: &str, graph: &str) {
        let insert = "INSERT INTO heddle_runs (run_id, thread_id, graph, status, created_at_us, updated_at_us)
                      VALUES ($1, 'old thread', $2, 'finished', 1, 1)";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => {
                sqlx::query(insert)
                    .bind(run)
                    .bind(graph)
                    .execute(pool)
                    .await
                    .unwrap();
            }
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => {
                sqlx::query(insert)
                    .bind(run)
                    .bind(graph)
                    .execute(pool)
                    .await
                    .unwrap();
            }
        }
    }

    /// Deletes `runs` as an application does, in a transaction of its own.
    async fn delete(&self, runs: &[&str]) -> u64 {
        let runs: Vec<String> = runs.iter().map(|run| run.to_string()).collect();
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => {
                let mut tx = pool.begin().await.unwrap();
                let deleted = heddle_engine::run::sqlite::delete_runs_with(&mut tx, &runs)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
                deleted
            }
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => {
                let mut tx = pool.begin().await.unwrap();
                let deleted = heddle_engine::run::postgres::delete_runs_with(&mut tx, &runs)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
                deleted
            }
        }
    }
}

#[tokio::test]
async fn a_graph_document_is_stored_once_and_goes_with_its_last_run() {
    for store in stores().await {
        let Some(location) = &store.location else {
            continue;
        };
        let sql = Sql::open(location).await;
        store.create_run(&record("a1", FIRST)).await.unwrap();
        store.create_run(&record("a2", FIRST)).await.unwrap();
        store.create_run(&record("b1", SECOND)).await.unwrap();
        sql.record_old("old", OLD).await;
        assert_eq!(sql.documents().await, 2, "two distinct documents");
        for (run, graph) in [("a1", FIRST), ("a2", FIRST), ("b1", SECOND), ("old", OLD)] {
            let found = store
                .run(&RunId::from(run))
                .await
                .unwrap()
                .expect("recorded");
            assert_eq!(found.graph, graph, "{run}");
        }
        // A recovered run still gets its graph.
        let unfinished = store.unfinished().await.unwrap();
        assert_eq!(unfinished.len(), 3);
        assert!(
            unfinished
                .iter()
                .all(|run| run.graph == FIRST || run.graph == SECOND)
        );

        assert_eq!(sql.delete(&["a1"]).await, 1);
        assert_eq!(sql.documents().await, 2, "a2 still refers to the first");
        let found = store.run(&RunId::from("a2")).await.unwrap().expect("kept");
        assert_eq!(found.graph, FIRST);
        assert_eq!(sql.delete(&["a2", "old"]).await, 2);
        assert_eq!(sql.documents().await, 1, "the first went with its last run");
        assert_eq!(sql.delete(&["b1"]).await, 1);
        assert_eq!(sql.documents().await, 0);
        // Recorded again, a document comes back.
        store.create_run(&record("a3", FIRST)).await.unwrap();
        assert_eq!(sql.documents().await, 1);
    }
}
