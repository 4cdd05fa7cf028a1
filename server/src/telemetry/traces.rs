//! Runs as OpenTelemetry traces, exported over OTLP/HTTP (protobuf) by the
//! opentelemetry crates' batch exporter, off the run's path.
//!
//! The span tree of a run follows its events, with their own timestamps:
//! `run <graph>` (its trace id derived from the run id, so a log line with
//! the run's `trace_id` finds it) holds `step <n>` spans, which hold
//! `node <id>` spans, which hold a `chat <model>` span per model call and
//! an `execute_tool <name>` span per tool call, named and attributed by
//! the GenAI semantic conventions (model, tokens, finish reason, tool).
//! Prompts, replies and node outputs are exported only when
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heddle_engine::run::{Event, EventPayload};
use opentelemetry::trace::{
    Span as _, SpanId, SpanKind, Status, TraceContextExt, TraceId, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SdkTracer, SdkTracerProvider};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// Why traces cannot be exported.
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces over OTLP: {0}")]
pub struct TracesError(String);

/// The trace export and the spans of the runs in progress.
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// Export prompts, replies and node outputs.
    capture: bool,
    runs: Mutex<HashMap<String, RunSpans>>,
}

/// The open spans of one run.
struct RunSpans {
    run: Context,
    step: Option<Context>,
    /// By node id: the node's open executions.
    nodes: HashMap<String, Vec<Context>>,
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
            runs: Mutex::new(HashMap::new()),
        }
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

    fn runs(&self) -> MutexGuard<'_, HashMap<String, RunSpans>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One event of a run of `graph_id`.
    pub fn observe(&self, graph_id: &str, event: &Event) {
        let at = time(event.at_us);
        let run_id = event.run_id.as_str();
        match &event.payload {
            EventPayload::Custom { name, .. } if name == "token" => {}
            EventPayload::RunStarted { graph, input, .. } => {
                let mut attributes = vec![
                    KeyValue::new("heddle.run.id", run_id.to_string()),
                    KeyValue::new("heddle.graph.id", graph_id.to_string()),
                    KeyValue::new("heddle.graph.name", graph.clone()),
                ];
                if self.capture {
                    attributes.push(KeyValue::new("heddle.run.input", content(input)));
                }
                self.begin_run(run_id, format!("run {graph}"), at, attributes);
            }
            EventPayload::RunResumed { step, .. } if !self.runs().contains_key(run_id) => {
                let attributes = vec![
                    KeyValue::new("heddle.run.id", run_id.to_string()),
                    KeyValue::new("heddle.graph.id", graph_id.to_string()),
                    KeyValue::new("heddle.run.resumed_at_step", i64::from(*step)),
                ];
                self.begin_run(run_id, "run (resumed)".to_string(), at, attributes);
            }
            EventPayload::StepStarted { step, tasks } => {
                let mut runs = self.runs();
                let Some(spans) = runs.get_mut(run_id) else {
                    return;
                };
                let span = self
                    .tracer
                    .span_builder(format!("step {step}"))
                    .with_start_time(at)
                    .with_attributes(vec![
                        KeyValue::new("heddle.step", i64::from(*step)),
                        KeyValue::new("heddle.step.tasks", tasks.len() as i64),
                    ])
                    .start_with_context(&self.tracer, &spans.run);
                spans.step = Some(spans.run.with_span(span));
            }
            EventPayload::StepFinished { .. } => {
                let mut runs = self.runs();
                if let Some(step) = runs.get_mut(run_id).and_then(|spans| spans.step.take()) {
                    step.span().end_with_timestamp(at);
                }
            }
            EventPayload::NodeStarted {
                step,
                node,
                attempt,
                ..
            } => {
                let mut runs = self.runs();
                let Some(spans) = runs.get_mut(run_id) else {
                    return;
                };
                let parent = spans.step.as_ref().unwrap_or(&spans.run);
                let span = self
                    .tracer
                    .span_builder(format!("node {node}"))
                    .with_start_time(at)
                    .with_attributes(vec![
                        KeyValue::new("heddle.node.id", node.to_string()),
                        KeyValue::new("heddle.step", i64::from(*step)),
                        KeyValue::new("heddle.node.attempt", i64::from(*attempt)),
                    ])
                    .start_with_context(&self.tracer, parent);
                let cx = parent.with_span(span);
                spans.nodes.entry(node.to_string()).or_default().push(cx);
            }
            EventPayload::NodeSucceeded {
                node,
                update,
                route,
                ..
            } => {
                self.end_node(run_id, node.as_str(), at, |span| {
                    if let Some(route) = route {
                        span.set_attribute(KeyValue::new("heddle.node.route", route.clone()));
                    }
                    if self.capture {
                        span.set_attribute(KeyValue::new("heddle.node.update", content(update)));
                    }
                });
            }
            EventPayload::NodeRetrying { node, error, .. }
            | EventPayload::NodeFailed { node, error, .. } => {
                self.end_node(run_id, node.as_str(), at, |span| {
                    span.set_status(Status::error(error.clone()));
                });
            }
            EventPayload::Custom { node, name, data } => {
                let runs = self.runs();
                let Some(parent) = runs
                    .get(run_id)
                    .and_then(|spans| spans.nodes.get(node.as_str()))
                    .and_then(|open| open.last())
                else {
                    return;
                };
                match name.as_str() {
                    "usage" => self.model_span(parent, data, at),
                    "tool_result" => self.tool_span(parent, data, at),
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
                        parent
                            .span()
                            .add_event_with_timestamp(name.clone(), at, attributes);
                    }
                    _ => {}
                }
            }
            EventPayload::RunFinished { output, .. } => {
                let capture = self.capture.then(|| content(output));
                self.end_run(run_id, at, |span| {
                    span.set_status(Status::Ok);
                    if let Some(output) = capture {
                        span.set_attribute(KeyValue::new("heddle.run.output", output));
                    }
                });
            }
            EventPayload::RunFailed { error, .. } => {
                self.end_run(run_id, at, |span| {
                    span.set_status(Status::error(error.clone()))
                });
            }
            EventPayload::RunCancelled { .. } => {
                self.end_run(run_id, at, |span| {
                    span.set_attribute(KeyValue::new("heddle.run.status", "cancelled"));
                });
            }
            EventPayload::RunInterrupted { .. } => {
                self.end_run(run_id, at, |span| {
                    span.set_attribute(KeyValue::new("heddle.run.status", "interrupted"));
                });
            }
            _ => {}
        }
    }

    fn begin_run(&self, run_id: &str, name: String, at: SystemTime, attributes: Vec<KeyValue>) {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_start_time(at)
            .with_attributes(attributes);
        // The root's trace id is the run's: the id generator takes it from
        // here while this thread builds the span.
        NEXT_TRACE.with(|next| next.set(Some(trace_id(run_id))));
        let span = span.start_with_context(&self.tracer, &Context::new());
        NEXT_TRACE.with(|next| next.set(None));
        self.runs().insert(
            run_id.to_string(),
            RunSpans {
                run: Context::new().with_span(span),
                step: None,
                nodes: HashMap::new(),
            },
        );
    }

    fn end_node(
        &self,
        run_id: &str,
        node: &str,
        at: SystemTime,
        finish: impl FnOnce(&opentelemetry::trace::SpanRef<'_>),
    ) {
        let mut runs = self.runs();
        let Some(open) = runs
            .get_mut(run_id)
            .and_then(|spans| spans.nodes.get_mut(node))
        else {
            return;
        };
        if open.is_empty() {
            return;
        }
        let cx = open.remove(0);
        let span = cx.span();
        finish(&span);
        span.end_with_timestamp(at);
    }

    fn end_run(
        &self,
        run_id: &str,
        at: SystemTime,
        finish: impl FnOnce(&opentelemetry::trace::SpanRef<'_>),
    ) {
        let Some(spans) = self.runs().remove(run_id) else {
            return;
        };
        for open in spans.nodes.values() {
            for cx in open {
                cx.span().end_with_timestamp(at);
            }
        }
        if let Some(step) = &spans.step {
            step.span().end_with_timestamp(at);
        }
        let span = spans.run.span();
        finish(&span);
        span.end_with_timestamp(at);
    }

    /// A model call: `chat <model>`, ending when its `usage` event came.
    fn model_span(&self, parent: &Context, data: &Json, at: SystemTime) {
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
        let span = self
            .tracer
            .span_builder(format!("chat {model}"))
            .with_kind(SpanKind::Client)
            .with_start_time(at.checked_sub(took).unwrap_or(at))
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        let mut span = span;
        span.end_with_timestamp(at);
    }

    /// A tool call: `execute_tool <name>`.
    fn tool_span(&self, parent: &Context, data: &Json, at: SystemTime) {
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
        let ok = data["ok"].as_bool().unwrap_or(false);
        if !ok {
            attributes.push(KeyValue::new("error.type", "tool_error"));
        }
        let mut span = self
            .tracer
            .span_builder(format!("execute_tool {name}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(at.checked_sub(took).unwrap_or(at))
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        if !ok {
            span.set_status(Status::error("the tool failed"));
        }
        span.end_with_timestamp(at);
    }
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
