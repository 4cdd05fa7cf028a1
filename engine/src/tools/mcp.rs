//! Tools from MCP servers (feature `mcp`, on rmcp). A server is started as
//! a child process or reached over streamable HTTP, as the application's
//! configuration declares (a graph can only name the tools, never a
//! command); each of its tools becomes a [`Tool`] named
//! `<server>__<tool>`.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use serde_json::Value;

use super::{Tool, ToolError, ToolFuture};
use crate::model::ToolSpec;

/// A connected MCP server.
pub type McpClient = Arc<RunningService<RoleClient, ()>>;

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum McpServer {
    /// A program speaking MCP on its standard input and output.
    Command { command: Vec<String> },
    /// A streamable-HTTP endpoint.
    Url { url: String },
}

/// One tool of an MCP server.
pub struct McpTool {
    spec: ToolSpec,
    remote: String,
    client: McpClient,
}

/// Connects to a server and returns its tools, named `<server>__<tool>`.
pub async fn connect(name: &str, server: &McpServer) -> Result<Vec<McpTool>, ToolError> {
    let client = match server {
        McpServer::Command { command } => {
            let (program, args) = command.split_first().ok_or_else(|| {
                ToolError::new(format!("MCP server `{name}` has an empty command"))
            })?;
            let mut process = tokio::process::Command::new(program);
            process.args(args);
            let transport = rmcp::transport::TokioChildProcess::new(process).map_err(|error| {
                ToolError::new(format!("cannot start MCP server `{name}`: {error}"))
            })?;
            ().serve(transport).await.map_err(|error| {
                ToolError::new(format!("MCP server `{name}` did not start: {error}"))
            })?
        }
        McpServer::Url { url } => {
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone());
            ().serve(transport).await.map_err(|error| {
                ToolError::new(format!(
                    "cannot reach MCP server `{name}` at {url}: {error}"
                ))
            })?
        }
    };
    tools_of(name, Arc::new(client)).await
}

/// The tools of a connected client.
pub async fn tools_of(name: &str, client: McpClient) -> Result<Vec<McpTool>, ToolError> {
    let listed = client.list_all_tools().await.map_err(|error| {
        ToolError::new(format!(
            "MCP server `{name}` did not list its tools: {error}"
        ))
    })?;
    Ok(listed
        .into_iter()
        .map(|tool| McpTool {
            spec: ToolSpec {
                name: format!("{name}__{}", tool.name),
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                parameters: Value::Object((*tool.input_schema).clone()),
            },
            remote: tool.name.to_string(),
            client: Arc::clone(&client),
        })
        .collect())
}

impl McpTool {
    async fn invoke(&self, arguments: Value) -> Result<Value, ToolError> {
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => return Err(ToolError::new("MCP tools take an object of arguments")),
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        let result = self
            .client
            .call_tool(params)
            .await
            .map_err(|error| ToolError::new(format!("the MCP call failed: {error}")))?;
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .collect();
        let value = match result.structured_content {
            Some(structured) => structured,
            None => Value::String(text.join("\n")),
        };
        if result.is_error == Some(true) {
            return Err(ToolError::new(match value {
                Value::String(text) => text,
                other => other.to_string(),
            }));
        }
        Ok(value)
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(self.invoke(arguments))
    }
}
