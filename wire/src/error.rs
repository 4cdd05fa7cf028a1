//! The one error type that crosses between server and caller: server
//! functions, the JSON API and the websocket all answer with it.
//!
//! Server functions return `Result<T, AppError>`, so the browser receives a
//! typed error it can match on (not found, invalid input, ...) instead of a
//! string. Internal failures (the database, I/O) are logged on the server and
//! reach the client only as [`AppError::Internal`] with no details.

use serde::{Deserialize, Serialize};
use server_fn::codec::JsonEncoding;
use server_fn::error::{FromServerFnError, ServerFnErrorErr};

/// What can go wrong in a request, as the user is told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    /// The thing asked for does not exist (or no longer does).
    #[error("{what} was not found")]
    NotFound {
        /// What was looked for, e.g. `graph 3f2a…`.
        what: String,
    },
    /// The request itself was wrong; the message says what and where.
    #[error("{0}")]
    InvalidInput(String),
    /// A save was based on a version that is no longer the newest: someone
    /// else saved in between. Nothing was overwritten.
    #[error(
        "the graph was changed by someone else (you edited version {base_version}, it is now at \
         version {current_version}); nothing was overwritten"
    )]
    Conflict {
        /// The version the save was based on.
        base_version: i64,
        /// The newest stored version.
        current_version: i64,
    },
    /// A call from outside the editor asked for a graph that has no
    /// published version: it runs only what an editor published.
    #[error(
        "graph {graph} has no published version: calls from outside the editor run only the \
         published version; publish one in the editor (the graph bar's Publish button) or with \
         PUT /api/v1/graphs/{graph}/published"
    )]
    NotPublished { graph: String },
    /// The graph has problems that stop what was asked (a run, an import).
    #[error("{message}")]
    InvalidGraph {
        message: String,
        /// Every problem, located.
        problems: Vec<heddle_engine::validate::Problem>,
    },
    /// A version may not go live: the graph's publishing gate refused it
    /// (its experiment scored worse than the live version's, or it has
    /// none); the message says which scorer by how much.
    #[error("{0}")]
    PublishRefused(String),
    /// Something is larger than Heddle accepts; the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// A graph names credentials the user has not saved (an import asks
    /// for them to be bound to the user's own secrets).
    #[error(
        "the graph names credentials you have not saved: {}; save secrets with these names, or \
         bind each name to one of yours",
        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    )]
    MissingCredentials { names: Vec<String> },
    /// Nobody is logged in, and this needs an account.
    #[error("{0}")]
    Unauthorized(String),
    /// The logged-in user may not do this; the message says what is missing.
    #[error("{0}")]
    Forbidden(String),
    /// Too many attempts; the message says when to try again.
    #[error("{0}")]
    TooManyRequests(String),
    /// Too many runs queued or running for one account (or one of its
    /// triggers); try again after `retry_after` seconds, when some ended.
    #[error("{message}")]
    TooManyRuns { message: String, retry_after: u64 },
    /// The server is too busy to do it now (its queue for slow work, such
    /// as password checks, is full); try again after `retry_after` seconds.
    #[error("{message}")]
    Busy { message: String, retry_after: u64 },
    /// The thread is paused, waiting for an answer: a new run on it would
    /// lose the pause. Answer it (`resume`) or start another thread.
    #[error(
        "thread `{thread}` is paused, waiting for an answer: resume it with the answer, or start \
         a run on another thread; nothing was started and the pause is kept"
    )]
    ThreadPaused { thread: String },
    /// The thread has a run queued or running: one run at a time per
    /// thread, so its state is never written by two.
    #[error(
        "thread `{thread}` has a run in progress; wait for it to end or cancel it; nothing was \
         started"
    )]
    ThreadBusy { thread: String },
    /// The thing existed but no longer works (an expired share link).
    #[error("{0}")]
    Gone(String),
    /// The server could not do it; details are in the server's log only.
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// The server could not be reached or its reply could not be read.
    #[error("could not reach the server: {0}")]
    Transport(String),
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            ServerFnErrorErr::Args(message) | ServerFnErrorErr::MissingArg(message) => {
                AppError::InvalidInput(message)
            }
            ServerFnErrorErr::ServerError(_) | ServerFnErrorErr::MiddlewareError(_) => {
                AppError::Internal
            }
            other => AppError::Transport(other.to_string()),
        }
    }
}

impl AppError {
    /// The HTTP status a page or endpoint answers with for this error.
    pub fn status_code(&self) -> u16 {
        match self {
            AppError::NotFound { .. } => 404,
            AppError::InvalidInput(_) => 400,
            AppError::Conflict { .. }
            | AppError::NotPublished { .. }
            | AppError::ThreadPaused { .. }
            | AppError::ThreadBusy { .. }
            | AppError::PublishRefused(_) => 409,
            AppError::TooLarge(_) => 413,
            AppError::InvalidGraph { .. } => 422,
            AppError::MissingCredentials { .. } => 422,
            AppError::Unauthorized(_) => 401,
            AppError::Forbidden(_) => 403,
            AppError::TooManyRequests(_) | AppError::TooManyRuns { .. } => 429,
            AppError::Gone(_) => 410,
            AppError::Busy { .. } => 503,
            AppError::Internal | AppError::Transport(_) => 500,
        }
    }
}

impl AppError {
    /// A short, stable name for the error, for scripts (`not_found`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            AppError::NotFound { .. } => "not_found",
            AppError::InvalidInput(_) => "invalid_input",
            AppError::Conflict { .. } => "conflict",
            AppError::NotPublished { .. } => "not_published",
            AppError::PublishRefused(_) => "publish_refused",
            AppError::InvalidGraph { .. } => "invalid_graph",
            AppError::TooLarge(_) => "too_large",
            AppError::MissingCredentials { .. } => "missing_credentials",
            AppError::Unauthorized(_) => "unauthorized",
            AppError::Forbidden(_) => "forbidden",
            AppError::TooManyRequests(_) | AppError::TooManyRuns { .. } => "too_many_requests",
            AppError::ThreadPaused { .. } => "thread_paused",
            AppError::ThreadBusy { .. } => "thread_busy",
            AppError::Gone(_) => "gone",
            AppError::Busy { .. } => "busy",
            AppError::Internal => "internal",
            AppError::Transport(_) => "transport",
        }
    }

    /// How many seconds to wait before trying again (`Retry-After`), for
    /// errors that say so.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AppError::Busy { retry_after, .. } | AppError::TooManyRuns { retry_after, .. } => {
                Some(*retry_after)
            }
            _ => None,
        }
    }

    /// "Log in first", for a request that needs an account.
    pub fn login_required() -> Self {
        AppError::Unauthorized("log in to do this".into())
    }

    /// "Not found" for `what`.
    pub fn not_found(what: impl Into<String>) -> Self {
        AppError::NotFound { what: what.into() }
    }
}

#[cfg(feature = "sqlx")]
impl From<sqlx::Error> for AppError {
    fn from(error: sqlx::Error) -> Self {
        tracing::error!(%error, "database error");
        AppError::Internal
    }
}
