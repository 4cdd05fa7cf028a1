//! Schedules: a graph's published version run at the times a cron
//! expression names, in a time zone, with a fixed input. Several servers
//! on one database fire each time exactly once; times missed while no
//! server ran are skipped or run once, as the schedule says. A schedule
//! acts with its maker's access, checked every time it fires.

use crate::graphs::GraphId;
use heddle_engine::ids::RunId;
use heddle_engine::named_enum;
use serde::{Deserialize, Serialize};
use serde_json::Value;

named_enum! {
    /// What to do with times missed while no server was running.
    #[derive(
        Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
    )]
    pub enum Missed {
        /// Leave them: the schedule goes on at its next time.
        #[default]
        Skip = "skip",
        /// Run once for all of them, as soon as a server is back.
        RunOnce = "run_once",
    }
}

/// How a schedule is set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSettings {
    /// What it is for, e.g. `Morning digest`: 1 to 64 characters.
    pub name: String,
    /// When: five fields (`minute hour day month weekday`, e.g.
    /// `0 9 * * MON-FRI`), or six with seconds first.
    pub cron: String,
    /// The IANA time zone the times are in (`Europe/Paris`); `UTC` by
    /// default.
    #[serde(default = "utc")]
    pub timezone: String,
    /// The input every run gets: channel values.
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub missed: Missed,
    #[serde(default = "enabled")]
    pub enabled: bool,
}

fn utc() -> String {
    "UTC".into()
}

fn enabled() -> bool {
    true
}

/// A schedule as listed, with its next times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Schedule {
    pub id: String,
    pub graph_id: GraphId,
    pub name: String,
    pub cron: String,
    pub timezone: String,
    pub input: Value,
    pub missed: Missed,
    pub enabled: bool,
    /// The next time it fires, UTC (as every timestamp).
    pub next_at: String,
    /// Its next five times in its time zone, as people read them
    /// (`Mon 2026-11-23 09:00 CET`).
    pub upcoming: Vec<String>,
    /// Who made it: its runs are theirs.
    pub created_by: Option<String>,
    pub created_at: String,
    /// The last time it fired, and the run it started.
    pub last_fired_at: Option<String>,
    pub last_run_id: Option<RunId>,
    /// Why the last time started no run (a missed time skipped, the graph
    /// not published, ...).
    pub last_error: Option<String>,
}
