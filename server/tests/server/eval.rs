//! `heddle eval`, run as a CI job runs it: the real binary over a dataset
//! file and a scorers file, on the offline model. Its exit code says
//! whether the scores held; bad files are refused at their line or field.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::cli::{heddle, json_lines};

fn react_graph() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/examples/graphs/react_agent.json")
        .to_string_lossy()
        .into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes `lines` as a JSON-lines file and the scorers as a JSON list.
fn files(dir: &Path, examples: &[Value], scorers: &Value) -> (String, String) {
    let dataset = dir.join("dataset.jsonl");
    let text: Vec<String> = examples.iter().map(Value::to_string).collect();
    std::fs::write(&dataset, text.join("\n")).unwrap();
    let scorers_file = dir.join("scorers.json");
    std::fs::write(&scorers_file, scorers.to_string()).unwrap();
    (
        dataset.to_string_lossy().into_owned(),
        scorers_file.to_string_lossy().into_owned(),
    )
}

/// `heddle eval GRAPH --dataset D --scorers S`.
fn eval_args<'a>(graph: &'a str, dataset: &'a str, scorers: &'a str) -> [&'a str; 6] {
    ["eval", graph, "--dataset", dataset, "--scorers", scorers]
}

fn asked(question: &str, answer: &str) -> Value {
    json!({"id": question, "input": {"messages": [{"role": "user", "content": question}]},
           "reference": {"answer": answer}})
}

fn scorers() -> Value {
    json!([
        {"kind": "contains", "name": "answer", "of": "last(output.messages).content",
         "expected": "reference.answer"},
        {"kind": "trajectory", "name": "used the calculator", "tools": [{"name": "calculator"}]},
        {"kind": "threshold", "metric": "tokens", "max": 100000},
        {"kind": "script", "name": "short",
         "source": "let text = output.messages[-1].content; \
                    if text.len() < 200 { #{score: 1, reason: `${text.len()} characters`} } else { 0 }"}
    ])
}

