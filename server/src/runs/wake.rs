//! Wakes the viewers on this server of runs that execute on another one,
//! and passes on cancels asked through another server (PostgreSQL): the engine's store announces every stored batch of a
//! run's events with `NOTIFY` on [`EVENTS_CHANNEL`] when it commits, one
//! listener per server passes the run's id on to the viewers here, and
//! each reads the new events from the table by sequence number. The table
//! is the only source, so a viewer gets every event once and in order
//! whatever notifications are merged or lost; a reconnecting listener
//! may miss some, so viewers also look every [`FALLBACK`].

use std::sync::Arc;
use std::time::Duration;

use heddle_app::db::Db;
use heddle_app::runs::ssr::CONTROL_CHANNEL;
use heddle_engine::run::postgres::EVENTS_CHANNEL;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

/// How long a viewer waits for a notification before it looks anyway.
pub const FALLBACK: Duration = Duration::from_millis(500);

/// What other servers announce: runs whose events were stored, and runs
/// someone asked to cancel, as their ids.
#[derive(Clone)]
pub struct Wakeups {
    stored: broadcast::Sender<Arc<str>>,
    cancels: broadcast::Sender<Arc<str>>,
}

impl Default for Wakeups {
    fn default() -> Self {
        Wakeups {
            stored: broadcast::Sender::new(1024),
            cancels: broadcast::Sender::new(256),
        }
    }
}

impl Wakeups {
    /// Hears the runs whose events were stored from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.stored.subscribe()
    }

    /// Hears the runs someone asked, through any server, to cancel.
    pub fn cancels(&self) -> broadcast::Receiver<Arc<str>> {
        self.cancels.subscribe()
    }

    /// Listens on PostgreSQL until the server stops; on SQLite there is
    /// nothing to listen to (one server per file, whose viewers follow its
    /// runs directly).
    pub fn listen(&self, db: &Db) -> Option<tokio::task::JoinHandle<()>> {
        let Db::Postgres(pool) = db else {
            return None;
        };
        let (pool, wakeups) = (pool.clone(), self.clone());
        Some(tokio::spawn(async move {
            loop {
                if let Err(error) = wakeups.relay(&pool).await {
                    tracing::warn!(%error, "lost the run events listener; reconnecting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }

    /// Passes what other servers announce on to this server's listeners,
    /// until the connection fails.
    async fn relay(&self, pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([EVENTS_CHANNEL, CONTROL_CHANNEL])
            .await?;
        loop {
            let notification = listener.recv().await?;
            let to = match notification.channel() {
                CONTROL_CHANNEL => &self.cancels,
                _ => &self.stored,
            };
            // Nobody listening is fine.
            let _ = to.send(Arc::from(notification.payload()));
        }
    }
}
