//! The checks a run's input passes before anything is queued (the request
//! bodies themselves, `StartRequest` and `ForkRequest`, are shared with the
//! browser in `heddle_wire::runs`).

use heddle_engine::CompiledGraph;
use heddle_engine::state::ValueLimits;
use heddle_wire::error::AppError;
use heddle_wire::limits::MAX_INPUT_BYTES;
use serde_json::Value;

/// A run's input: a JSON object (absent means empty), within the size limit.
pub(super) fn run_input(input: Value) -> Result<Value, AppError> {
    let input = match input {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(fields) => Value::Object(fields),
        _ => {
            return Err(AppError::InvalidInput(
                "`input` must be a JSON object of channel values".into(),
            ));
        }
    };
    let input_size = input.to_string().len();
    if input_size > MAX_INPUT_BYTES {
        return Err(AppError::TooLarge(format!(
            "the run's input is {input_size} bytes; the limit is {MAX_INPUT_BYTES}"
        )));
    }
    Ok(input)
}

/// A person's answer to a pause, read as its answer channel's type (the
/// engine's `coerce_answer`: "true" into a boolean channel is `true`), or
/// refused before anything changes, saying what the answer should be.
/// `paused` is the run's newest checkpoint; `document` its graph version.
pub(super) fn typed_answer(
    paused: &heddle_engine::run::Checkpoint,
    document: Option<&heddle_engine::GraphDocument>,
    limits: &ValueLimits,
    value: Value,
) -> Result<Value, AppError> {
    let size = value.to_string().len();
    if size > MAX_INPUT_BYTES {
        return Err(AppError::TooLarge(format!(
            "the answer is {size} bytes; the limit is {MAX_INPUT_BYTES}"
        )));
    }
    limits
        .check(&value)
        .map_err(|error| AppError::InvalidInput(format!("`value`: {error}")))?;
    let Some(document) = document else {
        return Ok(value);
    };
    // A pause inside a subgraph asks for a channel of the child's graph:
    // the child's node reads the answer by its own channel's type.
    let asked = paused
        .interrupts
        .iter()
        .filter(|interrupt| {
            interrupt
                .payload
                .get(heddle_engine::kinds::PAUSED_CHILD)
                .is_none()
        })
        .filter_map(|interrupt| interrupt.payload.get("answer").and_then(Value::as_str));
    let mut value = value;
    for channel in asked {
        if let Some(spec) = document.state.channels.get(channel) {
            value = heddle_engine::state::coerce_answer(spec.ty, value).map_err(|why| {
                AppError::InvalidInput(format!("`value`: {why} (the answer for `{channel}`)"))
            })?;
            // An answer its channel would refuse is refused now, and the
            // run stays paused (the engine would fail the run on it).
            let mut fields = serde_json::Map::new();
            fields.insert(channel.to_string(), value.clone());
            let channels = std::collections::BTreeMap::from([(channel.to_string(), spec.clone())]);
            if let Some(problem) = heddle_engine::state::check_input(&channels, &fields).first() {
                return Err(AppError::InvalidInput(format!(
                    "`value`: {} (the answer for `{channel}`)",
                    problem.message
                )));
            }
        }
    }
    Ok(value)
}

/// Refuses, before the run is queued, input for channels the graph does
/// not have or values their channels would refuse, naming every one.
pub(super) fn check_input(graph: &CompiledGraph, input: &Value) -> Result<(), AppError> {
    let Value::Object(fields) = input else {
        return Ok(());
    };
    // Each value within the run's limits first: nothing deeper is parsed
    // further, stored, or handed to a reducer.
    for (channel, value) in fields {
        graph
            .value_limits()
            .check(value)
            .map_err(|error| AppError::InvalidInput(format!("`input.{channel}`: {error}")))?;
    }
    let problems = heddle_engine::state::check_input(&graph.document().state.channels, fields);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = problems
        .iter()
        .map(|problem| format!("`input.{}`: {}", problem.channel, problem.message))
        .collect();
    Err(AppError::InvalidInput(format!(
        "the input does not fit the graph's state: {}",
        listed.join("; ")
    )))
}

/// What a queued run is asked to do, stored with its record so that
/// whichever server takes it (this one, or another after this one died)
/// does exactly that. A start's input is the record's `input`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum RunRequest {
    /// Run the graph from its entry, pausing at these breakpoints too.
    Start {
        #[serde(default)]
        interrupt_before: Vec<String>,
        #[serde(default)]
        interrupt_after: Vec<String>,
    },
    /// Go on from another run's checkpoint with edited channels.
    Fork {
        checkpoint: String,
        #[serde(default)]
        edits: serde_json::Map<String, Value>,
        #[serde(default)]
        start_at: Option<String>,
    },
    /// Answer the thread's pause.
    Resume {
        value: Value,
        /// The checkpoint of the pause it answers (absent in requests
        /// stored before this was): a server that finds the run paused at
        /// another knows the answer was given, and the run paused again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pause: Option<String>,
    },
}

impl RunRequest {
    /// The request as stored.
    pub(super) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// A stored request; a run queued before requests were stored (or
    /// with one that does not read) is a plain start.
    pub(super) fn from_stored(json: Option<&str>) -> RunRequest {
        json.and_then(|json| heddle_engine::state::from_stored_json(json).ok())
            .unwrap_or(RunRequest::Start {
                interrupt_before: Vec::new(),
                interrupt_after: Vec::new(),
            })
    }

    /// Whether this is a resume still to answer the pause `paused` (the
    /// run's last checkpoint): one stored before pauses were named is
    /// taken to, as it was.
    pub(super) fn answers(&self, paused: &heddle_engine::run::Checkpoint) -> bool {
        match self {
            RunRequest::Resume { pause: None, .. } => true,
            RunRequest::Resume {
                pause: Some(pause), ..
            } => pause.as_str() == paused.id.as_str(),
            RunRequest::Start { .. } | RunRequest::Fork { .. } => false,
        }
    }
}
