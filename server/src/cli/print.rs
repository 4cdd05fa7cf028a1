//! Printing a run as it goes: one JSON object per line (the events as the
//! engine emits them, then a `result` line), or a readable trace.
//!
//! Events reach the printer through the run's event sink and an unbounded
//! queue, so none is dropped however slow the terminal; the printer runs on
//! its own task and hands the writer back when the run is over.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use heddle_engine::run::{Event, TaskRef};
use heddle_engine::run::{EventPayload, EventSink, InterruptWhen, RunError, RunOutput};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The printing side of a run.
pub(crate) struct Printer {
    task: JoinHandle<(Box<dyn Write + Send>, std::io::Result<()>)>,
    pretty: bool,
}

struct Queue(mpsc::UnboundedSender<Arc<Event>>);

impl EventSink for Queue {
    fn event(&self, event: &Arc<Event>) {
        // The printer outlives every run it prints; a send fails only if
        // it died on a write error, which `finish` reports.
        let _ = self.0.send(Arc::clone(event));
    }
}

impl Printer {
    /// Starts printing to `out`; returns the sink to give the run.
    pub(crate) fn start(
        mut out: Box<dyn Write + Send>,
        pretty: bool,
    ) -> (Printer, Arc<dyn EventSink>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Arc<Event>>();
        let task = tokio::spawn(async move {
            let mut result = Ok(());
            let mut trace = Trace::default();
            while let Some(event) = rx.recv().await {
                if result.is_ok() {
                    result = if pretty {
                        trace.line(&mut out, &event)
                    } else {
                        json_line(&mut out, &event)
                    };
                }
            }
            if trace.streaming && result.is_ok() {
                result = writeln!(out);
            }
            (out, result)
        });
        (Printer { task, pretty }, Arc::new(Queue(tx)))
    }

    /// Waits until every event is printed (every sink must be dropped),
    /// then prints each run's result.
    pub(crate) async fn finish(self, results: &[Finished]) -> std::io::Result<()> {
        let (mut out, printed) = self
            .task
            .await
            .map_err(|error| std::io::Error::other(format!("the printer stopped: {error}")))?;
        printed?;
        for (thread, run, result) in results {
            print_result(&mut out, self.pretty, thread, run, result)?;
        }
        out.flush()
    }
}

