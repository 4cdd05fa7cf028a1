//! Recorded replies: every model and tool reply of some runs kept, and
//! given back to later runs that make the same calls, so an evaluation
//! runs again deterministically, offline and free (tools too: clocks and
//! HTTP answer differently each time).
//!
//! A [`Recording`] wraps a [`Registry`]'s models and tools
//! ([`Recording::wrap`]). A call whose canonical request (see
//! [`key`](self::key)) has a recorded reply not yet given back gets it,
//! streamed as it first streamed, with the same tool-call ids; any other
//! call goes to the real model or tool, and its reply is recorded. What a
//! recording holds is read from and written as JSON lines
//! ([`Recording::read`], [`Recording::write`]): one line per call, in the
//! order they were made.
//!
//! Only successes are recorded: a model error or a tool's transient
//! failure is not an answer worth replaying, and a tool that paused for a
//! person pauses again.

mod key;
mod line;
mod model;
mod tool;

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::Registry;
use crate::model::SharedModel;
use crate::tools::Tool;

pub use line::Line;

/// The longest line a recording may hold (a reply and its stream).
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// The most calls a recording may hold.
pub const MAX_CALLS: usize = 1_000_000;

/// Replies to give back, and the calls made so far.
#[derive(Clone, Default)]
pub struct Recording {
    book: Arc<Book>,
}

#[derive(Default)]
struct Book {
    /// A call with no recorded reply fails rather than going live.
    replay_only: bool,
    /// Replies not yet given back, by key, in the order they were recorded.
    waiting: Mutex<HashMap<String, VecDeque<Line>>>,
    /// Every call made through this recording, replayed or not.
    made: Mutex<Vec<Line>>,
    replayed: AtomicU64,
    live: AtomicU64,
}

/// How many calls were answered from the recording and how many went to
/// the real model or tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub replayed: u64,
    pub live: u64,
}

/// Why a recording could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error("more than {MAX_CALLS} calls")]
    TooMany,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Recording {
    /// Nothing to give back: every call is made and recorded.
    pub fn new() -> Self {
        Recording::default()
    }

    /// The replies in `reader` (JSON lines, as [`Recording::write`] writes
    /// them), to be given back.
    pub fn read(mut reader: impl BufRead) -> Result<Self, RecordingError> {
        let mut waiting: HashMap<String, VecDeque<Line>> = HashMap::new();
        let mut count = 0usize;
        let mut buffer = Vec::new();
        for number in 1.. {
            buffer.clear();
            // One byte over the limit is enough to know a line is too long.
            let read = std::io::Read::take(&mut reader, MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buffer)?;
            if read == 0 {
                break;
            }
            if buffer.len() > MAX_LINE_BYTES {
                return Err(RecordingError::Line {
                    line: number,
                    message: format!("longer than {MAX_LINE_BYTES} bytes"),
                });
            }
            if buffer.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line: Line =
                serde_json::from_slice(&buffer).map_err(|error| RecordingError::Line {
                    line: number,
                    message: error.to_string(),
                })?;
            count += 1;
            if count > MAX_CALLS {
                return Err(RecordingError::TooMany);
            }
            waiting
                .entry(line.key().to_string())
                .or_default()
                .push_back(line);
        }
        Ok(Recording {
            book: Arc::new(Book {
                waiting: Mutex::new(waiting),
                ..Book::default()
            }),
        })
    }

    /// The same recording, but a call it holds no reply for fails (the
    /// model with [`crate::model::ModelError::Refused`], the tool with a
    /// [`ToolError`](crate::tools::ToolError) the model reads) instead of
    /// reaching the real model or tool: runs that must be offline and free.
    /// Call it before [`Recording::wrap`], on a recording just read.
    pub fn replay_only(self) -> Self {
        let book = match Arc::try_unwrap(self.book) {
            Ok(book) => book,
            Err(shared) => Book {
                waiting: Mutex::new(lock(&shared.waiting).clone()),
                made: Mutex::new(lock(&shared.made).clone()),
                ..Book::default()
            },
        };
        Recording {
            book: Arc::new(Book {
                replay_only: true,
                ..book
            }),
        }
    }

    /// Every call made through this recording so far (replayed ones too,
    /// so what is written replays the same runs), one JSON line each.
    pub fn write(&self, mut writer: impl Write) -> Result<(), RecordingError> {
        let made = lock(&self.book.made).clone();
        for line in &made {
            serde_json::to_writer(&mut writer, line).map_err(std::io::Error::from)?;
            writer.write_all(b"\n")?;
        }
        writer.flush()?;
        Ok(())
    }

    /// The calls answered so far, by where their answer came from.
    pub fn counts(&self) -> Counts {
        Counts {
            replayed: self.book.replayed.load(Ordering::Relaxed),
            live: self.book.live.load(Ordering::Relaxed),
        }
    }

    /// `registry` with its models and tools answering through this
    /// recording. Compile graphs with the registry this returns.
    pub fn wrap(&self, registry: Registry) -> Registry {
        let book = Arc::clone(&self.book);
        let tools_book = Arc::clone(&self.book);
        registry.map_calls(
            Arc::new(move |inner: SharedModel| -> SharedModel {
                Arc::new(model::RecordedModel::new(inner, Arc::clone(&book)))
            }),
            &move |inner: Arc<dyn Tool>| -> Arc<dyn Tool> {
                Arc::new(tool::RecordedTool::new(inner, Arc::clone(&tools_book)))
            },
        )
    }
}

impl Book {
    /// The next reply recorded under `key`, if one is left.
    fn take(&self, key: &str) -> Option<Line> {
        let mut waiting = lock(&self.waiting);
        let queue = waiting.get_mut(key)?;
        let line = queue.pop_front();
        if queue.is_empty() {
            waiting.remove(key);
        }
        line
    }

    /// Notes a call answered with `line` from the recording.
    fn replayed(&self, line: Line) {
        self.replayed.fetch_add(1, Ordering::Relaxed);
        lock(&self.made).push(line);
    }

    /// Notes a call that goes to the real model or tool; `false` when
    /// this recording allows none.
    fn go_live(&self) -> bool {
        if self.replay_only {
            return false;
        }
        self.live.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Keeps what a real model or tool answered.
    fn recorded(&self, line: Line) {
        lock(&self.made).push(line);
    }
}

/// A lock whose holder never panics while holding it; a poisoned one is
/// used as it is.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
