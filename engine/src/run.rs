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

mod cancel;
mod checkpoint;
mod durable;
mod emitter;
mod error;
mod event;
mod executor;
mod persist;
mod retry;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod store;

pub use cancel::CancelHandle;
pub use checkpoint::{
    Checkpoint, CheckpointSummary, CompletedTask, Interrupt, InterruptWhen, PendingTask, RunStatus,
    ThreadSummary,
};
pub use durable::{Durable, DurableError};
pub use emitter::{EventLog, EventSink, Lagged, Subscription};
pub use error::RunError;
pub use event::{EdgeReason, Event, EventPayload, TaskRef};
pub use executor::{Run, RunOptions, RunOutput};
pub use persist::Durability;
pub use store::{CheckpointStore, MemoryStore, RunRecord, StoreError, StoreFuture};
