//! Heddle's store: everything the server keeps in its database and how
//! servers sharing one database coordinate. One module per group of
//! tables, and only that module writes SQL against them; the engine's own
//! `heddle_*` tables are the engine's, reached through its store trait.
//!
//! Callers pass what they know (the database, the caller, the settings):
//! nothing here reads a web framework's request context. The app's server
//! functions and the server's handlers both call in; this crate calls
//! neither.
//!
//! # Layout
//! - [`db`]: the pool, SQLite or PostgreSQL, and [`on_db!`], which runs one
//!   query on either; timestamps as stored.
//! - [`caller`]: who is asking (a session's user or an API key).
//! - [`access`]: the access decisions and their proof types ([`access::Allowed`],
//!   [`access::OnRun`], ...): no data is loaded for a caller without one;
//!   [`access_events`]: the signal that access changed.
//! - [`accounts`]: users, sessions, log-in throttling, password hashes.
//! - [`api_keys`], [`sharing`], [`secrets`]: keys, members and links, and
//!   encrypted credentials.
//! - [`graphs`], [`publishing`], [`examples`]: graphs, their versions, the
//!   live version, the embedded examples.
//! - [`runs`]: the runs ledger: run records, the queue, leases, fencing and
//!   the notification channels between servers.
//! - [`schedules`], [`webhooks`], [`widgets`]: the triggers.
//! - [`datasets`]: evaluation examples, versioned.
//! - [`experiments`]: a graph version run over a dataset version, scored.

pub mod access;
pub mod access_events;
pub mod accounts;
pub mod api_keys;
pub mod caller;
pub mod datasets;
pub mod db;
pub mod examples;
pub mod experiments;
pub mod graphs;
pub mod publishing;
pub mod runs;
pub mod schedules;
pub mod secrets;
pub mod sharing;
pub mod webhooks;
pub mod widgets;
