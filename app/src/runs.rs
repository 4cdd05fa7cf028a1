//! A graph's past and present runs, as the run history lists them: status,
//! who started it, when, and how long it took. Opening one replays it on
//! the canvas from its stored events.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// One run in the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: String,
    pub status: String,
    pub started_by: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

impl RunSummary {
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
pub async fn list_runs(graph_id: String) -> Result<Vec<RunSummary>, AppError> {
    use crate::http_status::with_error_status;
    let pool = crate::graphs::ssr::pool()?;
    let caller = crate::accounts::ssr::caller();
    let allowed = with_error_status(
        crate::access::ssr::require(
            &pool,
            caller.as_ref(),
            &graph_id,
            crate::access::Role::Viewer,
        )
        .await,
    )?;
    /// id, status, who, created, started, finished
    type Row = (
        String,
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT r.id, r.status, u.username, r.created_at, r.started_at, r.finished_at
         FROM runs r LEFT JOIN users u ON u.id = r.user_id
         WHERE r.graph_id = ? ORDER BY r.created_at DESC, r.rowid DESC LIMIT 50",
    )
    .bind(allowed.graph().as_str())
    .fetch_all(&pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, status, started_by, created_at, started_at, finished_at)| RunSummary {
                id,
                status,
                started_by,
                created_at,
                started_at,
                finished_at,
            },
        )
        .collect())
}

#[cfg(test)]
mod tests {
    use super::RunSummary;

    #[test]
    fn durations_read_as_people_say_them() {
        let run = |start: &str, end: &str| RunSummary {
            id: "r".into(),
            status: "finished".into(),
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
