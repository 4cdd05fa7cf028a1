//! Tool policies (retries, timeouts, the circuit breaker, the cap on calls
//! in flight), return-direct tools and run budgets, through real runs of
//! an `agent` node on the offline model.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use heddle_engine::model::{OfflineModel, ToolSpec};
use heddle_engine::run::{Event, EventPayload, Run, RunError, RunOptions, RunOutput};
use heddle_engine::tools::{Tool, ToolError, ToolFuture};
use heddle_engine::usage::PriceTable;
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

/// A tool whose behaviour the test steers: it fails its first `failures`
/// calls (transiently), or always while `broken`, and sleeps `delay`.
#[derive(Clone, Default)]
struct Probe {
    name: &'static str,
    state: Arc<ProbeState>,
}

#[derive(Default)]
struct ProbeState {
    calls: AtomicU32,
    failures: AtomicU32,
    broken: AtomicBool,
    delay_ms: AtomicU32,
    in_flight: AtomicU32,
    most_in_flight: AtomicU32,
}

impl Probe {
    fn new(name: &'static str) -> Probe {
        Probe {
            name,
            state: Arc::default(),
        }
    }
}

impl Tool for Probe {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: "a test tool".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        }
    }

    fn call(&self, _arguments: Value) -> ToolFuture<'_> {
        Box::pin(async move {
            let state = &self.state;
            let call = state.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            state.most_in_flight.fetch_max(now, Ordering::SeqCst);
            let delay = state.delay_ms.load(Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(u64::from(delay))).await;
            state.in_flight.fetch_sub(1, Ordering::SeqCst);
            if state.broken.load(Ordering::SeqCst) || call <= state.failures.load(Ordering::SeqCst)
            {
                return Err(ToolError::transient(format!("attempt {call} failed")));
            }
            Ok(Value::String(format!("result {call}")))
        })
    }
}

fn registry(tools: &[&Probe]) -> Registry {
    let mut registry =
        Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO));
    for tool in tools {
        registry = registry.with_tool((*tool).clone());
    }
    registry
}

/// start → agent (with `agent` as its config) → end.
fn agent_graph(registry: &Registry, agent: Value, limits: Value) -> Arc<CompiledGraph> {
    let document = json!({
        "format_version": 2,
        "name": "policies",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "limits": limits,
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "agent", "kind": "agent", "config": agent},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "agent"},
            {"id": "e2", "from": "agent", "to": "end"}
        ]
    });
    match CompiledGraph::from_json(&document.to_string(), registry) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("{error}"),
    }
}

async fn ask(graph: &Arc<CompiledGraph>, text: &str) -> (Result<RunOutput, RunError>, Vec<Event>) {
    let run = Run::new(
        Arc::clone(graph),
        RunId::from("policy-run"),
        json!({"messages": [{"role": "user", "content": text}]}),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let result = run.execute().await;
    let events = log.since(0).iter().map(|e| (**e).clone()).collect();
    (result, events)
}

fn custom<'a>(events: &'a [Event], wanted: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter_map(move |event| match &event.payload {
        EventPayload::Custom { name, data, .. } if name == wanted => Some(data),
        _ => None,
    })
}

