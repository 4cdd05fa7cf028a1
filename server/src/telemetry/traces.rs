//! Runs as OpenTelemetry traces, exported over OTLP/HTTP (protobuf) by the
//! opentelemetry crates' batch exporter, off the run's path.
//!
//! The span tree of a run follows its events, with their own timestamps:
//! `run <graph>` (its trace id derived from the run id, so a log line with
//! the run's `trace_id` finds it) holds `step <n>` spans, which hold
//! `node <id>` spans, which hold a `chat <model>` span per model call and
//! an `execute_tool <name>` span per tool call, named and attributed by
//! the GenAI semantic conventions (model, tokens, finish reason, tool).
//! A child graph's model and tool calls (a subgraph's, a sub-agent's) are
//! spans under the node that ran the child, with `heddle.path` saying
//! where inside it they happened.
//! Prompts, replies and node outputs are exported only when
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heddle_engine::RunId;
use heddle_engine::run::{Event, EventPayload, Hop};
use opentelemetry::trace::{
    Span as _, SpanId, SpanKind, Status, TraceContextExt, TraceId, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SdkTracer, SdkTracerProvider};
use serde_json::Value as Json;

use super::seen::{Seen, View};
use sha2::{Digest, Sha256};

/// Why traces cannot be exported.
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces over OTLP: {0}")]
pub struct TracesError(String);

/// The trace export.
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// Export prompts, replies and node outputs.
    capture: bool,
}

/// Attributes longer than this are cut (captured content).
const MAX_CONTENT: usize = 8 * 1024;

impl Traces {
    /// From the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (and the exporter's other
    /// `OTEL_` settings); `None` when neither is set or
    /// `OTEL_SDK_DISABLED=true`.
    pub fn from_env() -> Result<Option<Traces>, TracesError> {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
        let disabled =
            std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        if disabled
            || !(set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        {
            return Ok(None);
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .build()
            .map_err(|error| TracesError(error.to_string()))?;
        Ok(Some(Traces::with_exporter(exporter, capture_from_env())))
    }

    /// To the OTLP/HTTP traces URL `endpoint` (`http://host:4318/v1/traces`).
    pub fn to_endpoint(endpoint: &str, capture: bool) -> Result<Traces, TracesError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(endpoint)
            .build()
            .map_err(|error| TracesError(error.to_string()))?;
        Ok(Traces::with_exporter(exporter, capture))
    }

    fn with_exporter(exporter: opentelemetry_otlp::SpanExporter, capture: bool) -> Traces {
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_id_generator(RunTraceIds)
            .with_resource(
                Resource::builder()
                    .with_service_name("heddle")
                    .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
                    .build(),
            )
            .build();
        let tracer = provider.tracer("heddle");
        Traces {
            provider,
            tracer,
            capture,
        }
    }

    /// Whether prompts, replies and node outputs are exported.
    pub fn captures_content(&self) -> bool {
        self.capture
    }

    /// Sends what is waiting (tests, shutdown).
    pub fn flush(&self) {
        if let Err(error) = self.provider.force_flush() {
            tracing::warn!(%error, "cannot export traces");
        }
    }

    /// Stops the export after sending what is waiting.
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "the trace export did not stop cleanly");
        }
    }
}

/// The spans of the runs in progress, kept by the telemetry thread.
///
/// Step and node spans are made when they end (they carry their start
/// time), or earlier when a model or tool span needs its node as parent.
/// A run makes its first [`MAX_PLAIN_SPANS`] step and node spans whatever
/// they hold; after that only the steps and nodes that hold a model or
/// tool call, or failed, are exported, and the others are counted in the
/// run span's `heddle.spans.omitted`: a loop of ten thousand plain steps
/// does not bury the calls that matter, nor the trace backend.
#[derive(Default)]
pub struct Spans {
    runs: HashMap<String, RunSpans>,
}

/// Step and node spans a run makes before only those holding calls or
/// failures are kept.
pub const MAX_PLAIN_SPANS: usize = 1_000;

/// The open spans of one run.
struct RunSpans {
    run: Context,
    step: Option<Open>,
    /// By node id: the node's open executions.
    nodes: HashMap<String, Vec<Open>>,
    /// Step and node spans made.
    made: usize,
    /// Step and node spans left out.
    omitted: u64,
}

