//! `heddle migrate`: copies everything from one database to another (SQLite
//! to PostgreSQL when a team moves up, or back), then checks that every
//! table holds as many rows on both sides.
//!
//! Both databases get their schema first (the usual migrations), so the
//! copy moves rows, never DDL. The target must be empty, and the whole
//! copy is one transaction on it: a copy that fails leaves it as it was.
//! Rows go over in batches, in an order that satisfies every foreign key
//! and the event log's continuity check, so run ids, event numbers,
//! checkpoints, sessions and sealed secrets arrive exactly as they were.
//! Log-in rate limits (`rate_limits`) are not copied: they are minutes
//! of state, and recover on their own.

use futures_util::TryStreamExt;
use heddle_store::db::Db;
use heddle_store::on_db;
use sqlx::{AssertSqlSafe, Row};

/// How many rows one INSERT carries.
const BATCH: usize = 256;

/// Why a copy stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// The target already holds data: a copy only fills an empty database.
    #[error(
        "the target database is not empty ({rows} rows in `{table}`): heddle migrate copies into an empty database"
    )]
    NotEmpty { table: &'static str, rows: i64 },
    /// A table has a different number of rows after the copy.
    #[error("`{table}` has {from} rows in the source but {to} in the target after the copy")]
    Mismatch {
        table: &'static str,
        from: i64,
        to: i64,
    },
    /// Reading or writing a table failed.
    #[error("copying `{table}`: {source}")]
    Table {
        table: &'static str,
        #[source]
        source: sqlx::Error,
    },
    /// The target's transaction could not begin or commit.
    #[error("the target database: {0}")]
    Target(#[source] sqlx::Error),
}

/// What kind of value a column holds (the same on both databases).
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Integer,
    Bytes,
    /// `BOOLEAN`: an integer on SQLite, a boolean on PostgreSQL.
    Bool,
    /// `REAL` on SQLite, `DOUBLE PRECISION` on PostgreSQL.
    Real,
}

use Kind::{Bool, Bytes, Integer, Real, Text};

/// One table to copy: its columns, and the order that keeps foreign keys
/// and insertion order (the `rowid` ties) intact.
struct Table {
    name: &'static str,
    columns: &'static [(&'static str, Kind)],
    order: &'static str,
}

