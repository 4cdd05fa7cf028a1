//! What keeps log-in standing under attack: rate limits per client address
//! and per account, taken *before* a password is checked (so concurrent
//! guesses cannot race past them and a success resets nothing), and a
//! bounded queue for password hashing, which costs 19 MiB and tens of
//! milliseconds each: beyond the queue a log-in is refused with 503 and
//! `Retry-After` instead of piling up memory.
//!
//! The limits are kept in the database (`shared_limit`), so they hold
//! across every server on it: behind a load balancer an attacker does not
//! get one budget per server. Hashes run on two threads of their own (a
//! [`WorkerPool`]), each reusing its own argon2 memory (`password`):
//! tokio's blocking pool spread them over dozens of threads whose
//! allocator arenas each kept 19 MiB blocks.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use heddle_engine::run::WorkerPool;

use super::shared_limit::{Limit, take};
use crate::db::Db;
use heddle_wire::AppError;

/// Log-in attempts one account may take: a burst of this many, then one
/// more every [`ACCOUNT_REFILL_SECS`] seconds.
pub const ACCOUNT_BURST: u32 = 5;
pub const ACCOUNT_REFILL_SECS: u64 = 12;
/// Log-in attempts one client address may take: a burst of this many,
/// then one more every [`ADDRESS_REFILL_SECS`] seconds.
pub const ADDRESS_BURST: u32 = 10;
pub const ADDRESS_REFILL_SECS: u64 = 6;
/// Password hashes computed at once.
pub const HASH_WORKERS: usize = 2;
/// Password checks that may wait for a worker (about a second of work on
/// two cores); more are refused (503). Waiting costs almost nothing: the
/// 19 MiB of a hash is taken only by the two that run.
pub const HASH_QUEUE: usize = 64;

/// The log-in limits and the hashing queue of one server.
pub struct LoginGuard {
    hashing: WorkerPool,
    waiting: AtomicUsize,
}

impl Default for LoginGuard {
    fn default() -> Self {
        LoginGuard {
            hashing: WorkerPool::new(HASH_WORKERS),
            waiting: AtomicUsize::new(0),
        }
    }
}

/// The limit on one client address.
const PER_ADDRESS: Limit = Limit {
    burst: ADDRESS_BURST,
    refill: Duration::from_secs(ADDRESS_REFILL_SECS),
};
/// The limit on one account.
const PER_ACCOUNT: Limit = Limit {
    burst: ACCOUNT_BURST,
    refill: Duration::from_secs(ACCOUNT_REFILL_SECS),
};

impl LoginGuard {
    /// Takes one log-in attempt for `address` (when known) and the account
    /// `key` (a normalised username), or says when to try again.
    pub async fn attempt(
        &self,
        db: &Db,
        address: Option<IpAddr>,
        key: &str,
    ) -> Result<(), AppError> {
        // The address first: a client over its limit does not even make
        // an entry for the names it sprays.
        if let Some(address) = address
            && let Err(wait) = take(db, &format!("login address {address}"), PER_ADDRESS).await?
        {
            return Err(AppError::TooManyRequests(format!(
                "too many log-in attempts from your address; try again in {} s",
                wait.as_secs().max(1)
            )));
        }
        if let Err(wait) = take(db, &format!("login account {key}"), PER_ACCOUNT).await? {
            return Err(AppError::TooManyRequests(format!(
                "too many log-in attempts for this username; try again in {} s",
                wait.as_secs().max(1)
            )));
        }
        Ok(())
    }

    /// Runs `work` (a password hash or check) on a hashing thread once one
    /// is free; refuses at once when the queue is full.
    pub async fn hash<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let queued = self.waiting.fetch_add(1, Ordering::AcqRel);
        let _leave = Leave(&self.waiting);
        if queued >= HASH_QUEUE + HASH_WORKERS {
            return Err(AppError::Busy {
                message:
                    "the server is checking too many passwords right now; try again in a moment"
                        .into(),
                retry_after: 1,
            });
        }
        self.hashing.run(move |_| work()).await.map_err(|error| {
            tracing::error!(%error, "a password hashing task failed");
            AppError::Internal
        })
    }
}

/// Leaves the hashing queue when the log-in is done (or given up).
struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
