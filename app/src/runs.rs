//! Runs and threads as the app shows them: a graph's past and present runs (status,
//! who started it, when, how long it took) and its conversations. Opening a run replays it on
//! the canvas from its stored events.

#[cfg(feature = "ssr")]
pub mod ssr;

use heddle_engine::run::RunStatus;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::AppError;

/// A run: the graph version it runs, its thread, input, where it stands
/// and what came of it. The run history, the API and the run manager all
/// use this one type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    pub graph_id: String,
    pub graph_version: i64,
    pub thread_id: String,
    pub status: RunStatus,
    pub input: Value,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Who started it (`None` for runs from before accounts).
    pub started_by: Option<String>,
}

/// A thread (a conversation) of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadInfo {
    pub id: String,
    pub graph_id: String,
    pub created_at: String,
    pub updated_at: String,
    /// How many runs it has had.
    pub runs: i64,
    /// Where its newest run stands.
    pub last_status: Option<RunStatus>,
}

impl RunInfo {
    /// How long it ran, from its ISO-8601 start and end, as people say it.
    pub fn duration(&self) -> Option<String> {
        let seconds = |iso: &str| -> Option<f64> {
            let time = iso.get(11..23)?;
            let (h, rest) = time.split_once(':')?;
            let (m, s) = rest.split_once(':')?;
            Some(
                h.parse::<f64>().ok()? * 3600.0
                    + m.parse::<f64>().ok()? * 60.0
                    + s.parse::<f64>().ok()?,
            )
        };
        let start = seconds(self.started_at.as_deref()?)?;
        let end = seconds(self.finished_at.as_deref()?)?;
        let same_day =
            self.started_at.as_deref()?.get(0..10) == self.finished_at.as_deref()?.get(0..10);
        let took = end - start;
        if !same_day || took < 0.0 {
            return None;
        }
        Some(if took < 1.0 {
            format!("{:.0} ms", took * 1000.0)
        } else if took < 60.0 {
            format!("{took:.1} s")
        } else {
            format!("{:.0} min", took / 60.0)
        })
    }
}

/// The graph's runs, newest first (at most 50).
#[server(endpoint = "list_runs")]
pub async fn list_runs(graph_id: String) -> Result<Vec<RunInfo>, AppError> {
    use crate::http_status::with_error_status;
    let db = crate::db::from_context()?;
    let caller = crate::accounts::ssr::caller();
    let allowed = with_error_status(
        crate::access::ssr::require(&db, caller.as_ref(), &graph_id, crate::access::Role::Viewer)
            .await,
    )?;
    with_error_status(ssr::list(&db, &allowed, 50).await)
}

#[cfg(test)]
mod tests {
    use heddle_engine::run::RunStatus;
    use serde_json::Value;

    use super::RunInfo;

    #[test]
    fn durations_read_as_people_say_them() {
        let run = |start: &str, end: &str| RunInfo {
            id: "r".into(),
            graph_id: "g".into(),
            graph_version: 1,
            thread_id: "t".into(),
            status: RunStatus::Finished,
            input: Value::Null,
            output: None,
            error: None,
            started_by: None,
            created_at: start.into(),
            started_at: Some(start.into()),
            finished_at: Some(end.into()),
        };
        assert_eq!(
            run("2026-11-21T10:00:00.000Z", "2026-11-21T10:00:00.250Z")
                .duration()
                .as_deref(),
            Some("250 ms")
        );
        assert_eq!(
            run("2026-11-21T10:00:00.000Z", "2026-11-21T10:00:01.500Z")
                .duration()
                .as_deref(),
            Some("1.5 s")
        );
        assert_eq!(
            run("2026-11-21T10:00:00.000Z", "2026-11-21T10:05:00.000Z")
                .duration()
                .as_deref(),
            Some("5 min")
        );
    }
}
