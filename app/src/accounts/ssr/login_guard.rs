//! What keeps log-in standing under attack: rate limits per client address
//! and per account, taken *before* a password is checked (so concurrent
//! guesses cannot race past them and a success resets nothing), and a
//! bounded queue for password hashing, which costs 19 MiB and tens of
//! milliseconds each: beyond the queue a log-in is refused with 503 and
//! `Retry-After` instead of piling up memory.
//!
//! The limiters are governor's keyed GCRA limiters; their tables are swept
//! of idle keys as they grow, never cleared wholesale. Hashes run on two
//! threads of their own (a [`WorkerPool`]), each reusing its own argon2
//! memory (`password`): tokio's blocking pool spread them over dozens of
//! threads whose allocator arenas each kept 19 MiB blocks.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use heddle_engine::run::WorkerPool;

use crate::error::AppError;

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

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
    accounts: Keyed<String>,
    addresses: Keyed<IpAddr>,
    checks: AtomicU64,
    hashing: WorkerPool,
    waiting: AtomicUsize,
}

impl Default for LoginGuard {
    fn default() -> Self {
        LoginGuard {
            accounts: RateLimiter::keyed(quota(ACCOUNT_BURST, ACCOUNT_REFILL_SECS)),
            addresses: RateLimiter::keyed(quota(ADDRESS_BURST, ADDRESS_REFILL_SECS)),
            checks: AtomicU64::new(0),
            hashing: WorkerPool::new(HASH_WORKERS),
            waiting: AtomicUsize::new(0),
        }
    }
}

fn quota(burst: u32, refill_secs: u64) -> Quota {
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(std::time::Duration::from_secs(refill_secs))
        .unwrap_or_else(|| Quota::per_minute(burst))
        .allow_burst(burst)
}

impl LoginGuard {
    /// Takes one log-in attempt for `address` (when known) and the account
    /// `key` (a normalised username), or says when to try again.
    pub fn attempt(&self, address: Option<IpAddr>, key: &str) -> Result<(), AppError> {
        self.sweep();
        let clock = DefaultClock::default();
        // The address first: a client over its limit does not even make
        // an entry for the names it sprays.
        if let Some(address) = address
            && let Err(not_until) = self.addresses.check_key(&address)
        {
            let wait = not_until.wait_time_from(clock.now()).as_secs().max(1);
            return Err(AppError::TooManyRequests(format!(
                "too many log-in attempts from your address; try again in {wait} s"
            )));
        }
        if let Err(not_until) = self.accounts.check_key(&key.to_string()) {
            let wait = not_until.wait_time_from(clock.now()).as_secs().max(1);
            return Err(AppError::TooManyRequests(format!(
                "too many log-in attempts for this username; try again in {wait} s"
            )));
        }
        Ok(())
    }

    /// Forgets keys whose limits have fully recovered, every few thousand
    /// attempts, so the tables hold only recent attempts.
    fn sweep(&self) {
        if self.checks.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
            self.accounts.retain_recent();
            self.accounts.shrink_to_fit();
            self.addresses.retain_recent();
            self.addresses.shrink_to_fit();
        }
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

#[cfg(test)]
mod tests {
    use super::{ACCOUNT_BURST, ADDRESS_BURST, LoginGuard};
    use crate::error::AppError;

    #[test]
    fn each_attempt_counts_per_account_and_per_address() {
        let guard = LoginGuard::default();
        let here = Some("192.0.2.1".parse().unwrap());
        for _ in 0..ACCOUNT_BURST {
            assert!(guard.attempt(here, "kim").is_ok());
        }
        assert!(matches!(
            guard.attempt(here, "kim"),
            Err(AppError::TooManyRequests(_))
        ));
        // Another account from the same address goes on until the
        // address's own limit.
        let mut allowed = 0;
        for n in 0..ADDRESS_BURST {
            if guard.attempt(here, &format!("user{n}")).is_ok() {
                allowed += 1;
            }
        }
        assert_eq!(allowed, ADDRESS_BURST - ACCOUNT_BURST - 1);
        let elsewhere = Some("192.0.2.2".parse().unwrap());
        assert!(guard.attempt(elsewhere, "ada").is_ok());
    }
}