#[test]
fn scores_a_dataset_and_exits_4_when_a_mean_is_under_its_minimum() {
    let dir = tempfile::tempdir().unwrap();
    // The third reference is wrong: the answer scorer's mean is 2/3.
    let (dataset, scorers) = files(
        dir.path(),
        &[
            asked("What is 12 * 7?", "84"),
            asked("What is 2 + 3?", "5"),
            asked("What is 10 - 4?", "7"),
        ],
        &scorers(),
    );
    let graph = react_graph();
    let base = eval_args(&graph, &dataset, &scorers);

    let output = heddle(
        dir.path(),
        &[&base[..], &["--min-score", "answer=0.6"]].concat(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 4, "three runs and a summary");
    for line in &lines[..3] {
        assert_eq!(line["type"], "run");
        assert_eq!(line["status"], "finished");
        assert_eq!(line["scores"]["used the calculator"]["value"], 1.0);
        assert_eq!(line["scores"]["threshold"]["value"], 1.0);
        assert_eq!(line["scores"]["short"]["value"], 1.0, "{line}");
        assert!(
            line["scores"]["short"]["reason"]
                .as_str()
                .unwrap()
                .ends_with(" characters"),
            "{line}"
        );
        assert!(line["tokens"].as_u64().unwrap() > 0);
    }
    assert_eq!(lines[0]["example"], "What is 12 * 7?");
    assert_eq!(lines[2]["scores"]["answer"]["value"], 0.0);
    assert!(
        lines[2]["scores"]["answer"]["reason"]
            .as_str()
            .unwrap()
            .contains("\"7\" not found")
    );
    let summary = &lines[3];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["runs"], 3);
    let mean = summary["scorers"]["answer"]["mean"].as_f64().unwrap();
    assert!((mean - 2.0 / 3.0).abs() < 1e-9, "{summary}");
    assert_eq!(summary["passed"], true);

    // Asking for more than it scores: exit 4, the summary says which.
    let output = heddle(
        dir.path(),
        &[&base[..], &["--min-score", "answer=0.9"]].concat(),
    );
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let summary = json_lines(&output).pop().unwrap();
    assert_eq!(summary["passed"], false);
    assert_eq!(summary["thresholds"][0]["scorer"], "answer");
    assert_eq!(summary["thresholds"][0]["passed"], false);

    // Repeated runs on the offline model score alike: no spread.
    let output = heddle(
        dir.path(),
        &[&base[..], &["--repeat", "2", "--pretty"]].concat(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("3 examples, 6 runs"), "{report}");
    assert!(report.contains("(run 2 of 2)"), "{report}");
    let answer_row = report
        .lines()
        .skip_while(|line| !line.contains("examples,"))
        .find(|line| line.trim_start().starts_with("answer "))
        .unwrap();
    assert!(
        answer_row.contains("0.667") && answer_row.contains("0.471"),
        "{answer_row}"
    );
}

#[test]
fn bad_files_and_flags_are_refused_where_they_are_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let graph = react_graph();
    let refused = |examples: &[Value], scorers: &Value, extra: &[&str]| {
        let (dataset, scorers) = files(dir.path(), examples, scorers);
        let args = [&eval_args(&graph, &dataset, &scorers)[..], extra].concat();
        let output = heddle(dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(output.stdout.is_empty(), "nothing ran");
        stderr(&output)
    };
    let good = asked("What is 1 + 1?", "2");

    let message = refused(
        &[good.clone(), json!({"input": "not an object"})],
        &scorers(),
        &[],
    );
    assert!(
        message.contains("dataset.jsonl:2: at input: invalid type"),
        "{message}"
    );
    // Values are bounded where they enter, as the server bounds a
    // dataset's: a line nested past serde_json's depth limit, or an input
    // larger than 256 KiB, is refused at its line.
    let deep = format!(
        "{{\"input\": {{\"x\": {}1{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let long = format!("{{\"input\": {{\"x\": \"{}\"}}}}", "a".repeat(1 << 20));
    for (line, says) in [(deep, "recursion limit exceeded"), (long, "the input: ")] {
        let dataset = dir.path().join("raw.jsonl");
        std::fs::write(&dataset, format!("{}\n{line}\n", good)).unwrap();
        let scorers_file = dir.path().join("scorers.json");
        std::fs::write(&scorers_file, scorers().to_string()).unwrap();
        let output = heddle(
            dir.path(),
            &eval_args(
                &graph,
                dataset.to_str().unwrap(),
                scorers_file.to_str().unwrap(),
            ),
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(message.contains("raw.jsonl:2: "), "{message}");
        assert!(message.contains(says), "{message}");
    }

    let message = refused(&[json!({"input": {}, "expected": 1})], &scorers(), &[]);
    assert!(message.contains("dataset.jsonl:1: "), "{message}");
    assert!(message.contains("unknown field `expected`"), "{message}");

    let message = refused(
        std::slice::from_ref(&good),
        &json!([{"kind": "exact"}, {"kind": "regex", "pattern": "("}, {"kind": "exact"}]),
        &[],
    );
    assert!(
        message.contains("[1].pattern: regex parse error"),
        "{message}"
    );
    assert!(
        message.contains("[2].name: another scorer is named `exact`"),
        "{message}"
    );

    let message = refused(
        std::slice::from_ref(&good),
        &scorers(),
        &["--min-score", "speed=0.5"],
    );
    assert!(message.contains("no scorer is named `speed`"), "{message}");
    let message = refused(
        std::slice::from_ref(&good),
        &scorers(),
        &["--min-score", "answer=2"],
    );
    assert!(
        message.contains("`2` is not a score from 0 to 1"),
        "{message}"
    );
    let message = refused(&[good], &scorers(), &["--repeat", "0"]);
    assert!(
        message.contains("--repeat: must be from 1 to 100"),
        "{message}"
    );
}

#[test]
fn an_example_the_graph_refuses_is_reported_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let (dataset, scorers) = files(
        dir.path(),
        &[json!({"id": "typo", "input": {"mesages": []}})],
        &scorers(),
    );
    let graph = react_graph();
    let output = heddle(dir.path(), &eval_args(&graph, &dataset, &scorers));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let lines = json_lines(&output);
    assert!(
        lines[0]["status"].as_str().unwrap().starts_with("rejected"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0]["status"].as_str().unwrap().contains("mesages"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[0]["scores"]["answer"]["value"], 0.0);
}

/// `--record` keeps every model and tool reply; `--replay` gives them back,
/// so a second evaluation sees the same clock and the same answers;
/// `--replay-only` makes a call not recorded fail instead of going out.
#[test]
fn a_recording_gives_the_same_replies_back_and_only_changed_calls_go_out() {
    let dir = tempfile::tempdir().unwrap();
    let time = json!({"id": "time", "input": {"messages": [{"role": "user", "content": "What time is it?"}]},
                      "reference": {"answer": "2000-01-01"}});
    let (dataset, scorers) = files(
        dir.path(),
        &[asked("What is 12 * 7?", "84"), time],
        &json!([{"kind": "contains", "name": "answer", "of": "last(output.messages).content",
                 "expected": "reference.answer"}]),
    );
    let graph = react_graph();
    let base = eval_args(&graph, &dataset, &scorers);
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let read = |name: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.path().join(name))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    let eval = |extra: &[&str]| {
        let output = heddle(dir.path(), &[&base[..], extra].concat());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        json_lines(&output)
    };

    let recorded = eval(&["--record", &file("replies.jsonl")]);
    let calls = read("replies.jsonl");
    // Per question: the model, a tool, the model again.
    assert_eq!(calls.len(), 6, "{calls:?}");
    let tools: Vec<&Value> = calls.iter().filter(|call| call["call"] == "tool").collect();
    assert_eq!(tools[0]["tool"], "calculator");
    assert_eq!(tools[1]["tool"], "current_time");
    assert_eq!(recorded[2]["replies"], json!({"replayed": 0, "live": 6}));

    // Replayed only: the same runs, and nothing reached the model or a tool.
    let replayed = eval(&[
        "--replay",
        &file("replies.jsonl"),
        "--replay-only",
        "--record",
        &file("again.jsonl"),
    ]);
    assert_eq!(replayed[2]["replies"], json!({"replayed": 6, "live": 0}));
    for run in 0..2 {
        assert_eq!(replayed[run]["scores"], recorded[run]["scores"]);
        assert_eq!(replayed[run]["tokens"], recorded[run]["tokens"]);
    }
    assert_eq!(read("again.jsonl"), calls);

    // The clock's reply edited in the recording: the run reads that time,
    // and only the model call after it (its request changed) goes out.
    let mut edited = calls.clone();
    let clock = edited
        .iter_mut()
        .find(|call| call["tool"] == "current_time")
        .unwrap();
    clock["result"] = json!({"ok": {"utc": "2000-01-01T00:00:00Z", "unix": 946_684_800}});
    let text: Vec<String> = edited.iter().map(Value::to_string).collect();
    std::fs::write(dir.path().join("edited.jsonl"), text.join("\n")).unwrap();
    let from_edited = eval(&["--replay", &file("edited.jsonl")]);
    assert_eq!(
        from_edited[1]["scores"]["answer"]["value"], 1.0,
        "{:?}",
        from_edited[1]
    );
    assert_eq!(from_edited[2]["replies"], json!({"replayed": 5, "live": 1}));
    let only = eval(&["--replay", &file("edited.jsonl"), "--replay-only"]);
    let status = only[1]["status"].as_str().unwrap();
    assert!(
        status.starts_with("failed") && status.contains("no recorded reply"),
        "{status}"
    );
    assert_eq!(only[0]["status"], "finished");

    // A recording that is not one is refused at its line.
    std::fs::write(
        dir.path().join("bad.jsonl"),
        format!("{}\nnot json\n", calls[0]),
    )
    .unwrap();
    let output = heddle(
        dir.path(),
        &[&base[..], &["--replay", &file("bad.jsonl")]].concat(),
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("bad.jsonl: line 2: "),
        "{}",
        stderr(&output)
    );
    let output = heddle(dir.path(), &[&base[..], &["--replay-only"]].concat());
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

/// A model endpoint that counts, apart, the judge's calls (asked for a
/// `verdict`, answered `score`) and the graph's (answered plainly).
async fn judging_endpoint(
    score: f64,
) -> (
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let judged = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let (j, a) = (Arc::clone(&judged), Arc::clone(&answered));
    let (url, _) = crate::support::fake_model(move |body| {
        let plain = usize::from(body["stream"] != true);
        if body["response_format"]["json_schema"]["name"] == "verdict" {
            j.fetch_add(plain, Ordering::SeqCst);
            // The judge was shown the rubric and the answer.
            let shown: Value =
                serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or_default())
                    .unwrap_or_default();
            assert_eq!(shown["rubric"], "names the product of the two numbers");
            json!({"score": score, "reason": "it names a number"}).to_string()
        } else {
            a.fetch_add(plain, Ordering::SeqCst);
            "The product is 84.".to_string()
        }
    })
    .await;
    (url, judged, answered)
}

/// `heddle eval` with the model endpoint `endpoint` as the default model.
fn heddle_on(dir: &Path, endpoint: &str, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_heddle"))
        .args(args)
        .current_dir(dir)
        .env_remove("HEDDLE_DB")
        .env_remove("OPENAI_API_KEY")
        .env("HEDDLE_MODEL_BASE_URL", endpoint)
        .env("HEDDLE_MODEL", "fake-model")
        .env("HEDDLE_OFFLINE_PACE_MS", "0")
        .env("RUST_LOG", "off")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_grades_with_the_configured_model_and_a_replay_asks_it_nothing() {
    use std::sync::atomic::Ordering;
    let (endpoint, judged, answered) = judging_endpoint(0.75).await;
    let dir = tempfile::tempdir().unwrap();
    let (dataset, scorers) = files(
        dir.path(),
        &[
            asked("What is 12 * 7?", "84"),
            asked("What is 6 * 7?", "42"),
        ],
        &json!([{"kind": "judge", "name": "graded", "of": "last(output.messages).content",
                 "rubric": "names the product of the two numbers"}]),
    );
    let graph = react_graph();
    let recording = dir.path().join("replies.jsonl");
    let recording = recording.to_string_lossy().into_owned();
    let base = eval_args(&graph, &dataset, &scorers);
    let (path, record) = (dir.path().to_path_buf(), base.map(str::to_string));
    let recorded = {
        let (endpoint, recording) = (endpoint.clone(), recording.clone());
        tokio::task::spawn_blocking(move || {
            let mut args: Vec<&str> = record.iter().map(String::as_str).collect();
            args.extend(["--record", &recording]);
            heddle_on(&path, &endpoint, &args)
        })
        .await
        .unwrap()
    };
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));
    let lines = json_lines(&recorded);
    for run in &lines[..2] {
        assert_eq!(run["scores"]["graded"]["value"], 0.75, "{run}");
        assert_eq!(run["scores"]["graded"]["reason"], "it names a number");
    }
    // One answer and one verdict per example, over HTTP.
    assert_eq!(judged.load(Ordering::SeqCst), 2);
    assert_eq!(answered.load(Ordering::SeqCst), 2);

    // Replayed only: the same verdicts, and the endpoint is asked nothing.
    let (path, replay) = (dir.path().to_path_buf(), base.map(str::to_string));
    let replayed = tokio::task::spawn_blocking(move || {
        let mut args: Vec<&str> = replay.iter().map(String::as_str).collect();
        args.extend(["--replay", &recording, "--replay-only"]);
        heddle_on(&path, &endpoint, &args)
    })
    .await
    .unwrap();
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    let again = json_lines(&replayed);
    assert_eq!(again[0]["scores"], lines[0]["scores"]);
    assert_eq!(again[1]["scores"], lines[1]["scores"]);
    assert_eq!(judged.load(Ordering::SeqCst), 2, "a replay judged live");
    assert_eq!(answered.load(Ordering::SeqCst), 2, "a replay answered live");
}

#[test]
fn on_the_offline_model_a_judge_looks_for_the_rubrics_terms_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (dataset, scorers) = files(
        dir.path(),
        &[asked("What is 12 * 7?", "84"), asked("What is 2 + 2?", "4")],
        &json!([{"kind": "judge", "name": "graded", "of": "last(output.messages).content",
                 "rubric": "The answer says \"84\"."}]),
    );
    let graph = react_graph();
    let output = heddle(dir.path(), &eval_args(&graph, &dataset, &scorers));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = json_lines(&output);
    assert_eq!(lines[0]["scores"]["graded"]["value"], 1.0, "{}", lines[0]);
    assert_eq!(lines[1]["scores"]["graded"]["value"], 0.0, "{}", lines[1]);
    let reason = lines[1]["scores"]["graded"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("offline judge"), "{reason}");
    assert!(reason.contains("missing: 84"), "{reason}");

    // A judge without a rubric is refused at its field.
    std::fs::write(
        dir.path().join("scorers.json"),
        json!([{"kind": "judge", "rubric": " "}]).to_string(),
    )
    .unwrap();
    let output = heddle(dir.path(), &eval_args(&graph, &dataset, &scorers));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("rubric"), "{}", stderr(&output));
}
