//! A fixed set of threads for slow synchronous work, never the async
//! runtime's. User scripts run here: a script is user code from a graph,
//! which may come from anyone who can edit one, and on the runtime's
//! threads an endless loop would stall every page, log-in and run of the
//! server; here it occupies one pool thread until its limits stop it. The
//! server hashes passwords on a pool of its own too: a fixed set of threads
//! also bounds the memory the allocator keeps per thread. Work beyond the
//! pool's threads waits (asynchronously) for a free one, in fair turns
//! between the parties runs are made for ([`crate::fair_share`]): one
//! owner's fan-out of a hundred scripts holds up another owner's script by
//! one turn, not a hundred.
//!
//! Each thread has a large stack ([`STACK_BYTES`]): a script can build
//! values nested deeper than a default thread's 2 MiB can take apart, and a
//! stack overflow is no panic: it aborts the whole process. Only the pages
//! a thread touches are committed, so the reservation costs no memory.
//!
//! A job is given an [`Abort`] flag that is set when the future awaiting
//! the job is dropped (a node timeout, a cancelled run), so the script's
//! progress callback stops it at its next operation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::oneshot;

use crate::fair_share::FairPlaces;

/// Set when nobody waits for a job's result any more: the job should stop.
#[derive(Debug, Clone, Default)]
pub struct Abort(Arc<AtomicBool>);

impl Abort {
    /// Whether the job should stop.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The stack of each pool thread: 256 MiB of address space, of which a
/// script's deepest value (bounded by its operations, time and sizes; see
/// `kinds::script`) uses a small part.
pub const STACK_BYTES: usize = 256 << 20;

/// A bounded pool of threads (for user scripts, password hashing).
pub struct WorkerPool {
    jobs: SyncSender<Job>,
    /// One place per thread: a job is sent only when a thread is free, so
    /// waiting happens here, asynchronously and fairly, not on a thread.
    free: FairPlaces,
    threads: usize,
}

/// Why a job did not run to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// The pool's threads are gone (the process is shutting down).
    #[error("the worker threads have stopped")]
    Stopped,
    /// The job panicked (a bug in the work, e.g. the script engine, not
    /// in a script).
    #[error("the work failed unexpectedly")]
    Panicked,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("threads", &self.threads)
            .finish()
    }
}

impl WorkerPool {
    /// A pool of `threads` threads (at least one).
    pub fn new(threads: usize) -> WorkerPool {
        let threads = threads.max(1);
        let (jobs, queue) = sync_channel::<Job>(threads);
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..threads {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("heddle-worker-{index}"))
                .stack_size(STACK_BYTES)
                .spawn(move || work(&queue));
            if let Err(error) = spawned {
                // Fewer threads than asked still run every job (the
                // permits then wait longer); none at all fail the jobs.
                eprintln!("heddle: cannot start a worker thread: {error}");
            }
        }
        WorkerPool {
            jobs,
            free: FairPlaces::new(threads),
            threads,
        }
    }

    /// The default size: half the machine's cores (at least one), so
    /// scripts never take every core from pages, log-ins and other runs.
    pub fn default_threads() -> usize {
        std::thread::available_parallelism()
            .map(|cores| cores.get() / 2)
            .unwrap_or(1)
            .max(1)
    }

    /// The process-wide pool registries use unless given their own.
    pub fn shared() -> Arc<WorkerPool> {
        static SHARED: OnceLock<Arc<WorkerPool>> = OnceLock::new();
        Arc::clone(SHARED.get_or_init(|| Arc::new(WorkerPool::new(Self::default_threads()))))
    }

    /// How many threads run scripts.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `job` on a pool thread once one is free. Dropping the returned
    /// future sets the job's [`Abort`] flag.
    pub async fn run<T, F>(&self, job: F) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce(&Abort) -> T + Send + 'static,
    {
        let abort = Abort::default();
        let _guard = AbortOnDrop(abort.clone());
        let place = self.free.place().await;
        let (done, result) = oneshot::channel();
        let wrapped: Job = Box::new(move || {
            let value = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&abort)))
                .map_err(|_| PoolError::Panicked);
            // The place goes back when the thread is free again.
            drop(place);
            let _ = done.send(value);
        });
        self.jobs.send(wrapped).map_err(|_| PoolError::Stopped)?;
        result.await.map_err(|_| PoolError::Stopped)?
    }
}

struct AbortOnDrop(Abort);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

fn work(queue: &Mutex<Receiver<Job>>) {
    loop {
        let job = {
            let queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.recv()
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::WorkerPool;

    #[tokio::test]
    async fn jobs_beyond_the_threads_wait_and_dropped_jobs_are_told_to_stop() {
        let pool = WorkerPool::new(1);
        // A job that spins until it is told to stop.
        let spinning = pool.run(|abort| {
            let started = Instant::now();
            while !abort.is_set() && started.elapsed() < Duration::from_secs(10) {
                std::hint::spin_loop();
            }
            abort.is_set()
        });
        // Giving up on it (a timeout) frees the thread for the next job.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), spinning).await;
        assert!(gave_up.is_err());
        let started = Instant::now();
        assert_eq!(pool.run(|_| 7).await, Ok(7));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_flood_of_one_partys_scripts_holds_up_anothers_by_one_turn() {
        use std::sync::{Arc, Mutex};

        use crate::fair_share::on_behalf_of;

        let pool = Arc::new(WorkerPool::new(1));
        let order = Arc::new(Mutex::new(Vec::<&'static str>::new()));
        let job = |who: &'static str, hold: Option<std::sync::mpsc::Receiver<()>>| {
            let (pool, order) = (Arc::clone(&pool), Arc::clone(&order));
            tokio::spawn(on_behalf_of(Arc::from(who), async move {
                pool.run(move |_| {
                    if let Some(hold) = hold {
                        let _ = hold.recv();
                    }
                    order.lock().expect("order").push(who);
                })
                .await
            }))
        };
        // The flood's first script holds the one thread until released.
        let (release, hold) = std::sync::mpsc::channel();
        let mut jobs = vec![job("flood", Some(hold))];
        while pool.free.in_flight() == 0 {
            tokio::task::yield_now().await;
        }
        jobs.extend((0..10).map(|_| job("flood", None)));
        while pool.free.waiting() < 10 {
            tokio::task::yield_now().await;
        }
        jobs.push(job("one", None));
        while pool.free.waiting() < 11 {
            tokio::task::yield_now().await;
        }
        release.send(()).expect("release");
        for job in jobs {
            assert_eq!(job.await.expect("job"), Ok(()));
        }
        let order = order.lock().expect("order").clone();
        assert_eq!(order.len(), 12);
        // The thread freed by the flood's first went to the other party.
        assert_eq!(
            order.iter().position(|who| *who == "one"),
            Some(1),
            "{order:?}"
        );
        assert_eq!(pool.free.in_flight(), 0);
    }

    #[tokio::test]
    async fn a_panicking_job_does_not_take_its_thread() {
        let pool = WorkerPool::new(1);
        let failed = pool.run(|_| -> u8 { panic!("boom") }).await;
        assert_eq!(failed, Err(super::PoolError::Panicked));
        assert_eq!(pool.run(|_| 1).await, Ok(1));
    }
}
