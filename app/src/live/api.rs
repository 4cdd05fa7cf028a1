//! The run calls the page makes, through the app's typed server functions
//! ([`crate::runs`]): start (with an input, on a thread, up to a node),
//! stop, resume a pause, fork from a step, and read a graph's runs and
//! threads and a run's events. A refusal stays typed ([`Refusal`]) until
//! the page says it, so the page can say more than the message: which
//! nodes stop a run, when to try again.

use heddle_engine::ids::{RunId, ThreadId};
use serde_json::Value;

use crate::editor::persist::Persistence;
use crate::error::AppError;
use crate::runs::{ForkRequest, RunInfo, StartRequest, ThreadInfo, ThreadView};

/// Why a run call did nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The server refused it, as it said.
    #[error(transparent)]
    Server(#[from] AppError),
    /// The editor's edits could not be saved first, so nothing was asked
    /// (a conflict, a failed save); the message says why.
    #[error("{0}")]
    NotSaved(String),
}

/// How many of a graph's problems a refusal names.
const PROBLEMS_NAMED: usize = 3;

impl Refusal {
    /// What the page says: the problems that stop a run, each by its
    /// node's label (`label` gives it; the id when it has none); when to
    /// try again after too many runs; otherwise the message.
    pub fn explain(&self, label: impl Fn(&str) -> Option<String>) -> String {
        match self {
            Refusal::Server(AppError::InvalidGraph { message, problems })
                if !problems.is_empty() =>
            {
                let named: Vec<String> = problems
                    .iter()
                    .take(PROBLEMS_NAMED)
                    .map(|problem| match &problem.node {
                        Some(node) => format!(
                            "{}: {}",
                            label(node.as_str()).unwrap_or_else(|| node.to_string()),
                            problem.message
                        ),
                        None => problem.message.clone(),
                    })
                    .collect();
                let more = problems.len().saturating_sub(PROBLEMS_NAMED);
                let more = if more > 0 {
                    format!(" (and {more} more: see Problems)")
                } else {
                    String::new()
                };
                format!("{message}: {}{more}", named.join("; "))
            }
            Refusal::Server(AppError::TooManyRuns {
                message,
                retry_after,
            }) => format!("{message} (try again in {retry_after} s)"),
            other => other.to_string(),
        }
    }
}

/// Starts a run of the graph as the editor shows it: edits not saved yet
/// are saved first, and the run names that very version. When the save
/// fails (a conflict, the server unreachable), nothing starts and the
/// message says why. `shown` is the page's [`Persistence`]; without one
/// (a page that edits nothing) the newest version runs.
pub async fn start_run(
    graph_id: &str,
    shown: Option<Persistence>,
    mut request: StartRequest,
) -> Result<RunInfo, Refusal> {
    if let Some(shown) = shown {
        request.graph_version = Some(shown.saved_version().await.map_err(Refusal::NotSaved)?);
    }
    crate::runs::start_run(graph_id.to_string(), request)
        .await
        .map_err(Refusal::from)
}

/// Stops a run.
pub async fn cancel_run(run_id: &RunId) -> Result<(), Refusal> {
    crate::runs::cancel_run(run_id.clone())
        .await
        .map(drop)
        .map_err(Refusal::from)
}

/// Answers a paused thread.
pub async fn resume(thread_id: &ThreadId, value: Value) -> Result<(), Refusal> {
    crate::runs::resume_thread(thread_id.clone(), value)
        .await
        .map(drop)
        .map_err(Refusal::from)
}

/// Forks a run before `step` with `edits`, at `start_at` when given.
pub async fn fork(
    run_id: &RunId,
    step: u32,
    edits: serde_json::Map<String, Value>,
    start_at: Option<String>,
) -> Result<RunInfo, Refusal> {
    let request = ForkRequest {
        step,
        edits,
        start_at,
    };
    crate::runs::fork_run(run_id.clone(), request)
        .await
        .map_err(Refusal::from)
}

/// A run's record (its thread, status, output).
pub async fn run(run_id: &RunId) -> Result<RunInfo, Refusal> {
    crate::runs::get_run(run_id.clone())
        .await
        .map_err(Refusal::from)
}

/// The graph's threads, newest first.
pub async fn threads(graph_id: &str) -> Result<Vec<ThreadInfo>, Refusal> {
    crate::runs::list_threads(graph_id.to_string())
        .await
        .map_err(Refusal::from)
}

/// A thread with its newest state.
pub async fn thread(thread_id: &ThreadId) -> Result<ThreadView, Refusal> {
    crate::runs::get_thread(thread_id.clone())
        .await
        .map_err(Refusal::from)
}

/// The graph's runs, newest first (the 50 newest).
pub async fn runs(graph_id: &str) -> Result<Vec<RunInfo>, Refusal> {
    crate::runs::list_runs(graph_id.to_string())
        .await
        .map_err(Refusal::from)
}

/// A run's events, in order, with the state its first event builds on.
pub async fn log(run_id: &RunId) -> Result<super::RunLog, Refusal> {
    let events = crate::runs::run_events(run_id.clone(), 0)
        .await
        .map_err(Refusal::from)?;
    let mut log = super::RunLog::new(run_id);
    for event in events {
        log.push(event);
    }
    if let Some(checkpoint) = log.base_checkpoint() {
        log.base = crate::runs::run_base(run_id.clone(), checkpoint)
            .await
            .map_err(Refusal::from)?;
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use heddle_engine::NodeId;
    use heddle_engine::validate::{Problem, ProblemKind, Severity};

    use super::*;

    fn problem(node: Option<&str>, message: &str) -> Problem {
        Problem {
            severity: Severity::Error,
            path: String::new(),
            node: node.map(NodeId::from),
            edge: None,
            kind: ProblemKind::UnknownKind {
                kind: "x".to_string(),
            },
            message: message.to_string(),
            fix: None,
        }
    }

    #[test]
    fn a_refused_start_names_the_problems_by_their_nodes_labels() {
        let refusal = Refusal::from(AppError::InvalidGraph {
            message: "the graph has 5 problems that stop it from running".into(),
            problems: vec![
                problem(Some("llm_2"), "`messages` is not a channel"),
                problem(None, "no entry"),
                problem(Some("plain"), "no model"),
                problem(Some("llm_2"), "a fourth"),
                problem(Some("llm_2"), "a fifth"),
            ],
        });
        let said = refusal.explain(|node| (node == "llm_2").then(|| "Writer".to_string()));
        assert_eq!(
            said,
            "the graph has 5 problems that stop it from running: Writer: `messages` is not a \
             channel; no entry; plain: no model (and 2 more: see Problems)"
        );
    }

    #[test]
    fn too_many_runs_says_when_to_try_again_and_others_say_their_message() {
        let refusal = Refusal::from(AppError::TooManyRuns {
            message: "you have 4 runs queued or running".into(),
            retry_after: 5,
        });
        assert_eq!(
            refusal.explain(|_| None),
            "you have 4 runs queued or running (try again in 5 s)"
        );
        let refusal = Refusal::NotSaved("Not started: the graph could not be saved".into());
        assert_eq!(
            refusal.explain(|_| None),
            "Not started: the graph could not be saved"
        );
        let refusal = Refusal::from(AppError::Forbidden("viewers cannot run".into()));
        assert_eq!(refusal.explain(|_| None), "viewers cannot run");
    }
}