fn answer(output: &RunOutput) -> String {
    let messages = output.state["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_flaky_tool_is_retried_with_backoff_and_the_model_reads_its_result() {
    let flaky = Probe::new("flaky");
    flaky.state.failures.store(2, Ordering::SeqCst);
    let registry = registry(&[&flaky]);
    let retry = json!({"max_attempts": 3, "initial_interval_ms": 5, "jitter": false});
    let graph = agent_graph(
        &registry,
        json!({"tools": ["flaky"], "policies": {"flaky": {"retry": retry}}}),
        json!({}),
    );
    let (result, events) = ask(&graph, "ask flaky about it").await;
    let output = result.unwrap();
    assert_eq!(answer(&output), "(offline model) flaky says result 3.");
    let retries: Vec<&Value> = custom(&events, "tool_retry").collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["error"], "attempt 1 failed");
    assert_eq!(retries[1]["delay_ms"], 10, "the wait doubles");
    let result = custom(&events, "tool_result").next().unwrap();
    assert_eq!(
        (result["ok"].clone(), result["attempts"].clone()),
        (json!(true), json!(3))
    );

    // Out of attempts, the model reads the last error and the run goes on.
    let stubborn = Probe::new("flaky");
    stubborn.state.failures.store(10, Ordering::SeqCst);
    let registry = self::registry(&[&stubborn]);
    let graph = agent_graph(
        &registry,
        json!({"tools": ["flaky"], "policies": {"flaky": {"retry": retry}}}),
        json!({}),
    );
    let (result, _) = ask(&graph, "ask flaky about it").await;
    assert_eq!(
        answer(&result.unwrap()),
        "(offline model) flaky says error: attempt 3 failed."
    );
    assert_eq!(stubborn.state.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_slow_tool_times_out_and_fails_the_run_only_when_its_policy_says_so() {
    let slow = Probe::new("slow");
    slow.state.delay_ms.store(5_000, Ordering::SeqCst);
    let registry = registry(&[&slow]);
    let graph = agent_graph(
        &registry,
        json!({"tools": ["slow"], "policies": {"slow": {"timeout_ms": 50}}}),
        json!({}),
    );
    let started = std::time::Instant::now();
    let (result, _) = ask(&graph, "ask slow about it").await;
    assert_eq!(
        answer(&result.unwrap()),
        "(offline model) slow says error: timed out after 50 ms."
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "it did not wait for the tool"
    );

    let graph = agent_graph(
        &registry,
        json!({"tools": ["slow"], "policies": {"slow": {"timeout_ms": 50, "fail_node": true}}}),
        json!({}),
    );
    let (result, _) = ask(&graph, "ask slow about it").await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("node `agent` failed")
            && error.contains("the tool `slow` failed: timed out after 50 ms"),
        "{error}"
    );
}

#[tokio::test]
async fn the_breaker_opens_after_failures_refuses_without_calling_then_closes_on_a_good_trial() {
    let shaky = Probe::new("shaky");
    shaky.state.broken.store(true, Ordering::SeqCst);
    // One registry for every run: the breaker's state is shared by them.
    let registry = registry(&[&shaky]);
    let policy = json!({"breaker": {"failures": 2, "window_ms": 60000, "cool_down_ms": 150}});
    let graph = agent_graph(
        &registry,
        json!({"tools": ["shaky"], "policies": {"shaky": policy}}),
        json!({}),
    );
    let (first, events) = ask(&graph, "ask shaky").await;
    assert!(first.is_ok(), "a failing tool does not fail the run");
    assert_eq!(custom(&events, "tool_breaker").count(), 0);

    let (_, events) = ask(&graph, "ask shaky").await;
    let opened: Vec<&Value> = custom(&events, "tool_breaker").collect();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["state"], "open");
    assert_eq!(opened[0]["name"], "shaky");

    let (refused, events) = ask(&graph, "ask shaky").await;
    assert_eq!(
        shaky.state.calls.load(Ordering::SeqCst),
        2,
        "refused without a call"
    );
    let text = answer(&refused.unwrap());
    assert!(
        text.contains("circuit breaker is open after 2 failures"),
        "{text}"
    );
    assert_eq!(custom(&events, "tool_breaker").count(), 0);

    shaky.state.broken.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (trial, events) = ask(&graph, "ask shaky").await;
    assert_eq!(
        answer(&trial.unwrap()),
        "(offline model) shaky says result 3."
    );
    let states: Vec<&Value> = custom(&events, "tool_breaker")
        .map(|e| &e["state"])
        .collect();
    assert_eq!(states, [&json!("half_open"), &json!("closed")]);
    let (again, _) = ask(&graph, "ask shaky").await;
    assert_eq!(
        answer(&again.unwrap()),
        "(offline model) shaky says result 4."
    );
}

