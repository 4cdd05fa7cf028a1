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
}

use Kind::{Bool, Bytes, Integer, Text};

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
