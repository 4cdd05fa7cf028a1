//! `heddle run`, `heddle resume` and `heddle recover`: durable runs on the
//! SQLite checkpoint store, printed as they go.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::run::{Durability, Durable, Run, RunError, RunOptions};
use heddle_engine::{Registry, RunId, ThreadId};
use serde_json::Value;

use super::print::Printer;
use super::validate::read_document;
use super::{CliError, Outcome};
use crate::config::{DurabilityArg, OutputArgs, RecoverArgs, ResumeArgs, RunArgs};

/// Opens the database the commands share with `heddle serve`.
pub async fn open_store(db: &Path) -> Result<SqliteStore, CliError> {
    Ok(SqliteStore::open(db, SyncMode::Normal).await?)
}

fn durable(
    store: SqliteStore,
    registry: &Registry,
    output: &OutputArgs,
    printer: Arc<dyn heddle_engine::run::EventSink>,
) -> Durable {
    Durable::new(Arc::new(store))
        .with_registry(registry.clone())
        .with_durability(match output.durability {
            DurabilityArg::Sync => Durability::Sync,
            DurabilityArg::Async => Durability::Async,
            DurabilityArg::Exit => Durability::Exit,
        })
        .with_options(RunOptions {
            keep_log: false,
            sink: Some(printer),
            ..RunOptions::default()
        })
}

fn parse_json(text: &str, flag: &'static str) -> Result<Value, CliError> {
    serde_json::from_str(text).map_err(|source| CliError::Json { flag, source })
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4())
}

/// Runs prepared runs one after the other, then prints their results.
async fn execute(
    runs: Vec<(String, Run)>,
    printer: Printer,
    durable: Durable,
) -> Result<Outcome, CliError> {
    let mut results = Vec::with_capacity(runs.len());
    for (thread, run) in runs {
        let run_id = run.id().to_string();
        results.push((thread, run_id, run.execute().await));
    }
    // The printer stops once every sink (the runs' and the template's) is gone.
    drop(durable);
    printer.finish(&results).await?;
    Ok(results
        .iter()
        .map(|(_, _, result)| outcome(result))
        .max()
        .unwrap_or(Outcome::Done))
}

fn outcome(result: &Result<heddle_engine::run::RunOutput, RunError>) -> Outcome {
    match result {
        Ok(output) if output.is_interrupted() => Outcome::Paused,
        Ok(_) => Outcome::Done,
        Err(RunError::BadInput { .. }) => Outcome::Rejected,
        Err(_) => Outcome::Failed,
    }
}

/// `heddle run GRAPH.json --input JSON [--thread ID]`.
pub async fn run(
    args: &RunArgs,
    registry: &Registry,
    out: Box<dyn Write + Send>,
) -> Result<Outcome, CliError> {
    let document = read_document(&args.graph)?;
    let graph =
        heddle_engine::compile(&document, registry).map_err(|report| CliError::Invalid {
            path: args.graph.clone(),
            report,
        })?;
    let input = parse_json(&args.input, "input")?;
    let store = open_store(&args.db.db).await?;
    let thread = args.thread.clone().unwrap_or_else(|| new_id("thread"));
    let (printer, sink) = Printer::start(out, args.output.pretty);
    let durable = durable(store, registry, &args.output, sink);
    let run = durable
        .start(
            Arc::new(graph),
            ThreadId::from(thread.as_str()),
            RunId::from(new_id("run")),
            input,
        )
        .await?;
    execute(vec![(thread, run)], printer, durable).await
}

/// `heddle resume --thread ID --value JSON`.
pub async fn resume(
    args: &ResumeArgs,
    registry: &Registry,
    out: Box<dyn Write + Send>,
) -> Result<Outcome, CliError> {
    let value = parse_json(&args.value, "value")?;
    let store = open_store(&args.db.db).await?;
    let (printer, sink) = Printer::start(out, args.output.pretty);
    let durable = durable(store, registry, &args.output, sink);
    let run = durable
        .resume(&ThreadId::from(args.thread.as_str()), value)
        .await?;
    execute(vec![(args.thread.clone(), run)], printer, durable).await
}

/// `heddle recover`: finishes every run a crash left running.
pub async fn recover(
    args: &RecoverArgs,
    registry: &Registry,
    mut out: Box<dyn Write + Send>,
) -> Result<Outcome, CliError> {
    let store = open_store(&args.db.db).await?;
    // Which runs, and on which threads, before any is started.
    let pending = heddle_engine::run::CheckpointStore::unfinished(&store).await?;
    if pending.is_empty() {
        writeln!(
            out,
            "{}",
            if args.output.pretty {
                "no runs to recover"
            } else {
                r#"{"type":"result","status":"nothing_to_recover"}"#
            }
        )?;
        return Ok(Outcome::Done);
    }
    let (printer, sink) = Printer::start(out, args.output.pretty);
    let durable = durable(store, registry, &args.output, sink);
    let runs = durable
        .recover()
        .await?
        .into_iter()
        .map(|run| {
            let thread = pending
                .iter()
                .find(|record| &record.run_id == run.id())
                .map(|record| record.thread_id.to_string())
                .unwrap_or_default();
            (thread, run)
        })
        .collect();
    execute(runs, printer, durable).await
}
