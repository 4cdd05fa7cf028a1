//! Which models graphs get on this server and in the `heddle` commands.
//!
//! With no endpoint configured, the default is the built-in offline model,
//! so every graph runs with no key and no network. An OpenAI-compatible
//! endpoint becomes the default when configured by environment variables:
//!
//! - `HEDDLE_MODEL_BASE_URL`: the API base (`https://api.openai.com/v1`,
//!   `http://localhost:11434/v1` for Ollama, ...);
//! - `HEDDLE_MODEL`: the model name (default `gpt-4o-mini`);
//! - `HEDDLE_MODEL_API_KEY`, or `OPENAI_API_KEY`: the key, kept on the
//!   server (never sent to browsers, never logged, never in an export).
//!
//! - `HEDDLE_MODEL_JSON_SCHEMA=off`: the endpoint does not take
//!   `response_format: json_schema`, so structured output sends the schema
//!   as an instruction (an endpoint that refuses one is found out anyway,
//!   at the cost of one refused request).
//!
//! Setting only `OPENAI_API_KEY` uses OpenAI's API. A node can still ask
//! for the offline model by name (`"model": "offline"`).
//! `HEDDLE_OFFLINE_PACE_MS` sets how long the offline model takes per
//! streamed word (default 25, at most 2000): slower for demonstrations
//! and for the browser tests that watch a run animate.
//!
//! The `http_request` tool refuses addresses inside the network;
//! `HEDDLE_HTTP_ALLOW` lists hosts it may reach anyway (comma-separated).
//!
//! `HEDDLE_MCP_SERVERS` names a JSON file of MCP servers whose tools graphs
//! may use: `{"servers": {"files": {"command": ["mcp-files", "--root", "."]},
//! "search": {"url": "http://127.0.0.1:9000/mcp"}}}`. Their tools are named
//! `<server>__<tool>`. Only this file decides what runs: a graph names
//! tools, never commands. A server that does not start is logged and
//! skipped.
//!
//! `HEDDLE_TOOL_POLICIES` names a JSON file of the server's policy per
//! tool, `{"http_request": {"timeout_ms": 10000, "max_concurrent": 8,
//! "breaker": {"failures": 5}}}` (see `ToolPolicy`): graphs may be
//! stricter, never looser. `HEDDLE_PRICES` names a JSON file of model
//! prices in dollars per million tokens, put over the built-in table:
//! `{"my-model": {"input": 0.2, "cached_input": 0.1, "output": 0.8}}`. An
//! unreadable file of either stops the server with where it is wrong.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use heddle_engine::Registry;
use heddle_engine::credentials::{KeyedModels, Secret};
use heddle_engine::model::OfflineModel;
use heddle_engine::model::SharedModel;
use heddle_engine::model::openai::{OpenAiConfig, OpenAiModel};
use heddle_engine::tools::{HttpRequest, ToolPolicy};
use heddle_engine::usage::PriceTable;

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{variable}={path}: {message}")]
pub struct ConfigFileError {
    pub variable: &'static str,
    pub path: String,
    pub message: String,
}

/// The registry with the server's tool policies and prices, from the
/// files `HEDDLE_TOOL_POLICIES` and `HEDDLE_PRICES` name.
pub fn with_operator_files(registry: Registry) -> Result<Registry, ConfigFileError> {
    with_operator_files_from(registry, |name| {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    })
}

