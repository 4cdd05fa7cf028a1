//! What the servers on one PostgreSQL database tell each other, passed on
//! to this server's listeners: runs whose events were stored (waking the
//! viewers here of runs executing elsewhere), cancels asked through
//! another server, runs queued for any server to take, runs starting,
//! pausing and ending (for the graph pages watching them), and access
//! changes (open websockets check again).
//!
//! The engine's store announces every stored batch of a run's events with
//! `NOTIFY` on [`EVENTS_CHANNEL`] when it commits, one listener per server
//! passes the run's id on to the viewers here, and each reads the new
//! events from the table by sequence number. The table is the only source,
//! so a viewer gets every event once and in order whatever notifications
//! are merged or lost; a reconnecting listener may miss some, so viewers
//! also look every [`FALLBACK`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use heddle_engine::run::postgres::EVENTS_CHANNEL;
use heddle_store::access_events::{ACCESS_CHANNEL, AccessEvents};
use heddle_store::db::Db;
use heddle_store::runs::{CONTROL_CHANNEL, QUEUE_CHANNEL};
use sqlx::postgres::PgListener;
use tokio::sync::{broadcast, mpsc};

use heddle_wire::protocol::RunNotice;

/// How long a viewer waits for a notification before it looks anyway.
pub const FALLBACK: Duration = Duration::from_millis(500);

/// The PostgreSQL channel on which servers announce runs starting,
/// pausing and ending (the payload is `[server, notice]` in JSON).
pub const NOTICE_CHANNEL: &str = "heddle_run_notices";

/// Where this server passes on what other servers announce beside run ids.
pub struct Relayed {
    /// Access changes, for this server's websockets.
    pub access: AccessEvents,
    /// Run notices, for this server's graph watchers.
    pub notices: broadcast::Sender<RunNotice>,
    /// This server's name: its own notices were passed on already.
    pub replica: String,
}

impl Relayed {
    fn hear_notice(&self, payload: &str) {
        match serde_json::from_str::<(String, RunNotice)>(payload) {
            Ok((from, _)) if from == self.replica => {}
            Ok((_, notice)) => {
                let _ = self.notices.send(notice);
            }
            Err(error) => tracing::warn!(%error, "a run notice could not be read"),
        }
    }
}

/// What other servers announce about runs: runs whose events were stored,
/// runs someone asked to cancel, and runs queued for any server to take,
/// as their ids.
#[derive(Clone)]
pub struct Wakeups {
    stored: broadcast::Sender<Arc<str>>,
    cancels: broadcast::Sender<Arc<str>>,
    queued: broadcast::Sender<Arc<str>>,
    /// This server's notices on their way to the others, in the order they
    /// happened: one task sends them one after another, so a run's
    /// "finished" never overtakes its "running" (started on first use).
    announcer: Arc<OnceLock<mpsc::UnboundedSender<String>>>,
}

impl Default for Wakeups {
    fn default() -> Self {
        Wakeups {
            stored: broadcast::Sender::new(1024),
            cancels: broadcast::Sender::new(256),
            queued: broadcast::Sender::new(256),
            announcer: Arc::default(),
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

    /// Hears the runs queued for any server to take.
    pub fn queued(&self) -> broadcast::Receiver<Arc<str>> {
        self.queued.subscribe()
    }

    /// Tells the other servers' graph watchers of a run's notice (sent by
    /// `replica`, whose own watchers heard it already).
    pub fn announce_notice(&self, db: &Db, replica: &str, notice: &RunNotice) {
        let Db::Postgres(pool) = db else {
            return;
        };
        let payload = match serde_json::to_string(&(replica, notice)) {
            Ok(payload) => payload,
            Err(error) => {
                tracing::warn!(%error, "cannot write a run notice");
                return;
            }
        };
        let announcer = self.announcer.get_or_init(|| {
            let (send, mut queue) = mpsc::unbounded_channel::<String>();
            let pool = pool.clone();
            tokio::spawn(async move {
                while let Some(payload) = queue.recv().await {
                    if let Err(error) = sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(NOTICE_CHANNEL)
                        .bind(payload)
                        .execute(&pool)
                        .await
                    {
                        tracing::warn!(%error, "cannot announce a run notice to other servers");
                    }
                }
            });
            send
        });
        // Unbounded: a notice is a few hundred bytes per run start, pause
        // or end, and the task ends only with the runtime.
        let _ = announcer.send(payload);
    }

    /// Listens on PostgreSQL until the server stops, passing notices and
    /// access changes on to `here`; on SQLite there is nothing to listen
    /// to (one server per file, whose viewers follow its runs directly).
    pub fn listen(&self, db: &Db, here: Relayed) -> Option<tokio::task::JoinHandle<()>> {
        let Db::Postgres(pool) = db else {
            return None;
        };
        let (pool, wakeups) = (pool.clone(), self.clone());
        Some(tokio::spawn(async move {
            loop {
                if let Err(error) = wakeups.relay(&pool, &here).await {
                    tracing::warn!(%error, "lost the run events listener; reconnecting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }

    /// Passes what other servers announce on to this server's listeners,
    /// until the connection fails.
    async fn relay(&self, pool: &sqlx::PgPool, here: &Relayed) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([
                EVENTS_CHANNEL,
                CONTROL_CHANNEL,
                QUEUE_CHANNEL,
                ACCESS_CHANNEL,
                NOTICE_CHANNEL,
            ])
            .await?;
        loop {
            let notification = listener.recv().await?;
            let to = match notification.channel() {
                ACCESS_CHANNEL => {
                    here.access.hear(notification.payload());
                    continue;
                }
                NOTICE_CHANNEL => {
                    here.hear_notice(notification.payload());
                    continue;
                }
                CONTROL_CHANNEL => &self.cancels,
                QUEUE_CHANNEL => &self.queued,
                _ => &self.stored,
            };
            // Nobody listening is fine.
            let _ = to.send(Arc::from(notification.payload()));
        }
    }
}
