//! Runs and threads as the app shows them: a graph's past and present runs (status,
//! who started it, when, how long it took) and its conversations. Opening a run replays it on
//! the canvas from its stored events.

use heddle_engine::ids::{RunId, ThreadId};
use heddle_engine::named_enum;
use heddle_engine::run::RunStatus;
use heddle_engine::usage::UsageTotals;
use serde::{Deserialize, Serialize};

use crate::graphs::GraphId;
use crate::time::{Timestamp, spoken};
use serde_json::Value;

/// A run: the graph version it runs, its thread, input, where it stands
/// and what came of it. The run history, the API and the run manager all
/// use this one type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    pub id: RunId,
    pub graph_id: GraphId,
    pub graph_version: i64,
    pub thread_id: ThreadId,
    pub status: RunStatus,
    pub input: Value,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Who started it (`None` for runs from before accounts); for a run
    /// started from outside, the owner of the key or trigger.
    pub started_by: Option<String>,
    /// How it started.
    #[serde(default)]
    pub origin: RunOrigin,
    /// Which key or trigger started it, by name.
    #[serde(default)]
    pub origin_label: Option<String>,
    /// For a fork: the run it went on from, and where.
    #[serde(default)]
    pub forked_from: Option<ForkOrigin>,
    /// What its model calls used (recorded when it ends or pauses).
    #[serde(default)]
    pub usage: UsageTotals,
}

/// What a graph's runs used: in all, and per day.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphUsage {
    /// Runs counted (those of the days listed).
    pub runs: u64,
    pub total: UsageTotals,
    /// Days with runs, oldest first, as `YYYY-MM-DD` (UTC).
    pub days: Vec<DayUsage>,
}

/// One day of a graph's usage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DayUsage {
    pub day: String,
    pub runs: u64,
    pub usage: UsageTotals,
}

/// Where a fork went on from: another run of the same thread, before one
/// of its steps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkOrigin {
    pub run_id: RunId,
    /// The step the fork went on with (the source's state before it).
    pub step: u32,
}

named_enum! {
    /// How a run started: from the app (the editor, or the JSON API with a
    /// session), or from outside, which runs the published version.
    #[derive(
        Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
    )]
    pub enum RunOrigin {
        #[default]
        App = "app",
        /// A call with an API key (invoke, or the chat completions endpoint).
        ApiKey = "api_key",
        /// A webhook's URL was called.
        Webhook = "webhook",
        /// A schedule fired.
        Schedule = "schedule",
        /// Someone chatted through a chat widget on another site.
        Widget = "widget",
        /// An experiment ran one of its examples.
        Experiment = "experiment",
    }
}

impl RunOrigin {
    /// How the run list says where a run came from, e.g. `key "support"`;
    /// `None` for runs from the app.
    pub fn describe(self, label: Option<&str>) -> Option<String> {
        let kind = match self {
            RunOrigin::App => return None,
            RunOrigin::ApiKey => "API key",
            RunOrigin::Webhook => "Webhook",
            RunOrigin::Schedule => "Schedule",
            RunOrigin::Widget => "Chat widget",
            RunOrigin::Experiment => "Experiment",
        };
        Some(match label {
            Some(name) => format!("{kind} “{name}”"),
            None => kind.to_string(),
        })
    }
}

/// A thread (a conversation) of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadInfo {
    pub id: ThreadId,
    pub graph_id: GraphId,
    pub created_at: String,
    pub updated_at: String,
    /// How many runs it has had.
    pub runs: i64,
    /// Where its newest run stands.
    pub last_status: Option<RunStatus>,
    /// What it is about: the first thing said in it (its first run's
    /// input, shortened), when that was text.
    #[serde(default)]
    pub title: Option<String>,
    /// Tokens its runs used (prompt and completion).
    #[serde(default)]
    pub tokens: u64,
    /// What its runs cost, in US dollars.
    #[serde(default)]
    pub cost_usd: f64,
}