/// The same, from any source of variables (tests).
pub fn with_operator_files_from(
    mut registry: Registry,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Registry, ConfigFileError> {
    let read = |variable: &'static str, path: &str| {
        std::fs::read_to_string(path).map_err(|error| ConfigFileError {
            variable,
            path: path.to_string(),
            message: error.to_string(),
        })
    };
    if let Some(path) = var("HEDDLE_TOOL_POLICIES") {
        let text = read("HEDDLE_TOOL_POLICIES", &path)?;
        let deserializer = &mut serde_json::Deserializer::from_str(&text);
        let policies: BTreeMap<String, ToolPolicy> = serde_path_to_error::deserialize(deserializer)
            .map_err(|error| ConfigFileError {
                variable: "HEDDLE_TOOL_POLICIES",
                path: path.clone(),
                message: format!("at {}: {}", error.path(), error.inner()),
            })?;
        let known = registry.tools().names();
        for (tool, policy) in policies {
            if !known.contains(&tool) {
                return Err(ConfigFileError {
                    variable: "HEDDLE_TOOL_POLICIES",
                    path,
                    message: format!(
                        "no tool `{tool}` on this server (known: {})",
                        known.join(", ")
                    ),
                });
            }
            if let Some((field, problem)) =
                heddle_engine::tools::EffectivePolicy::problems(&policy).first()
            {
                return Err(ConfigFileError {
                    variable: "HEDDLE_TOOL_POLICIES",
                    path,
                    message: format!("at {tool}.{field}: {problem}"),
                });
            }
            registry = registry.with_tool_policy(tool, policy);
        }
    }
    if let Some(path) = var("HEDDLE_PRICES") {
        let text = read("HEDDLE_PRICES", &path)?;
        let ours = PriceTable::parse(&text).map_err(|error| ConfigFileError {
            variable: "HEDDLE_PRICES",
            path: path.clone(),
            message: format!("at {}: {}", error.path, error.message),
        })?;
        registry = registry.with_prices(PriceTable::default().with_overrides(ours));
    }
    Ok(registry)
}

/// What the default model is, for the log (never the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultModel {
    Offline,
    Endpoint {
        base_url: String,
        model: String,
        has_key: bool,
    },
}

impl std::fmt::Display for DefaultModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefaultModel::Offline => {
                f.write_str("the built-in offline model (set HEDDLE_MODEL_BASE_URL for a real one)")
            }
            DefaultModel::Endpoint {
                base_url,
                model,
                has_key,
            } => {
                write!(
                    f,
                    "{model} at {base_url}{}",
                    if *has_key { "" } else { " (no API key)" }
                )
            }
        }
    }
}

