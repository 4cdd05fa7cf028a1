//! Where tower-sessions keeps sessions: the `sessions` table of our own
//! database, SQLite or PostgreSQL (the published stores target other sqlx
//! versions). The only place that table is touched.
//! Expired records are ignored on load and swept every hour.

use std::time::Duration;

use heddle_store::db::Db;
use heddle_store::on_db;
use tower_sessions::cookie::time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{Error, Result, SessionStore};

/// Sessions in the database.
#[derive(Clone, Debug)]
pub struct DbSessions {
    db: Db,
}

impl DbSessions {
    pub fn new(db: Db) -> Self {
        DbSessions { db }
    }

    /// Deletes expired sessions now and then, for as long as the server runs.
    pub fn sweep_expired(&self) -> tokio::task::JoinHandle<()> {
        let db = self.db.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(3600));
            loop {
                every.tick().await;
                let now = OffsetDateTime::now_utc().unix_timestamp();
                let swept = on_db!(&db, pool => sqlx::query("DELETE FROM sessions WHERE expiry_date < $1")
                    .bind(now)
                    .execute(pool)
                    .await
                    .map(|_| ()));
                if let Err(error) = swept {
                    tracing::warn!(%error, "cannot sweep expired sessions");
                }
            }
        })
    }

    async fn insert(&self, record: &Record, replace: bool) -> Result<bool> {
        let data = serde_json::to_vec(&record.data).map_err(|e| Error::Encode(e.to_string()))?;
        let query = if replace {
            "INSERT INTO sessions (id, data, expiry_date) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry_date = excluded.expiry_date"
        } else {
            "INSERT INTO sessions (id, data, expiry_date) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
        };
        let inserted = on_db!(&self.db, pool => sqlx::query(query)
            .bind(record.id.to_string())
            .bind(data)
            .bind(record.expiry_date.unix_timestamp())
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))
        .map_err(backend)?;
        Ok(inserted == 1)
    }
}

fn backend(error: sqlx::Error) -> Error {
    Error::Backend(error.to_string())
}

#[async_trait::async_trait]
impl SessionStore for DbSessions {
    async fn create(&self, record: &mut Record) -> Result<()> {
        // A fresh id until one is free (a collision of 128 random bits is
        // not expected, but is handled).
        while !self.insert(record, false).await? {
            record.id = Id::default();
        }
        Ok(())
    }

    async fn save(&self, record: &Record) -> Result<()> {
        self.insert(record, true).await.map(|_| ())
    }

    async fn load(&self, id: &Id) -> Result<Option<Record>> {
        let row: Option<(Vec<u8>, i64)> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT data, expiry_date FROM sessions WHERE id = $1 AND expiry_date > $2",
        )
        .bind(id.to_string())
        .bind(OffsetDateTime::now_utc().unix_timestamp())
        .fetch_optional(pool)
            .await)
        .map_err(backend)?;
        let Some((data, expiry)) = row else {
            return Ok(None);
        };
        Ok(Some(Record {
            id: *id,
            data: serde_json::from_slice(&data).map_err(|e| Error::Decode(e.to_string()))?,
            expiry_date: OffsetDateTime::from_unix_timestamp(expiry)
                .map_err(|e| Error::Decode(e.to_string()))?,
        }))
    }

    async fn delete(&self, id: &Id) -> Result<()> {
        on_db!(&self.db, pool => sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(id.to_string())
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(backend)?;
        Ok(())
    }
}
