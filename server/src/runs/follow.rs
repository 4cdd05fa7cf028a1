//! Following one run's event log, from a sequence number to the run's
//! stop: the stored events, then the running execution's backlog and live
//! events with no gap and no duplicate at the seam, or, when the run
//! executes on another server, its stored log read again whenever a server
//! says it stored more. The websocket, the invoke endpoint's server-sent
//! events and its wait for a result all follow runs this one way.

use std::future::Future;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use heddle_engine::RunId;
use heddle_engine::run::Event;
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::Runs;

/// Whoever follows went away: stop.
pub struct Gone;

/// What a run's events are handed to, in order, each once.
pub trait Follower: Send {
    /// The `seq` of the next event it wants.
    fn next(&self) -> u64;

    /// When it must be given a chance to flush what it holds back.
    fn deadline(&self) -> Option<Instant> {
        None
    }

    /// One event; `text` is its websocket message, when already made.
    fn event(
        &mut self,
        event: &Arc<Event>,
        text: Option<&Utf8Bytes>,
    ) -> impl Future<Output = Result<(), Gone>> + Send;

    /// Sends what it holds back.
    fn flush(&mut self) -> impl Future<Output = Result<(), Gone>> + Send {
        async { Ok(()) }
    }

    /// The log so far was handed over; what follows is live.
    fn caught_up(&mut self) -> impl Future<Output = Result<(), Gone>> + Send {
        async { Ok(()) }
    }

    /// The log could not be read.
    fn failed(&mut self, message: &str) -> impl Future<Output = Result<(), Gone>> + Send;
}

/// Hands run `run_id`'s events, from `follower.next()`, to `follower`
/// until the run stops executing (it finished, paused, failed or was
/// cancelled) or the follower goes away.
pub async fn stream<F: Follower>(
    runs: &Runs,
    run_id: &RunId,
    follower: &mut F,
) -> Result<(), Gone> {
    // Subscribe to the live stream before reading the store, so nothing
    // emitted in between is missed.
    let hub = runs.hub(run_id);
    let replay = hub.as_ref().map(|hub| hub.watch(follower.next()));
    let first_live = replay
        .as_ref()
        .and_then(|r| r.first_seq)
        .unwrap_or(u64::MAX);
    if follower.next() < first_live {
        match runs.store().events(&run_id.clone(), follower.next()).await {
            Ok(stored) => {
                for event in stored
                    .into_iter()
                    .take_while(|event| event.seq < first_live)
                {
                    follower.event(&Arc::new(event), None).await?;
                }
            }
            Err(error) => {
                tracing::error!(run = %run_id, %error, "cannot read stored events");
                return follower.failed("cannot read the run's events").await;
            }
        }
    }
    let (Some(hub), Some(mut replay)) = (hub, replay) else {
        // No execution here: the stored log is all there is, unless the
        // run executes on another server; then follow its log.
        if runs
            .status(run_id)
            .await
            .is_ok_and(|status| status.is_active())
        {
            return tail(runs, run_id, follower).await;
        }
        return follower.caught_up().await;
    };
    for frame in &replay.backlog {
        follower.event(&frame.event, Some(&frame.text)).await?;
    }
    follower.caught_up().await?;
    loop {
        let received = match follower.deadline() {
            Some(deadline) => tokio::select! {
                received = replay.live.recv() => received,
                () = tokio::time::sleep_until(deadline) => {
                    follower.flush().await?;
                    continue;
                }
            },
            None => replay.live.recv().await,
        };
        match received {
            Ok(frame) => follower.event(&frame.event, Some(&frame.text)).await?,
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // Fell behind: catch up from the hub, and from the store
                // for what the hub no longer holds.
                let since = hub.since(follower.next());
                let held = since.first_seq.unwrap_or(u64::MAX);
                if follower.next() < held {
                    let from = follower.next();
                    match runs.store().events(&run_id.clone(), from).await {
                        Ok(stored) => {
                            for event in stored.into_iter().take_while(|e| e.seq < held) {
                                follower.event(&Arc::new(event), None).await?;
                            }
                        }
                        Err(error) => {
                            tracing::error!(run = %run_id, %error, "cannot read stored events");
                            return follower.failed("cannot read the run's events").await;
                        }
                    }
                }
                for frame in since.frames {
                    if frame.seq() >= follower.next() {
                        follower.event(&frame.event, Some(&frame.text)).await?;
                    }
                }
            }
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
    follower.flush().await
}

/// Follows a run executing on another server (PostgreSQL): its stored
/// log, read again by sequence number whenever a server says it stored
/// more of it (see [`crate::runs::wake`]), until the run stops.
async fn tail<F: Follower>(runs: &Runs, run_id: &RunId, follower: &mut F) -> Result<(), Gone> {
    let mut wakeups = runs.wakeups();
    let mut caught_up = false;
    loop {
        // The status first: events stored before it ended are read below.
        let active = runs
            .status(run_id)
            .await
            .is_ok_and(|status| status.is_active());
        match runs.store().events(&run_id.clone(), follower.next()).await {
            Ok(stored) => {
                for event in stored {
                    follower.event(&Arc::new(event), None).await?;
                }
            }
            Err(error) => {
                tracing::error!(run = %run_id, %error, "cannot read stored events");
                return follower.failed("cannot read the run's events").await;
            }
        }
        follower.flush().await?;
        if !caught_up {
            caught_up = true;
            follower.caught_up().await?;
        }
        if !active {
            return Ok(());
        }
        let fallback = tokio::time::sleep(crate::runs::wake::FALLBACK);
        tokio::pin!(fallback);
        loop {
            tokio::select! {
                woken = wakeups.recv() => match woken {
                    Ok(id) if &*id == run_id.as_str() => break,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => {
                        (&mut fallback).await;
                        break;
                    }
                },
                () = &mut fallback => break,
            }
        }
    }
}
