//! Runs an exported graph with a SQLite checkpointer, pauses where the
//! graph asks a person, and resumes with their answer: the pattern for any
//! human-in-the-loop agent.
//!
//! ```sh
//! cargo run -p heddle-engine --features sqlite --example checkpointed -- \
//!     engine/examples/graphs/approval.json '{"request": "order 42, $30"}' true
//! ```
//!
//! The pause survives the process: run it without the answer (the last
//! argument), and resume later with `heddle resume --thread example --value true`.

use std::sync::Arc;

use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::run::{Durable, RunStatus};
use heddle_engine::{CompiledGraph, Registry, RunId, ThreadId};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let graph_path = args
        .next()
        .unwrap_or_else(|| "engine/examples/graphs/approval.json".into());
    let input: serde_json::Value =
        serde_json::from_str(&args.next().unwrap_or_else(|| "{}".into()))?;
    let answer: Option<serde_json::Value> =
        args.next().map(|a| serde_json::from_str(&a)).transpose()?;

    // 1. Load the exported graph: parse, migrate, validate, compile.
    let graph = Arc::new(CompiledGraph::from_json(
        &std::fs::read_to_string(&graph_path)?,
        &Registry::new(),
    )?);

    // 2. A durable runner over a SQLite file (the one `heddle serve` uses).
    let store = SqliteStore::open("data/heddle.db", SyncMode::Normal).await?;
    let durable = Durable::new(Arc::new(store));
    let thread = ThreadId::from("example");

    // 3. Start a run, unless the thread is already waiting for an answer.
    let waiting = durable
        .store()
        .latest(&thread)
        .await?
        .is_some_and(|c| c.status == RunStatus::Interrupted);
    if !waiting {
        let run_id = RunId::from(format!("example-{}", std::process::id()));
        let output = durable
            .start(graph, thread.clone(), run_id, input)
            .await?
            .execute()
            .await?;
        if !output.is_interrupted() {
            println!("finished without asking: {}", output.state);
            return Ok(());
        }
        for interrupt in &output.interrupts {
            println!("{} asks: {}", interrupt.node, interrupt.payload["prompt"]);
        }
    }

    // 4. Resume with the answer: only the paused node runs again.
    let Some(answer) = answer else {
        println!("paused; resume with: heddle resume --thread {thread} --value '<JSON>'");
        return Ok(());
    };
    let output = durable.resume(&thread, answer).await?.execute().await?;
    println!("decision: {}", output.state["decision"]);
    Ok(())
}
