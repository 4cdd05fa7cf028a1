//! The signal that tells open websockets to check their subscriptions
//! again when access changes (a link revoked, a member removed, a session
//! ended), on this server and, through the database, on the others.

use tokio::sync::broadcast;

use crate::db::Db;

/// A change of who may see what: open websockets check their
/// subscriptions again when they hear one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "graph", rename_all = "snake_case")]
pub enum AccessChange {
    /// Roles on this graph changed (a link revoked, a member removed).
    Graph(String),
    /// A session ended or a password changed: check who is logged in.
    Sessions,
}

/// The PostgreSQL channel on which access changes are announced to the
/// other servers on the database, whose websockets check again too.
pub const ACCESS_CHANNEL: &str = "heddle_access";

/// Where access changes are announced: to this server's websockets at
/// once and, on PostgreSQL, to every other server's (by `NOTIFY` on
/// [`ACCESS_CHANNEL`]; the server's listener hands them to
/// [`AccessEvents::hear`]). A lost notification is made up for by the
/// sockets' own periodic check.
#[derive(Clone)]
pub struct AccessEvents {
    local: broadcast::Sender<AccessChange>,
    /// This process, so that it does not hear its own announcements twice.
    origin: std::sync::Arc<str>,
    /// Where other servers hear: PostgreSQL only.
    relay: Option<sqlx::PgPool>,
}

/// An access change as other servers hear it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Relayed {
    origin: String,
    change: AccessChange,
}

impl Default for AccessEvents {
    fn default() -> Self {
        AccessEvents {
            local: broadcast::Sender::new(256),
            origin: uuid::Uuid::new_v4().to_string().into(),
            relay: None,
        }
    }
}

impl AccessEvents {
    /// Announcements for the servers on `db`.
    pub fn on(db: &Db) -> Self {
        AccessEvents {
            relay: match db {
                Db::Postgres(pool) => Some(pool.clone()),
                Db::Sqlite(_) => None,
            },
            ..AccessEvents::default()
        }
    }

    /// Announces a change (already committed) here and to the other
    /// servers.
    pub fn announce(&self, change: AccessChange) {
        if let Some(pool) = &self.relay {
            let payload = serde_json::to_string(&Relayed {
                origin: self.origin.to_string(),
                change: change.clone(),
            });
            let pool = pool.clone();
            tokio::spawn(async move {
                let sent = match payload {
                    Ok(payload) => sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(ACCESS_CHANNEL)
                        .bind(payload)
                        .execute(&pool)
                        .await
                        .map(|_| ())
                        .map_err(|error| error.to_string()),
                    Err(error) => Err(error.to_string()),
                };
                if let Err(error) = sent {
                    // The other servers' sockets check again on their own.
                    tracing::warn!(%error, "cannot announce an access change to other servers");
                }
            });
        }
        // Nobody listening is fine: no socket is open.
        let _ = self.local.send(change);
    }

    /// Passes on what another server announced on [`ACCESS_CHANNEL`]
    /// (this server's own announcements were passed on already).
    pub fn hear(&self, payload: &str) {
        match serde_json::from_str::<Relayed>(payload) {
            Ok(relayed) if *relayed.origin == *self.origin => {}
            Ok(relayed) => {
                let _ = self.local.send(relayed.change);
            }
            Err(error) => tracing::warn!(%error, "an access announcement could not be read"),
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<AccessChange> {
        self.local.subscribe()
    }
}