/// A step or node execution in progress, and its span once made.
struct Open {
    name: String,
    at: SystemTime,
    attributes: Vec<KeyValue>,
    span: Option<Context>,
}

impl Open {
    fn new(name: String, at: SystemTime, attributes: Vec<KeyValue>) -> Open {
        Open {
            name,
            at,
            attributes,
            span: None,
        }
    }
}

impl RunSpans {
    /// The span of the step in progress, made now if it was not yet.
    fn step_span(&mut self, tracer: &SdkTracer) -> &Context {
        match &mut self.step {
            Some(open) => {
                if open.span.is_none() {
                    open.span = Some(make(tracer, open, &self.run));
                    self.made += 1;
                }
                open.span.as_ref().unwrap_or(&self.run)
            }
            None => &self.run,
        }
    }

    /// The span of `node`'s latest execution in progress, made now if it
    /// was not yet; the run's when the node has none.
    fn node_span(&mut self, tracer: &SdkTracer, node: &str) -> Context {
        let needs_making = self
            .nodes
            .get(node)
            .and_then(|open| open.last())
            .is_some_and(|open| open.span.is_none());
        if needs_making {
            let parent = self.step_span(tracer).clone();
            if let Some(open) = self.nodes.get_mut(node).and_then(|open| open.last_mut()) {
                open.span = Some(make(tracer, open, &parent));
                self.made += 1;
            }
        }
        self.nodes
            .get(node)
            .and_then(|open| open.last())
            .and_then(|open| open.span.clone())
            .unwrap_or_else(|| self.run.clone())
    }