/// A run's input in a line, as lists show it: the message when the input
/// is a conversation (a string or a list of messages for a channel), else
/// the first text value; shortened to 60 characters on a word boundary.
pub fn input_summary(input: &Value) -> Option<String> {
    fn text(value: &Value) -> Option<&str> {
        match value {
            Value::String(text) => Some(text),
            // A list of messages: the first a person wrote.
            Value::Array(items) => items.iter().find_map(|item| {
                let role = item.get("role").and_then(Value::as_str);
                (role.is_none_or(|role| role == "user"))
                    .then(|| item.get("content").and_then(Value::as_str))
                    .flatten()
                    .or_else(|| item.as_str())
            }),
            // One message.
            Value::Object(_) => value.get("content").and_then(Value::as_str),
            _ => None,
        }
    }
    let found = match input {
        Value::Object(channels) => channels.values().find_map(text),
        other => text(other),
    }?;
    let line = found.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    const MAX: usize = 60;
    if line.chars().count() <= MAX {
        return Some(line);
    }
    let cut: String = line.chars().take(MAX).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > MAX / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    Some(format!("{}…", cut.trim_end_matches([',', '.', ';', ':'])))
}

/// A request to start a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// The run's input: channel values.
    #[serde(default)]
    pub input: Value,
    /// The thread to run on; a new one when absent.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// This run also pauses before these nodes ("run to here"), beside the
    /// breakpoints the graph marks.
    #[serde(default)]
    pub interrupt_before: Vec<String>,
    /// This run also pauses after these nodes' steps.
    #[serde(default)]
    pub interrupt_after: Vec<String>,
    /// The saved version to run (the editor names the one on screen, so
    /// what runs is what was seen); the newest when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_version: Option<i64>,
}

/// A request to fork a run: continue from one of its checkpoints, with
/// some channels edited, as a new run on the same thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    /// The step the new run goes on with: the checkpoint holding the state
    /// before that step (so `step: 3` continues after step 2).
    pub step: u32,
    /// Channel values to replace first.
    #[serde(default)]
    pub edits: serde_json::Map<String, Value>,
    /// The node to run first, instead of the checkpoint's own next step.
    #[serde(default)]
    pub start_at: Option<String>,
}

/// A thread as its conversation view shows it: its record, its newest
/// state, and the messages in it (the values of its `messages`-typed
/// channels).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadView {
    pub thread: ThreadInfo,
    pub state: Value,
    pub messages: Vec<Value>,
}

impl RunInfo {
    /// How long it ran, from its start and end, as people say it; `None`
    /// while it has not ended (or a time does not read).
    pub fn duration(&self) -> Option<String> {
        let start = Timestamp::parse(self.started_at.as_deref()?)?;
        let end = Timestamp::parse(self.finished_at.as_deref()?)?;
        let took = end.millis() - start.millis();
        (took >= 0).then(|| spoken(took))
    }
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
            graph_id: crate::graphs::GraphId::from_stored("g".into()),
            graph_version: 1,
            thread_id: "t".into(),
            status: RunStatus::Finished,
            input: Value::Null,
            output: None,
            error: None,
            started_by: None,
            origin: super::RunOrigin::App,
            origin_label: None,
            forked_from: None,
            usage: Default::default(),
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
        // A run that crosses midnight (and a month's end) has a duration.
        assert_eq!(
            run("2026-11-30T23:59:30.000Z", "2026-12-01T00:00:10.000Z")
                .duration()
                .as_deref(),
            Some("40.0 s")
        );
        assert_eq!(
            run("2026-11-21T10:00:00.000Z", "2026-11-21T09:00:00.000Z").duration(),
            None
        );
    }

    #[test]
    fn an_input_reads_as_its_first_words() {
        use serde_json::json;
        let summary = |input: Value| super::input_summary(&input);
        assert_eq!(
            summary(json!({"messages": "What is 17 * 23?"})).as_deref(),
            Some("What is 17 * 23?")
        );
        assert_eq!(
            summary(json!({"messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "  Hello\n  there "}
            ]}))
            .as_deref(),
            Some("Hello there")
        );
        assert_eq!(
            summary(json!({"count": 3, "topic": "rust"})).as_deref(),
            Some("rust")
        );
        assert_eq!(summary(json!({"count": 3})), None);
        assert_eq!(summary(json!({"messages": "   "})), None);
        let long = summary(json!({"q": "word ".repeat(40)})).unwrap_or_default();
        assert!(long.ends_with("word…"), "{long}");
        assert!(long.chars().count() <= 61);
    }
}