/// The registry of kinds, models and tools, from the environment.
pub fn registry() -> (Registry, DefaultModel) {
    from_vars(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
}

/// The same, from any source of variables (tests).
pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> (Registry, DefaultModel) {
    let allow: Vec<String> = var("HEDDLE_HTTP_ALLOW")
        .map(|hosts| {
            hosts
                .split(',')
                .map(|host| host.trim().to_string())
                .filter(|host| !host.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let http = HttpRequest {
        allow,
        ..HttpRequest::default()
    };
    let key = var("HEDDLE_MODEL_API_KEY").or_else(|| var("OPENAI_API_KEY"));
    let base_url = var("HEDDLE_MODEL_BASE_URL").or_else(|| {
        key.as_ref()
            .map(|_| "https://api.openai.com/v1".to_string())
    });
    let model = var("HEDDLE_MODEL").unwrap_or_else(|| "gpt-4o-mini".into());
    let json_schema = !var("HEDDLE_MODEL_JSON_SCHEMA").is_some_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    });
    let offline = offline_model(&var);
    // Nodes naming a credential use the configured endpoint (OpenAI's
    // without one) with the runner's own key.
    let keyed = EndpointModels {
        base_url: base_url
            .clone()
            .unwrap_or_else(|| "https://api.openai.com/v1".into()),
        default_model: model.clone(),
        offline: offline.clone(),
        json_schema,
    };
    let Some(base_url) = base_url else {
        let registry = Registry::new()
            .with_default_model(offline.clone())
            .with_model("offline", offline.clone())
            .with_tool(http)
            .with_keyed_models(keyed);
        return (registry, DefaultModel::Offline);
    };
    let mut config = OpenAiConfig::new(base_url.clone(), model.clone());
    config.api_key = key.clone();
    config.timeout = Duration::from_secs(120);
    config.json_schema = json_schema;
    let registry = Registry::new()
        .with_default_model(OpenAiModel::new(config))
        .with_model("offline", offline.clone())
        .with_tool(http)
        .with_keyed_models(keyed);
    (
        registry,
        DefaultModel::Endpoint {
            base_url,
            model,
            has_key: key.is_some(),
        },
    )
}

/// Models for nodes that name a credential: the server's OpenAI-compatible
/// endpoint, authenticated with the runner's secret.
struct EndpointModels {
    base_url: String,
    default_model: String,
    offline: OfflineModel,
    /// Whether the endpoint takes `response_format: json_schema`.
    json_schema: bool,
}

/// The offline model at the pace `HEDDLE_OFFLINE_PACE_MS` asks for.
fn offline_model(var: &impl Fn(&str) -> Option<String>) -> OfflineModel {
    let model = OfflineModel::new();
    match var("HEDDLE_OFFLINE_PACE_MS").and_then(|ms| ms.trim().parse::<u64>().ok()) {
        Some(ms) => model.with_pace(Duration::from_millis(ms.min(2_000))),
        None => model,
    }
}

impl KeyedModels for EndpointModels {
    fn model(&self, name: Option<&str>, key: &Secret) -> Result<SharedModel, String> {
        let model = match name {
            Some("offline") => return Ok(Arc::new(self.offline.clone())),
            None | Some("" | "default") => self.default_model.clone(),
            Some(name) => name.to_string(),
        };
        let mut config = OpenAiConfig::new(self.base_url.clone(), model);
        config.api_key = Some(key.expose().to_string());
        config.timeout = Duration::from_secs(120);
        config.json_schema = self.json_schema;
        Ok(Arc::new(OpenAiModel::new(config)))
    }
}

/// Adds the tools of the MCP servers `HEDDLE_MCP_SERVERS` lists.
pub async fn with_mcp_tools(mut registry: Registry) -> Registry {
    let Some(path) = std::env::var("HEDDLE_MCP_SERVERS")
        .ok()
        .filter(|p| !p.is_empty())
    else {
        return registry;
    };
    #[derive(serde::Deserialize)]
    struct Config {
        servers: std::collections::BTreeMap<String, heddle_engine::tools::mcp::McpServer>,
    }
    let config: Config = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(config) => config,
        Err(error) => {
            tracing::warn!(%path, %error, "cannot read the MCP server list; no MCP tools");
            return registry;
        }
    };
    for (name, server) in &config.servers {
        let connect = heddle_engine::tools::mcp::connect(name, server);
        match tokio::time::timeout(Duration::from_secs(20), connect).await {
            Ok(Ok(tools)) => {
                tracing::info!(server = %name, tools = tools.len(), "MCP server connected");
                for tool in tools {
                    registry = registry.with_tool(tool);
                }
            }
            Ok(Err(error)) => tracing::warn!(server = %name, %error, "MCP server skipped"),
            Err(_) => {
                tracing::warn!(server = %name, "MCP server did not answer within 20 s; skipped")
            }
        }
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_configuration_means_the_offline_model() {
        assert_eq!(from_vars(vars(&[])).1, DefaultModel::Offline);
    }

    #[test]
    fn an_endpoint_is_configured_and_its_key_never_shown() {
        let (_, model) = from_vars(vars(&[
            ("HEDDLE_MODEL_BASE_URL", "http://localhost:11434/v1"),
            ("HEDDLE_MODEL", "llama3.2"),
            ("HEDDLE_MODEL_API_KEY", "sk-secret"),
        ]));
        let shown = model.to_string();
        assert_eq!(shown, "llama3.2 at http://localhost:11434/v1");
        assert!(!shown.contains("sk-secret"));
        let (_, openai) = from_vars(vars(&[("OPENAI_API_KEY", "sk-x")]));
        assert_eq!(
            openai.to_string(),
            "gpt-4o-mini at https://api.openai.com/v1"
        );
    }
}