fn print_result(
    out: &mut dyn Write,
    pretty: bool,
    thread: &str,
    run: &str,
    result: &Result<RunOutput, RunError>,
) -> std::io::Result<()> {
    if pretty {
        summary(out, thread, run, result)?;
    } else {
        let line = match result {
            Ok(output) => json!({
                "type": "result",
                "thread_id": thread,
                "run_id": run,
                "status": if output.is_interrupted() { "interrupted" } else { "finished" },
                "steps": output.steps,
                "state": output.state,
                "interrupts": output.interrupts,
            }),
            Err(error) => json!({
                "type": "result",
                "thread_id": thread,
                "run_id": run,
                "status": if matches!(error, RunError::Cancelled { .. }) { "cancelled" } else { "failed" },
                "error": error.to_string(),
            }),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// A run's thread, id and result.
pub(crate) type Finished = (String, String, Result<RunOutput, RunError>);

fn json_line(out: &mut dyn Write, event: &Event) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, event).map_err(std::io::Error::other)?;
    writeln!(out)
}

/// A line for what a child graph's node did: `    ↳ research › writer: ✓ draft (2.1 ms)`.
fn nested_line(out: &mut dyn Write, event: &Event, streaming: &mut bool) -> std::io::Result<()> {
    let line = match &event.payload {
        EventPayload::NodeSucceeded {
            node, duration_us, ..
        } => format!("✓ {node} ({:.1} ms)", *duration_us as f64 / 1000.0),
        EventPayload::NodeFailed { node, error, .. } => format!("✗ {node}: {error}"),
        _ => return Ok(()),
    };
    if *streaming {
        writeln!(out)?;
        *streaming = false;
    }
    let at: Vec<String> = event
        .path
        .iter()
        .map(|hop| match &hop.child {
            Some(child) => format!("{} › {child}", hop.node),
            None => hop.node.to_string(),
        })
        .collect();
    writeln!(out, "    ↳ {}: {line}", at.join(" › "))
}

/// The readable trace of a run, as its events come.
#[derive(Default)]
struct Trace {
    /// Whether a line of streamed tokens is open.
    streaming: bool,
    /// The tasks of the run's current step (to know which fanned-out
    /// instance a node's end is).
    tasks: Vec<TaskRef>,
    /// What each fanned-out instance streamed, by instance: instances
    /// stream side by side, so each one's text is written whole when it
    /// ends rather than interleaved with the others'.
    held: BTreeMap<u32, String>,
}

impl Trace {
    /// One event. A node's streamed tokens are written as they come, on
    /// one line. Work inside child graphs shows as its nodes' ends, under
    /// where it happened.
    fn line(&mut self, out: &mut dyn Write, event: &Event) -> std::io::Result<()> {
        if event.is_nested() {
            return nested_line(out, event, &mut self.streaming);
        }
        if let EventPayload::Custom {
            node,
            instance,
            name,
            data,
        } = &event.payload
        {
            match (name.as_str(), instance) {
                ("token", Some(instance)) => {
                    let text = data["text"].as_str().unwrap_or_default();
                    self.held.entry(*instance).or_default().push_str(text);
                    return Ok(());
                }
                ("token", None) => {
                    if !self.streaming {
                        write!(out, "  » {node}: ")?;
                        self.streaming = true;
                    }
                    write!(out, "{}", data["text"].as_str().unwrap_or_default())?;
                    return out.flush();
                }
                ("tool_call_delta" | "usage", _) => return Ok(()),
                _ => {}
            }
        }
        if self.streaming {
            writeln!(out)?;
            self.streaming = false;
        }
        match &event.payload {
            EventPayload::StepStarted { tasks, .. } => self.tasks.clone_from(tasks),
            EventPayload::NodeSucceeded { node, task, .. }
            | EventPayload::NodeFailed { node, task, .. } => {
                let started = self.tasks.get(*task as usize);
                let instance = started.and_then(|task| task.instance);
                if let Some(text) = instance.and_then(|i| self.held.remove(&i)) {
                    let i = instance.unwrap_or_default();
                    match started.and_then(|task| task.item.as_deref()) {
                        Some(item) if !item.is_empty() => {
                            writeln!(out, "  » {node}[{i}] ({item}): {text}")?
                        }
                        _ => writeln!(out, "  » {node}[{i}]: {text}")?,
                    }
                }
            }
            _ => {}
        }
        trace_line(out, event)
    }
}

/// The line of one event of the readable trace (but a streamed token).
fn trace_line(out: &mut dyn Write, event: &Event) -> std::io::Result<()> {
    match &event.payload {
        EventPayload::RunStarted { graph, .. } => {
            writeln!(out, "▶ run {} of \"{graph}\"", event.run_id)
        }
        EventPayload::RunResumed {
            step,
            checkpoint,
            value,
            ..
        } => match value {
            Some(value) => writeln!(
                out,
                "↻ run {} resumed at step {step} with {value}",
                event.run_id
            ),
            None => writeln!(
                out,
                "↻ run {} goes on at step {step} from checkpoint {checkpoint}",
                event.run_id
            ),
        },
        EventPayload::StepStarted { step, tasks } => {
            let nodes: Vec<String> = tasks
                .iter()
                .map(|task| match task.instance {
                    Some(i) => format!("{}[{i}]", task.node),
                    None => task.node.to_string(),
                })
                .collect();
            writeln!(out, "step {step}: {}", nodes.join(", "))
        }
        EventPayload::NodeSucceeded {
            node,
            duration_us,
            route,
            ..
        } => {
            let route = route
                .as_deref()
                .map(|r| format!(", route {r}"))
                .unwrap_or_default();
            writeln!(
                out,
                "  ✓ {node} ({:.1} ms{route})",
                *duration_us as f64 / 1000.0
            )
        }
        EventPayload::NodeFailed { node, error, .. } => writeln!(out, "  ✗ {node}: {error}"),
        EventPayload::NodeRetrying {
            node,
            attempt,
            delay_ms,
            error,
            ..
        } => writeln!(
            out,
            "  ↻ {node} attempt {attempt} failed ({error}); retrying in {delay_ms} ms"
        ),
        EventPayload::Custom {
            node,
            instance,
            name,
            data,
            ..
        } => match instance {
            Some(i) => writeln!(out, "  · {node}[{i}] {name}: {data}"),
            None => writeln!(out, "  · {node} {name}: {data}"),
        },
        EventPayload::RunInterrupted { step, interrupts } => {
            for interrupt in interrupts {
                let node = &interrupt.node;
                match interrupt.when {
                    InterruptWhen::Before => {
                        writeln!(out, "⏸ paused at step {step}: breakpoint before {node}")?
                    }
                    InterruptWhen::After => {
                        writeln!(out, "⏸ paused at step {step}: breakpoint after {node}")?
                    }
                    InterruptWhen::During => {
                        match interrupt.payload.get("prompt").and_then(Value::as_str) {
                            Some(prompt) => {
                                writeln!(out, "⏸ paused at step {step}: {node} asks \"{prompt}\"")?
                            }
                            None => writeln!(
                                out,
                                "⏸ paused at step {step}: {node} asks {}",
                                interrupt.payload
                            )?,
                        }
                    }
                }
            }
            Ok(())
        }
        EventPayload::RunFinished { steps, .. } => writeln!(out, "■ finished after {steps} steps"),
        EventPayload::RunFailed { error, .. } => writeln!(out, "✗ failed: {error}"),
        EventPayload::RunCancelled { step } => writeln!(out, "■ cancelled at step {step}"),
        _ => Ok(()),
    }
}

fn summary(
    out: &mut dyn Write,
    thread: &str,
    run: &str,
    result: &Result<RunOutput, RunError>,
) -> std::io::Result<()> {
    match result {
        Ok(output) if output.is_interrupted() => {
            writeln!(out, "thread {thread}, run {run}: waiting for an answer")?;
            writeln!(
                out,
                "resume with: heddle resume --thread {thread} --value '<JSON>'"
            )?;
            pretty_state(out, &output.state)
        }
        Ok(output) => {
            writeln!(out, "thread {thread}, run {run}: final state")?;
            pretty_state(out, &output.state)
        }
        Err(error) => writeln!(out, "thread {thread}, run {run}: {error}"),
    }
}

fn pretty_state(out: &mut dyn Write, state: &Value) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, state).map_err(std::io::Error::other)?;
    writeln!(out)
}