/// Every table with data, parents before children.
const TABLES: &[Table] = &[
    Table {
        name: "users",
        columns: &[
            ("id", Text),
            ("username", Text),
            ("password_hash", Text),
            ("session_epoch", Integer),
            ("created_at", Text),
            ("username_key", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "graphs",
        columns: &[
            ("id", Text),
            ("name", Text),
            ("graph_json", Text),
            ("version", Integer),
            ("created_at", Text),
            ("updated_at", Text),
            ("owner_id", Text),
            ("node_count", Integer),
        ],
        order: "rowid",
    },
    Table {
        name: "graph_versions",
        columns: &[
            ("graph_id", Text),
            ("version", Integer),
            ("name", Text),
            ("graph_json", Text),
            ("created_at", Text),
            ("author_id", Text),
            ("node_count", Integer),
            ("summary", Text),
            ("label", Text),
        ],
        order: "graph_id, version",
    },
    Table {
        name: "graph_publications",
        columns: &[
            ("graph_id", Text),
            ("version", Integer),
            ("published_at", Text),
            ("published_by", Text),
        ],
        order: "graph_id",
    },
    Table {
        name: "threads",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("created_at", Text),
            ("updated_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "runs",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("graph_version", Integer),
            ("thread_id", Text),
            ("input", Text),
            ("status", Text),
            ("output", Text),
            ("error", Text),
            ("created_at", Text),
            ("started_at", Text),
            ("finished_at", Text),
            ("user_id", Text),
            ("embeds", Text),
            // Leases are not copied: the copy's unfinished runs are free for
            // the first server on it to take.
            ("request", Text),
            ("origin", Text),
            ("origin_label", Text),
            ("api_key_id", Text),
            ("forked_from", Text),
            ("forked_at_step", Integer),
            ("model_calls", Integer),
            ("prompt_tokens", Integer),
            ("completion_tokens", Integer),
            ("cached_tokens", Integer),
            ("cost_nanos", Integer),
            ("unpriced_calls", Integer),
            ("active_ms", Integer),
            ("experiment_id", Text),
            // Where its server last died (quarantine's evidence).
            ("crash_checkpoint", Text),
        ],
        order: "rowid",
    },
    Table {
        name: "graph_members",
        columns: &[
            ("graph_id", Text),
            ("user_id", Text),
            ("role", Text),
            ("created_at", Text),
        ],
        order: "graph_id, user_id",
    },
    Table {
        name: "share_links",
        columns: &[
            ("id", Text),
            ("token", Text),
            ("graph_id", Text),
            ("role", Text),
            ("run_id", Text),
            ("step", Integer),
            ("created_by", Text),
            ("created_at", Text),
            ("expires_at", Text),
            ("revoked_at", Text),
        ],
        order: "rowid",
    },
    Table {
        name: "link_grants",
        columns: &[("link_id", Text), ("user_id", Text), ("created_at", Text)],
        order: "link_id, user_id",
    },
    Table {
        name: "secrets",
        columns: &[
            ("user_id", Text),
            ("name", Text),
            ("value", Text),
            ("created_at", Text),
            ("updated_at", Text),
        ],
        order: "user_id, name",
    },
    Table {
        name: "api_keys",
        columns: &[
            ("id", Text),
            ("user_id", Text),
            ("name", Text),
            ("prefix", Text),
            ("secret_sha256", Text),
            ("scope", Text),
            ("created_at", Text),
            ("expires_at", Text),
            ("last_used_at", Text),
            ("revoked_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "api_key_graphs",
        columns: &[("key_id", Text), ("graph_id", Text)],
        order: "key_id, graph_id",
    },
    Table {
        name: "webhooks",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("name", Text),
            ("token_sha256", Text),
            ("prefix", Text),
            ("mapping", Text),
            ("signing_secret", Text),
            ("respond", Text),
            ("enabled", Bool),
            ("created_by", Text),
            ("created_at", Text),
            ("last_used_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "webhook_deliveries",
        columns: &[
            ("webhook_id", Text),
            ("delivery", Text),
            ("run_id", Text),
            ("received_at", Text),
        ],
        order: "webhook_id, delivery",
    },
    Table {
        name: "schedules",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("name", Text),
            ("cron", Text),
            ("timezone", Text),
            ("input", Text),
            ("missed", Text),
            ("enabled", Bool),
            ("next_at", Text),
            ("created_by", Text),
            ("created_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "schedule_fires",
        columns: &[
            ("schedule_id", Text),
            ("fire_at", Text),
            ("run_id", Text),
            ("error", Text),
            ("fired_at", Text),
        ],
        order: "schedule_id, fire_at",
    },
    Table {
        name: "widgets",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("name", Text),
            ("token", Text),
            ("allowed_origins", Text),
            ("title", Text),
            ("color", Text),
            ("greeting", Text),
            ("enabled", Bool),
            ("created_by", Text),
            ("created_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "datasets",
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("name", Text),
            ("version", Integer),
            ("created_by", Text),
            ("created_at", Text),
            ("updated_at", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "dataset_examples",
        columns: &[
            ("id", Text),
            ("dataset_id", Text),
            ("position", Integer),
            ("label", Text),
            ("input", Text),
            ("reference", Text),
            ("source_run", Text),
            ("added_in", Integer),
            ("removed_in", Integer),
        ],
        order: "dataset_id, position, id",
    },
    Table {
        name: "experiments",
        // Its driver's lease is not copied: the first server on the copy
        // takes its running experiments.
        columns: &[
            ("id", Text),
            ("graph_id", Text),
            ("graph_version", Integer),
            ("dataset_id", Text),
            ("dataset_version", Integer),
            ("name", Text),
            ("scorers", Text),
            ("repetitions", Integer),
            ("max_tokens", Integer),
            ("max_cost_nanos", Integer),
            ("status", Text),
            ("stop_reason", Text),
            ("created_by", Text),
            ("api_key_id", Text),
            ("created_at", Text),
            ("ended_at", Text),
            ("record_replies", Integer),
            ("replay_from", Text),
        ],
        order: "created_at, id",
    },
    Table {
        name: "experiment_replies",
        columns: &[
            ("experiment_id", Text),
            ("example_id", Text),
            ("repetition", Integer),
            ("lines", Text),
            ("replayed", Integer),
            ("live", Integer),
        ],
        order: "experiment_id, example_id, repetition",
    },
    Table {
        name: "experiment_items",
        columns: &[
            ("experiment_id", Text),
            ("example_id", Text),
            ("repetition", Integer),
            ("position", Integer),
            ("run_id", Text),
            ("status", Text),
            ("output", Text),
            ("scores", Text),
            ("tokens", Integer),
            ("cost_nanos", Integer),
            ("latency_ms", Integer),
            ("error", Text),
        ],
        order: "experiment_id, position, repetition",
    },
    Table {
        name: "publish_gates",
        columns: &[
            ("graph_id", Text),
            ("dataset_id", Text),
            ("dataset_version", Integer),
            ("tolerances", Text),
            ("tolerance", Real),
            ("set_by", Text),
            ("set_at", Text),
        ],
        order: "graph_id",
    },
    Table {
        name: "sessions",
        columns: &[("id", Text), ("data", Bytes), ("expiry_date", Integer)],
        order: "id",
    },
    Table {
        name: "heddle_graphs",
        columns: &[("hash", Text), ("document", Text)],
        order: "hash",
    },
    Table {
        name: "heddle_runs",
        columns: &[
            ("run_id", Text),
            ("thread_id", Text),
            ("graph", Text),
            ("graph_hash", Text),
            ("status", Text),
            ("created_at_us", Integer),
            ("updated_at_us", Integer),
        ],
        order: "created_at_us, run_id",
    },
    Table {
        name: "heddle_checkpoints",
        columns: &[
            ("thread_id", Text),
            ("checkpoint_id", Text),
            ("run_id", Text),
            ("parent_id", Text),
            ("step", Integer),
            ("status", Text),
            ("created_at_us", Integer),
            ("body", Text),
            ("changes", Text),
            ("base_id", Text),
            ("snapshot_id", Text),
            ("budget", Integer),
        ],
        order: "position",
    },
    Table {
        name: "heddle_events",
        columns: &[
            ("run_id", Text),
            ("first_seq", Integer),
            ("last_seq", Integer),
            ("body", Text),
        ],
        order: "run_id, first_seq",
    },
    Table {
        name: "heddle_pins",
        columns: &[
            ("kind", Text),
            ("id", Text),
            ("thread_id", Text),
            ("checkpoint_id", Text),
            ("created_at_us", Integer),
        ],
        order: "kind, id, thread_id, checkpoint_id",
    },
];

/// One value, as read from the source.
enum Cell {
    Text(Option<String>),
    Integer(Option<i64>),
    Bytes(Option<Vec<u8>>),
    Bool(Option<bool>),
    Real(Option<f64>),
}

impl Table {
    fn select(&self) -> String {
        let columns: Vec<&str> = self.columns.iter().map(|(name, _)| *name).collect();
        format!(
            "SELECT {} FROM {} ORDER BY {}",
            columns.join(", "),
            self.name,
            self.order
        )
    }

    /// `INSERT INTO t (...) VALUES ($1, ...), (...)` for `rows` rows.
    fn insert(&self, rows: usize) -> String {
        let width = self.columns.len();
        let columns: Vec<&str> = self.columns.iter().map(|(name, _)| *name).collect();
        let values: Vec<String> = (0..rows)
            .map(|row| {
                let params: Vec<String> = (1..=width)
                    .map(|column| format!("${}", row * width + column))
                    .collect();
                format!("({})", params.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO {} ({}) VALUES {}",
            self.name,
            columns.join(", "),
            values.join(", ")
        )
    }
}

/// How many rows a table had, and how many were copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub table: &'static str,
    pub rows: i64,
}

/// Copies every row of `from` into `to` (which must be empty) and checks
/// the counts; the tables with their row counts.
pub async fn copy(from: &Db, to: &Db) -> Result<Vec<Copied>, CopyError> {
    for table in TABLES {
        let rows = count(to, table.name).await?;
        if rows > 0 {
            return Err(CopyError::NotEmpty {
                table: table.name,
                rows,
            });
        }
    }
    on_db!(to, target => {
        let mut tx = target.begin().await.map_err(CopyError::Target)?;
        for table in TABLES {
            let failed = |source| CopyError::Table { table: table.name, source };
            on_db!(from, source => {
                let select = table.select();
                let mut rows = sqlx::query(AssertSqlSafe(select.as_str())).fetch(source);
                let mut batch: Vec<Cell> = Vec::with_capacity(BATCH * table.columns.len());
                loop {
                    let row = rows.try_next().await.map_err(failed)?;
                    if let Some(row) = &row {
                        for (index, (_, kind)) in table.columns.iter().enumerate() {
                            batch.push(match kind {
                                Text => Cell::Text(row.try_get(index).map_err(failed)?),
                                Integer => Cell::Integer(row.try_get(index).map_err(failed)?),
                                Bytes => Cell::Bytes(row.try_get(index).map_err(failed)?),
                                Bool => Cell::Bool(row.try_get(index).map_err(failed)?),
                                Real => Cell::Real(row.try_get(index).map_err(failed)?),
                            });
                        }
                    }
                    let full = batch.len() == BATCH * table.columns.len();
                    if (full || row.is_none()) && !batch.is_empty() {
                        let sql = table.insert(batch.len() / table.columns.len());
                        let mut insert = sqlx::query(AssertSqlSafe(sql));
                        for cell in batch.drain(..) {
                            insert = match cell {
                                Cell::Text(value) => insert.bind(value),
                                Cell::Integer(value) => insert.bind(value),
                                Cell::Bytes(value) => insert.bind(value),
                                Cell::Bool(value) => insert.bind(value),
                                Cell::Real(value) => insert.bind(value),
                            };
                        }
                        insert.execute(&mut *tx).await.map_err(failed)?;
                    }
                    if row.is_none() {
                        break;
                    }
                }
            });
        }
        tx.commit().await.map_err(CopyError::Target)?;
    });
    let mut copied = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let (rows, landed) = (count(from, table.name).await?, count(to, table.name).await?);
        if rows != landed {
            return Err(CopyError::Mismatch {
                table: table.name,
                from: rows,
                to: landed,
            });
        }
        copied.push(Copied {
            table: table.name,
            rows,
        });
    }
    Ok(copied)
}

async fn count(db: &Db, table: &'static str) -> Result<i64, CopyError> {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    on_db!(db, pool => sqlx::query_scalar(AssertSqlSafe(sql)).fetch_one(pool).await)
        .map_err(|source| CopyError::Table { table, source })
}

#[cfg(test)]
mod tests {
    use super::TABLES;

    /// Tables that are not copied, and why (see the module's comment).
    const NOT_COPIED: &[&str] = &["rate_limits", "_sqlx_migrations"];
    /// Columns that are not copied: the running servers' leases and
    /// cancel requests (the first server on the copy takes its runs and
    /// experiments afresh), and the checkpoints' `position`, which the
    /// target numbers again in the same order.
    const LEASES: &[(&str, &str)] = &[
        ("runs", "lease_owner"),
        ("runs", "lease_expires_at"),
        ("runs", "cancel_requested"),
        ("experiments", "driver"),
        ("experiments", "driver_until"),
        ("heddle_checkpoints", "position"),
    ];

    /// Every table and column the migrations make is copied, or named
    /// above as not: a table added without a line here would be lost by
    /// `heddle migrate` without a word (datasets and experiments once
    /// were).
    #[tokio::test]
    async fn the_copy_covers_every_table_and_column_the_migrations_make() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("schema.db").display());
        let db = heddle_store::db::open::connect(&url).await.unwrap();
        let heddle_store::db::Db::Sqlite(pool) = &db else {
            unreachable!("a SQLite URL opens SQLite")
        };
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        let mut missing = Vec::new();
        for table in &tables {
            if NOT_COPIED.contains(&table.as_str()) {
                continue;
            }
            let Some(copied) = TABLES.iter().find(|copied| copied.name == table) else {
                missing.push(format!("table {table}"));
                continue;
            };
            let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT name FROM pragma_table_info('{table}')"
            )))
            .fetch_all(pool)
            .await
            .unwrap();
            for column in columns {
                let listed = copied.columns.iter().any(|(name, _)| *name == column);
                let lease = LEASES.contains(&(table.as_str(), column.as_str()));
                if !listed && !lease {
                    missing.push(format!("{table}.{column}"));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "not copied by heddle migrate: {missing:?}"
        );
        for copied in TABLES {
            assert!(
                tables.iter().any(|table| table == copied.name),
                "{}",
                copied.name
            );
        }
    }

    #[test]
    fn inserts_number_their_parameters_row_after_row() {
        let links = TABLES
            .iter()
            .find(|table| table.name == "link_grants")
            .expect("a table");
        assert_eq!(
            links.insert(2),
            "INSERT INTO link_grants (link_id, user_id, created_at) VALUES ($1, $2, $3), ($4, $5, $6)"
        );
    }
}
