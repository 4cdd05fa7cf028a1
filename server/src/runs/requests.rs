//! What a client asks of the run manager: the request bodies to start and
//! fork runs, and the checks their input passes before anything is queued.

use heddle_app::error::AppError;
use heddle_app::limits::MAX_INPUT_BYTES;
use heddle_engine::CompiledGraph;
use serde_json::Value;

/// A request to start a run.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    /// The run's input: channel values.
    #[serde(default)]
    pub input: Value,
    /// The thread to run on; a new one when absent.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// This run also pauses before these nodes ("run to here"), beside the
    /// breakpoints the graph marks.
    #[serde(default)]
    pub interrupt_before: Vec<String>,
    /// This run also pauses after these nodes' steps.
    #[serde(default)]
    pub interrupt_after: Vec<String>,
}

/// A request to fork a run: continue from one of its checkpoints, with
/// some channels edited, as a new run on the same thread.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkRun {
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

/// Refuses, before the run is queued, input for channels the graph does
/// not have or values their channels would refuse, naming every one.
pub(super) fn check_input(graph: &CompiledGraph, input: &Value) -> Result<(), AppError> {
    let Value::Object(fields) = input else {
        return Ok(());
    };
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
