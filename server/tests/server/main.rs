//! The server's integration tests, in one binary: real SQLite files in
//! temporary directories, the real router served on a free loopback port,
//! and a real HTTP client; `startup` runs the real `heddle` binary.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod support;

mod access;
mod api_graphs;
mod api_keys;
mod api_runs;
mod cli;
mod cluster;
mod crash;
mod database;
mod datasets;
mod eval;
mod experiments;
mod fair_share;
mod graphs_api;
mod hostile;
mod invoke;
mod live;
mod migrate;
mod nginx;
mod openai_client;
mod openapi;
mod pages;
mod publishing;
mod quarantine;
mod recovery;
mod replicas;
mod retention;
mod sessions;
mod startup;
mod subgraphs;
mod telemetry;
mod triggers;
mod trust;
mod usage;
mod widget;