    /// Ends `node`'s earliest execution in progress: its span is made if
    /// it must be (`keep`) or may be (under the plain span allowance).
    fn end_node(
        &mut self,
        tracer: &SdkTracer,
        node: &str,
        at: SystemTime,
        keep: bool,
        finish: impl FnOnce(&opentelemetry::trace::SpanRef<'_>),
    ) {
        let Some(open) = self.nodes.get_mut(node).filter(|open| !open.is_empty()) else {
            return;
        };
        let mut ending = open.remove(0);
        let span = match ending.span.take() {
            Some(span) => span,
            None if keep || self.made < MAX_PLAIN_SPANS => {
                let parent = self.step_span(tracer).clone();
                self.made += 1;
                make(tracer, &ending, &parent)
            }
            None => {
                self.omitted += 1;
                return;
            }
        };
        let span = span.span();
        finish(&span);
        span.end_with_timestamp(at);
    }

    fn end_step(&mut self, tracer: &SdkTracer, at: SystemTime) {
        let Some(mut step) = self.step.take() else {
            return;
        };
        let span = match step.span.take() {
            Some(span) => span,
            None if self.made < MAX_PLAIN_SPANS => {
                self.made += 1;
                make(tracer, &step, &self.run)
            }
            None => {
                self.omitted += 1;
                return;
            }
        };
        span.span().end_with_timestamp(at);
    }
}

impl Spans {
    /// A child graph's model or tool call: a span under the node of the
    /// run that ran the child, saying where inside it happened
    /// (`heddle.path`, e.g. `mathematician › work`).
    fn observe_nested(&mut self, traces: &Traces, run_id: &RunId, event: &Event) {
        let (
            Some(outer),
            EventPayload::Custom {
                node, name, data, ..
            },
        ) = (event.path.first(), &event.payload)
        else {
            return;
        };
        let Some(spans) = self.runs.get_mut(run_id.as_str()) else {
            return;
        };
        let tracer = &traces.tracer;
        let at = time(event.at_us);
        let within = KeyValue::new("heddle.path", nested_path(&event.path, node.as_str()));
        let parent = spans.node_span(tracer, outer.node.as_str());
        match name.as_str() {
            "usage" => model_span(tracer, &parent, data, at, Some(within)),
            "tool_result" => tool_span(tracer, &parent, data, at, Some(within)),
            _ => {}
        }
    }
}

/// Where inside its outermost node a child's event happened: each child
/// graph by its sub-agent's name or its subgraph node, then the node.
fn nested_path(path: &[Hop], node: &str) -> String {
    let mut names: Vec<&str> = Vec::with_capacity(path.len() * 2);
    for (i, hop) in path.iter().enumerate() {
        if i > 0 {
            names.push(hop.node.as_str());
        }
        if let Some(child) = &hop.child {
            names.push(child);
        }
    }
    names.push(node);
    names.join(" › ")
}

/// A step or node span, started when its execution did.
fn make(tracer: &SdkTracer, open: &Open, parent: &Context) -> Context {
    let span = tracer
        .span_builder(open.name.clone())
        .with_start_time(open.at)
        .with_attributes(open.attributes.clone())
        .start_with_context(tracer, parent);
    parent.with_span(span)
}

impl Spans {
    /// One event of the run `run_id` of `graph_id`.
    pub fn observe(&mut self, traces: &Traces, graph_id: &str, run_id: &RunId, seen: &Seen) {
        if let Seen::Whole(event) = seen
            && event.is_nested()
        {
            self.observe_nested(traces, run_id, event);
            return;
        }
        let at = time(seen.at_us());
        let run_id = run_id.as_str();
        let tracer = &traces.tracer;
        let payload = match seen.view() {
            View::StepStarted { step, tasks } => {
                let Some(spans) = self.runs.get_mut(run_id) else {
                    return;
                };
                spans.end_step(tracer, at);
                spans.step = Some(Open::new(
                    format!("step {step}"),
                    at,
                    vec![
                        KeyValue::new("heddle.step", i64::from(step)),
                        KeyValue::new("heddle.step.tasks", i64::from(tasks)),
                    ],
                ));
                return;
            }
            View::StepFinished => {
                if let Some(spans) = self.runs.get_mut(run_id) {
                    spans.end_step(tracer, at);
                }
                return;
            }
            View::NodeStarted {
                step,
                node,
                attempt,
            } => {
                let Some(spans) = self.runs.get_mut(run_id) else {
                    return;
                };
                let open = Open::new(
                    format!("node {node}"),
                    at,
                    vec![
                        KeyValue::new("heddle.node.id", node.to_string()),
                        KeyValue::new("heddle.step", i64::from(step)),
                        KeyValue::new("heddle.node.attempt", i64::from(attempt)),
                    ],
                );
                spans.nodes.entry(node.to_string()).or_default().push(open);
                return;
            }
            View::NodeSucceeded {
                node,
                route,
                update,
                ..
            } => {
                let Some(spans) = self.runs.get_mut(run_id) else {
                    return;
                };
                spans.end_node(tracer, node.as_str(), at, false, |span| {
                    if let Some(route) = route {
                        span.set_attribute(KeyValue::new("heddle.node.route", route.to_string()));
                    }
                    if let Some(update) = update.filter(|_| traces.capture) {
                        span.set_attribute(KeyValue::new("heddle.node.update", content(update)));
                    }
                });
                return;
            }
            View::Other(payload) => payload,
        };
        match payload {
            EventPayload::RunStarted { graph, input, .. } => {
                let mut attributes = vec![
                    KeyValue::new("heddle.run.id", run_id.to_string()),
                    KeyValue::new("heddle.graph.id", graph_id.to_string()),
                    KeyValue::new("heddle.graph.name", graph.clone()),
                ];
                if traces.capture {
                    attributes.push(KeyValue::new("heddle.run.input", content(input)));
                }
                self.begin_run(tracer, run_id, format!("run {graph}"), at, attributes);
            }
            EventPayload::RunResumed { step, .. } if !self.runs.contains_key(run_id) => {
                let attributes = vec![
                    KeyValue::new("heddle.run.id", run_id.to_string()),
                    KeyValue::new("heddle.graph.id", graph_id.to_string()),
                    KeyValue::new("heddle.run.resumed_at_step", i64::from(*step)),
                ];
                self.begin_run(tracer, run_id, "run (resumed)".to_string(), at, attributes);
            }
            EventPayload::NodeRetrying { node, error, .. }
            | EventPayload::NodeFailed { node, error, .. } => {
                let Some(spans) = self.runs.get_mut(run_id) else {
                    return;
                };
                spans.end_node(tracer, node.as_str(), at, true, |span| {
                    span.set_status(Status::error(error.clone()));
                });
            }
            EventPayload::Custom {
                node, name, data, ..
            } => {
                let Some(spans) = self.runs.get_mut(run_id) else {
                    return;
                };
                match name.as_str() {
                    "usage" => {
                        let parent = spans.node_span(tracer, node.as_str());
                        model_span(tracer, &parent, data, at, None);
                    }
                    "tool_result" => {
                        let parent = spans.node_span(tracer, node.as_str());
                        tool_span(tracer, &parent, data, at, None);
                    }
                    "tool_breaker" | "tool_retry" | "handoff" | "return_direct" | "hook" => {
                        let attributes = data
                            .as_object()
                            .map(|fields| {
                                fields
                                    .iter()
                                    .map(|(key, value)| {
                                        KeyValue::new(format!("heddle.{key}"), scalar(value))
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        spans
                            .node_span(tracer, node.as_str())
                            .span()
                            .add_event_with_timestamp(name.clone(), at, attributes);
                    }
                    _ => {}
                }
            }
            EventPayload::RunFinished { output, .. } => {
                // Only logs stored before changes hold the final state whole:
                // the node spans carry each update that made it.
                let capture = output.as_ref().filter(|_| traces.capture).map(content);
                self.end_run(tracer, run_id, at, |span| {
                    span.set_status(Status::Ok);
                    if let Some(output) = capture {
                        span.set_attribute(KeyValue::new("heddle.run.output", output));
                    }
                });
            }
            EventPayload::RunFailed { error, .. } => {
                self.end_run(tracer, run_id, at, |span| {
                    span.set_status(Status::error(error.clone()))
                });
            }
            EventPayload::RunCancelled { .. } => {
                self.end_run(tracer, run_id, at, |span| {
                    span.set_attribute(KeyValue::new("heddle.run.status", "cancelled"));
                });
            }
            EventPayload::RunInterrupted { .. } => {
                self.end_run(tracer, run_id, at, |span| {
                    span.set_attribute(KeyValue::new("heddle.run.status", "interrupted"));
                });
            }
            _ => {}
        }
    }

    fn begin_run(
        &mut self,
        tracer: &SdkTracer,
        run_id: &str,
        name: String,
        at: SystemTime,
        attributes: Vec<KeyValue>,
    ) {
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_start_time(at)
            .with_attributes(attributes);
        // The root's trace id is the run's: the id generator takes it from
        // here while this thread builds the span.
        NEXT_TRACE.with(|next| next.set(Some(trace_id(run_id))));
        let span = span.start_with_context(tracer, &Context::new());
        NEXT_TRACE.with(|next| next.set(None));
        self.runs.insert(
            run_id.to_string(),
            RunSpans {
                run: Context::new().with_span(span),
                step: None,
                nodes: HashMap::new(),
                made: 0,
                omitted: 0,
            },
        );
    }

    fn end_run(
        &mut self,
        tracer: &SdkTracer,
        run_id: &str,
        at: SystemTime,
        finish: impl FnOnce(&opentelemetry::trace::SpanRef<'_>),
    ) {
        let Some(mut spans) = self.runs.remove(run_id) else {
            return;
        };
        let unfinished: Vec<String> = spans.nodes.keys().cloned().collect();
        for node in unfinished {
            while spans.nodes.get(&node).is_some_and(|open| !open.is_empty()) {
                spans.end_node(tracer, &node, at, false, |_| {});
            }
        }
        spans.end_step(tracer, at);
        let span = spans.run.span();
        if spans.omitted > 0 {
            span.set_attribute(KeyValue::new(
                "heddle.spans.omitted",
                i64::try_from(spans.omitted).unwrap_or(i64::MAX),
            ));
        }
        finish(&span);
        span.end_with_timestamp(at);
    }
}

/// A model call: `chat <model>`, ending when its `usage` event came.
fn model_span(
    tracer: &SdkTracer,
    parent: &Context,
    data: &Json,
    at: SystemTime,
    within: Option<KeyValue>,
) {
    let model = data["model"].as_str().unwrap_or("unknown").to_string();
    let took = Duration::from_millis(data["latency_ms"].as_u64().unwrap_or(0));
    let count = |field: &str| data[field].as_i64().unwrap_or(0);
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "chat"),
        KeyValue::new("gen_ai.request.model", model.clone()),
        KeyValue::new("gen_ai.response.model", model.clone()),
        KeyValue::new("gen_ai.usage.input_tokens", count("prompt_tokens")),
        KeyValue::new("gen_ai.usage.output_tokens", count("completion_tokens")),
        KeyValue::new(
            "gen_ai.usage.cache_read.input_tokens",
            count("cached_tokens"),
        ),
    ];
    if let Some(reason) = data["finish_reason"].as_str() {
        attributes.push(KeyValue::new(
            "gen_ai.response.finish_reasons",
            Value::Array(Array::String(vec![StringValue::from(reason.to_string())])),
        ));
    }
    if let Some(cost) = data["cost_usd"].as_f64() {
        attributes.push(KeyValue::new("heddle.cost_usd", cost));
    }
    attributes.extend(within);
    let mut span = tracer
        .span_builder(format!("chat {model}"))
        .with_kind(SpanKind::Client)
        .with_start_time(at.checked_sub(took).unwrap_or(at))
        .with_attributes(attributes)
        .start_with_context(tracer, parent);
    span.end_with_timestamp(at);
}

/// A tool call: `execute_tool <name>`.
fn tool_span(
    tracer: &SdkTracer,
    parent: &Context,
    data: &Json,
    at: SystemTime,
    within: Option<KeyValue>,
) {
    let name = data["name"].as_str().unwrap_or("unknown").to_string();
    let took = Duration::from_millis(data["duration_ms"].as_u64().unwrap_or(0));
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", name.clone()),
        KeyValue::new(
            "gen_ai.tool.call.id",
            data["id"].as_str().unwrap_or_default().to_string(),
        ),
        KeyValue::new(
            "heddle.tool.attempts",
            data["attempts"].as_i64().unwrap_or(0),
        ),
    ];
    attributes.extend(within);
    let ok = data["ok"].as_bool().unwrap_or(false);
    if !ok {
        attributes.push(KeyValue::new("error.type", "tool_error"));
    }
    let mut span = tracer
        .span_builder(format!("execute_tool {name}"))
        .with_kind(SpanKind::Internal)
        .with_start_time(at.checked_sub(took).unwrap_or(at))
        .with_attributes(attributes)
        .start_with_context(tracer, parent);
    if !ok {
        span.set_status(Status::error("the tool failed"));
    }
    span.end_with_timestamp(at);
}

impl Drop for Traces {
    fn drop(&mut self) {
        self.shutdown();
    }
}

thread_local! {
    /// The trace id the next root span on this thread gets.
    static NEXT_TRACE: std::cell::Cell<Option<TraceId>> = const { std::cell::Cell::new(None) };
}

/// Random ids, but a run's root span takes the trace id [`trace_id`]
/// gives it.
#[derive(Debug)]
struct RunTraceIds;

impl IdGenerator for RunTraceIds {
    fn new_trace_id(&self) -> TraceId {
        NEXT_TRACE
            .with(std::cell::Cell::take)
            .unwrap_or_else(|| RandomIdGenerator::default().new_trace_id())
    }

    fn new_span_id(&self) -> SpanId {
        RandomIdGenerator::default().new_span_id()
    }
}

/// A run's trace id: the first 16 bytes of SHA-256 of its id, so logs can
/// name it without asking the exporter.
pub fn trace_id(run_id: &str) -> TraceId {
    let digest = Sha256::digest(run_id.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    TraceId::from_bytes(bytes)
}

fn capture_from_env() -> bool {
    std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

fn time(at_us: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(at_us)
}

/// A JSON value as an attribute, cut to [`MAX_CONTENT`].
fn content(value: &Json) -> String {
    let mut text = value.to_string();
    if text.len() > MAX_CONTENT {
        let mut end = MAX_CONTENT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// A JSON value as an attribute value: numbers and booleans as such,
/// anything else as text.
fn scalar(value: &Json) -> Value {
    match value {
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Value::I64)
            .or_else(|| n.as_f64().map(Value::F64))
            .unwrap_or_else(|| Value::from(n.to_string())),
        Json::String(s) => Value::from(s.clone()),
        other => Value::from(content(other)),
    }
}