#[tokio::test]
async fn the_cap_on_calls_in_flight_holds_across_fifty_concurrent_runs() {
    async fn most_in_flight(policy: Value) -> (u32, usize) {
        let busy = Probe::new("busy");
        busy.state.delay_ms.store(20, Ordering::SeqCst);
        let registry = registry(&[&busy]);
        let graph = agent_graph(
            &registry,
            json!({"tools": ["busy"], "policies": {"busy": policy}}),
            json!({}),
        );
        let runs = (0..50).map(|i| {
            let graph = Arc::clone(&graph);
            tokio::spawn(async move {
                let run = Run::new(
                    graph,
                    RunId::from(format!("r{i}")),
                    json!({"messages": [{"role": "user", "content": "ask busy"}]}),
                    RunOptions::default(),
                );
                run.execute().await
            })
        });
        let done = join_all(runs)
            .await
            .into_iter()
            .filter(|r| matches!(r, Ok(Ok(output)) if answer(output).contains("busy says result")))
            .count();
        (busy.state.most_in_flight.load(Ordering::SeqCst), done)
    }
    let (capped, done) = most_in_flight(json!({"max_concurrent": 3})).await;
    assert_eq!(done, 50, "every call got its turn");
    assert!(capped <= 3, "{capped} calls were in flight at once");
    let (uncapped, _) = most_in_flight(json!({})).await;
    assert!(
        uncapped > 3,
        "without the cap the calls overlap ({uncapped})"
    );
}

#[tokio::test]
async fn a_return_direct_tool_ends_the_agent_with_its_result() {
    let lookup = Probe::new("lookup");
    let registry = registry(&[&lookup]);
    let graph = agent_graph(
        &registry,
        json!({"tools": ["lookup"], "return_direct": ["lookup"]}),
        json!({}),
    );
    let (result, events) = ask(&graph, "please lookup the order").await;
    let output = result.unwrap();
    assert_eq!(answer(&output), "result 1");
    let roles: Vec<&str> = output.state["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(
        custom(&events, "usage").count(),
        1,
        "the model was asked once"
    );
    assert_eq!(
        custom(&events, "return_direct").next().unwrap()["tool"],
        "lookup"
    );

    let report = heddle_engine::validate(
        &heddle_engine::GraphDocument::from_value(json!({
            "format_version": 2, "name": "x",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "agent", "kind": "agent", "config": {"tools": ["lookup"], "return_direct": ["calculator"], "policies": {"nope": {}, "lookup": {"max_concurrent": 0}}}}
            ],
            "edges": [{"id": "e", "from": "start", "to": "agent"}]
        }))
        .unwrap(),
        &registry,
    );
    let text = report.to_string();
    assert!(
        text.contains("nodes.agent.config.return_direct[0]") || text.contains("return_direct[0]"),
        "{text}"
    );
    assert!(text.contains("policies.nope"), "{text}");
    assert!(text.contains("policies.lookup.max_concurrent"), "{text}");
}

#[tokio::test]
async fn every_model_call_records_tokens_and_cost_and_budgets_stop_the_run_naming_themselves() {
    let priced = PriceTable::parse(r#"{"offline": {"input": 1000, "output": 2000}}"#).unwrap();
    let registry = registry(&[]).with_prices(PriceTable::default().with_overrides(priced));
    let graph = agent_graph(&registry, json!({"tools": ["calculator"]}), json!({}));
    let (result, events) = ask(&graph, "what is 6 * 7").await;
    result.unwrap();
    let usage: Vec<&Value> = custom(&events, "usage").collect();
    assert_eq!(usage.len(), 2, "a tool round and the answer");
    for call in &usage {
        let prompt = call["prompt_tokens"].as_f64().unwrap();
        let completion = call["completion_tokens"].as_f64().unwrap();
        let expected = (prompt * 1000.0 + completion * 2000.0) / 1e6;
        assert!(
            (call["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-12,
            "{call}"
        );
        assert_eq!(call["model"], "offline");
    }

    let graph = agent_graph(
        &registry,
        json!({"tools": ["calculator"]}),
        json!({"max_tokens": 5}),
    );
    let (result, events) = ask(&graph, "what is 6 * 7").await;
    let error = result.unwrap_err().to_string();
    assert!(error.contains("`limits.max_tokens` is 5"), "{error}");
    assert_eq!(
        custom(&events, "usage").count(),
        1,
        "stopped at the first call over"
    );

    let graph = agent_graph(
        &registry,
        json!({"tools": ["calculator"]}),
        json!({"max_cost": 0.001}),
    );
    let (result, _) = ask(&graph, "what is 6 * 7").await;
    let error = result.unwrap_err().to_string();
    assert!(error.contains("`limits.max_cost` is $0.001"), "{error}");

    let graph = agent_graph(
        &registry,
        json!({"tools": ["calculator"]}),
        json!({"max_tokens": 10_000}),
    );
    assert!(
        ask(&graph, "what is 6 * 7").await.0.is_ok(),
        "within budget it runs"
    );
}
