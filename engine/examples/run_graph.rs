//! The smallest program that runs an exported graph:
//! `cargo run -p heddle-engine --example run_graph -- engine/examples/graphs/react_agent.json '{"messages":[{"role":"user","content":"What is 6*7?"}]}'`

use std::sync::Arc;

use heddle_engine::run::{Run, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: run_graph GRAPH.json [INPUT_JSON]")?;
    let graph = CompiledGraph::from_json(&std::fs::read_to_string(path)?, &Registry::new())?;
    let input = serde_json::from_str(args.get(2).map_or("{}", String::as_str))?;
    let output = Run::new(
        Arc::new(graph),
        RunId::from("example"),
        input,
        RunOptions::default(),
    )
    .execute()
    .await?;
    println!("{}", serde_json::to_string_pretty(&output.state)?);
    Ok(())
}
