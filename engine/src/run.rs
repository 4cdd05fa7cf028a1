//! Running a compiled graph: the super-step executor, the event stream a
//! run emits, cancellation and retries.
//!
//! ```
//! use std::sync::Arc;
//! use heddle_engine::{CompiledGraph, Registry, RunId};
//! use heddle_engine::run::{Run, RunOptions};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let graph = CompiledGraph::from_json(r#"{
//!     "format_version": 2, "name": "hello",
//!     "state": {"channels": {"name": {"type": "string"}, "greeting": {"type": "string"}}},
//!     "nodes": [
//!         {"id": "start", "kind": "start"},
//!         {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{name}}!"}}}}
//!     ],
//!     "edges": [{"id": "e1", "from": "start", "to": "greet"}]
//! }"#, &Registry::new()).unwrap();
//!
//! let run = Run::new(Arc::new(graph), RunId::from("run-1"), json!({"name": "Ada"}), RunOptions::default());
//! let output = run.execute().await.unwrap();
//! assert_eq!(output.state["greeting"], "Hello, Ada!");
//! # });
//! ```

//! Without the `runtime` feature (the browser build) only the data a run
//! produces is here: its events and checkpoints, for views of a run.

#[cfg(feature = "runtime")]
mod cancel;
mod checkpoint;
mod child;
#[cfg(feature = "runtime")]
mod durable;
#[cfg(feature = "runtime")]
mod emitter;
#[cfg(feature = "runtime")]
mod error;
mod event;
#[cfg(feature = "runtime")]
mod executor;

mod input_ids;
#[cfg(feature = "runtime")]
mod persist;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod prune;
#[cfg(feature = "runtime")]
pub(crate) mod retry;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "runtime")]
mod store;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored_events;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored_state;
#[cfg(feature = "runtime")]
pub mod worker_pool;

#[cfg(feature = "runtime")]
pub use cancel::CancelHandle;
pub use checkpoint::{
    Checkpoint, CheckpointSummary, CompletedTask, Interrupt, InterruptWhen, PendingTask, RunStatus,
    ThreadSummary,
};
#[cfg(feature = "runtime")]
pub use durable::{Durable, DurableError, Fork};
#[cfg(feature = "runtime")]
pub use emitter::{EventLog, EventSink, Lagged, Subscription};
#[cfg(feature = "runtime")]
pub use error::RunError;
pub use event::{EdgeReason, Event, EventPayload, Hop, TaskRef};
#[cfg(feature = "runtime")]
pub use executor::{ActiveTime, Run, RunOptions, RunOutput};
pub use input_ids::run_of_input_message;
#[cfg(feature = "runtime")]
pub use persist::Durability;
#[cfg(feature = "runtime")]
pub use store::{
    CheckpointPin, CheckpointStore, MemoryStore, Pruned, RunRecord, StoreError, StoreFuture,
};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use stored_state::Written;
#[cfg(feature = "runtime")]
pub use worker_pool::WorkerPool;
