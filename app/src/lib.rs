//! Heddle's Leptos application: the routes, pages, components and server
//! functions shared by the server (feature `ssr`) and the browser (feature
//! `hydrate`).
//!
//! # Layout
//! - [`shell`]: the HTML document and the router: which URL shows which page.
//! - [`pages`]: one module per page (home, graph, not found).
//! - [`editor`]: the visual graph editor.
//! - [`catalog`]: the tools and models this server offers graphs.
//! - [`components`]: pieces the pages share (header, error view, ...).
//! - [`graphs`]: graphs as the app sees them, their rows and server functions.
//! - [`examples`]: the examples gallery.
//! - [`accounts`]: log-in, sign-up, sessions and who is calling.
//! - [`access`]: roles on graphs and the checks every request makes.
//! - [`api_keys`]: keys that call published graphs from outside.
//! - [`sharing`]: members and share links.
//! - [`schedules`]: cron schedules that run a graph's published version.
//! - [`secrets`]: per-user credentials that graphs name.
//! - [`datasets`]: examples to evaluate a graph on, made from its runs.
//! - [`experiments`]: a graph version run over a dataset, scored.
//! - [`evaluations`]: the graph page's experiments: start, follow, compare.
//! - [`webhooks`]: secret URLs that run a graph's published version.
//! - [`widgets`]: chat bubbles for a published chat graph on other sites.
//! - [`session`]: the app-wide "who is logged in" resource.
//! - `request` (server only): the database, caller and settings a server
//!   function takes from its request's context.
//! - [`error`]: the typed error every server function returns.
//! - [`http_status`]: sets the response status during server rendering.
//! - [`limits`]: how big a graph and a run's input may be.
//! - [`live`]: a watched run's state, fed by the websocket.
//! - [`runs`]: a graph's run history.

#![recursion_limit = "256"]

pub mod accounts;
pub mod api_keys;
pub mod catalog;
pub mod components;
pub mod datasets;
pub mod editor;
pub mod evaluations;
pub mod examples;
pub mod experiments;
pub mod graphs;
pub mod http_status;
pub mod live;
pub mod pages;
pub mod publishing;
#[cfg(feature = "ssr")]
pub mod request;
pub mod run_panel;
pub mod runs;
pub mod schedules;
pub mod secrets;
pub mod session;
pub mod sharing;
pub mod shell;
pub mod webhooks;
pub mod widgets;

pub use shell::{App, shell};

// The wire types under the names the UI has always used for them.
pub use heddle_wire::{access, error, limits};
