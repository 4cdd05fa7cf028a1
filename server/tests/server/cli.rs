//! The headless commands, run as a user runs them: the real `heddle`
//! binary on real files, including a run killed with SIGKILL mid-flight.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use heddle_engine::RunId;
use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::run::{CheckpointStore, EventPayload};
use serde_json::Value;

fn approval_graph() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../engine/examples/graphs/approval.json")
}

/// Runs the `heddle` binary in `dir`, on the offline model at full speed.
pub(crate) fn heddle(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heddle"))
        .args(args)
        .current_dir(dir)
        .env_remove("HEDDLE_DB")
        .env_remove("OPENAI_API_KEY")
        .env_remove("HEDDLE_MODEL_BASE_URL")
        .env("HEDDLE_OFFLINE_PACE_MS", "0")
        .env("RUST_LOG", "off")
        .output()
        .unwrap()
}

/// The command's output, one JSON value per line.
pub(crate) fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}")))
        .collect()
}

#[test]
fn run_pauses_for_an_answer_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let graph = approval_graph();
    let graph = graph.to_str().unwrap();
    let output = heddle(
        dir.path(),
        &[
            "run",
            graph,
            "--input",
            r#"{"request": "order 42"}"#,
            "--thread",
            "t1",
        ],
    );
    assert_eq!(output.status.code(), Some(3), "a paused run exits 3");
    let lines = json_lines(&output);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "interrupted");
    assert_eq!(
        result["interrupts"][0]["payload"]["prompt"],
        "Approve this refund: order 42? Answer true or false."
    );
    let events = &lines[..lines.len() - 1];
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["seq"], i as u64, "events stream in order");
    }
    assert!(
        dir.path().join("data/heddle.db").is_file(),
        "the default database is ./data/heddle.db"
    );

    let threads = heddle(dir.path(), &["threads"]);
    assert!(String::from_utf8_lossy(&threads.stdout).starts_with("t1\tinterrupted"));

    let output = heddle(
        dir.path(),
        &["resume", "--thread", "t1", "--value", "true", "--pretty"],
    );
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("✓ approve"), "{text}");
    assert!(
        text.contains("\"decision\": \"Refund approved: order 42\""),
        "{text}"
    );

    let again = heddle(
        dir.path(),
        &["resume", "--thread", "t1", "--value", "false"],
    );
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("thread `t1` is not interrupted (its last run is finished)"),
        "{stderr}"
    );

    let history = heddle(dir.path(), &["history", "--thread", "t1"]);
    let text = String::from_utf8_lossy(&history.stdout);
    assert!(text.lines().count() >= 4, "{text}");
    assert!(text.lines().last().unwrap().contains("finished"), "{text}");
}

#[test]
fn a_fan_outs_instances_are_printed_each_whole_not_interleaved() {
    let dir = tempfile::tempdir().unwrap();
    let graph =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../engine/examples/graphs/research.json");
    let output = heddle(
        dir.path(),
        &[
            "run",
            graph.to_str().unwrap(),
            "--input",
            r#"{"messages": [{"role": "user", "content": "How do heat pumps work?"}]}"#,
            "--pretty",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for i in 0..3 {
        // Each instance is named by its item, the topic it researched.
        let prefix = format!("  » research[{i}] (");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
        assert_eq!(lines.len(), 1, "one line for instance {i}:\n{text}");
        let (item, words) = lines[0][prefix.len()..]
            .split_once("): ")
            .expect("the item, then the words");
        assert!(
            item.starts_with(&format!("offline topic {}", i + 1)),
            "{item}"
        );
        // Its own topic, and no other's words.
        for topic in 1..=3 {
            let mentioned = words.contains(&format!("topic {topic}"));
            assert_eq!(mentioned, topic == i + 1, "{}\n{text}", lines[0]);
        }
    }
}

#[test]
fn bad_files_and_bad_graphs_are_one_clear_message_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = heddle(dir.path(), &["run", "nope.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read nope.json"));

    std::fs::write(dir.path().join("broken.json"), "{ not json").unwrap();
    let broken = heddle(dir.path(), &["validate", "broken.json"]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("broken.json: not JSON"));

    std::fs::write(
        dir.path().join("invalid.json"),
        r#"{"format_version": 2, "name": "x", "nodes": [{"id": "a", "kind": "zap"}, {"id": "a", "kind": "start"}]}"#,
    )
    .unwrap();
    let invalid = heddle(dir.path(), &["validate", "invalid.json"]);
    assert_eq!(invalid.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        stderr.contains("error at nodes[0].kind: unknown node kind `zap`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error at nodes[1].id: the id `a` is used more than once"),
        "{stderr}"
    );

    let valid = heddle(
        dir.path(),
        &["validate", approval_graph().to_str().unwrap()],
    );
    assert_eq!(valid.status.code(), Some(0));

    let bad_input = heddle(
        dir.path(),
        &["run", approval_graph().to_str().unwrap(), "--input", "[1"],
    );
    assert_eq!(bad_input.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_input.stderr).contains("--input is not valid JSON"));
}

#[test]
fn a_run_killed_mid_flight_is_recovered_without_gaps_or_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let target = 3000;
    let graph = dir.path().join("loop.json");
    std::fs::write(
        &graph,
        serde_json::json!({
            "format_version": 2, "name": "long loop",
            "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}}},
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "tick"},
                {"id": "again", "from": "tick", "to": "tick", "condition": format!("count < {target}")}
            ],
            "limits": {"max_steps": 100000}
        })
        .to_string(),
    )
    .unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_heddle"))
        .args(["run", graph.to_str().unwrap(), "--thread", "long"])
        .current_dir(dir.path())
        .env("RUST_LOG", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it is well into the loop, then kill it without warning.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < 1500 {
        if lines.next().is_none() {
            break;
        }
        seen += 1;
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was killed before it finished");

    let output = heddle(dir.path(), &["recover"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = json_lines(&output).pop().unwrap();
    assert_eq!(result["status"], "finished");
    assert_eq!(result["state"]["count"], target);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(dir.path().join("data/heddle.db"), SyncMode::Normal).await.unwrap();
        let run = store.threads().await.unwrap()[0].latest.run_id.clone();
        let events = store.events(&RunId::from(run.as_str()), 0).await.unwrap();
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event.seq, i as u64, "no gap, no duplicate");
        }
        let ticks = events
            .iter()
            .filter(|e| matches!(&e.payload, EventPayload::NodeSucceeded { node, .. } if node.as_str() == "tick"))
            .count();
        assert_eq!(ticks, target as usize, "each committed step ran exactly once");
        let resumed = events.iter().filter(|e| matches!(e.payload, EventPayload::RunResumed { .. })).count();
        assert_eq!(resumed, 1);
    });

    let again = heddle(dir.path(), &["recover"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing_to_recover"));
}
