//! Tools from an MCP server: a real MCP server (rmcp's server side) on an
//! in-memory connection, its tools listed, called by name, and run by a
//! graph's `tools` node.

use std::sync::Arc;

use heddle_engine::tools::Tool;
use heddle_engine::tools::mcp::tools_of;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpToolSpec,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, json};

/// An MCP server with one tool, `shout`, and one that always fails.
struct Shouter;

impl ServerHandler for Shouter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: Map<String, serde_json::Value> = serde_json::from_value(
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
        .unwrap();
        Ok(ListToolsResult::with_all_items(vec![
            McpToolSpec::new("shout", "Upper-cases text", schema.clone()),
            McpToolSpec::new("broken", "Always fails", schema),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .and_then(|args| {
                args.get("text")
                    .and_then(|t| t.as_str())
                    .map(str::to_uppercase)
            })
            .unwrap_or_default();
        Ok(match request.name.as_ref() {
            "shout" => CallToolResult::success(vec![ContentBlock::text(text)]).into(),
            _ => CallToolResult::error(vec![ContentBlock::text("it broke")]).into(),
        })
    }
}

async fn connected() -> Vec<heddle_engine::tools::mcp::McpTool> {
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let server = Shouter.serve(server_side).await.unwrap();
        let _ = server.waiting().await;
    });
    let client = ().serve(client_side).await.unwrap();
    tools_of("loud", Arc::new(client)).await.unwrap()
}

#[tokio::test]
async fn an_mcp_servers_tools_are_listed_and_called() {
    let tools = connected().await;
    let names: Vec<String> = tools.iter().map(|tool| tool.spec().name).collect();
    assert_eq!(names, ["loud__shout", "loud__broken"]);
    assert_eq!(
        tools[0].spec().parameters["properties"]["text"]["type"],
        "string"
    );
    assert_eq!(
        tools[0].call(json!({"text": "hi"})).await.unwrap(),
        json!("HI")
    );
    assert_eq!(
        tools[1]
            .call(json!({"text": "hi"}))
            .await
            .unwrap_err()
            .message,
        "it broke"
    );
}

#[tokio::test]
async fn a_graph_calls_an_mcp_tool_through_its_tools_node() {
    let mut registry = heddle_engine::Registry::new();
    for tool in connected().await {
        registry = registry.with_tool(tool);
    }
    let graph = heddle_engine::CompiledGraph::from_json(
        &json!({
            "format_version": 2, "name": "mcp",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "tools", "kind": "tools", "config": {"tools": ["loud__shout"]}}],
            "edges": [{"id": "e", "from": "start", "to": "tools"}]
        })
        .to_string(),
        &registry,
    )
    .unwrap();
    let input = json!({"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "name": "loud__shout", "arguments": "{\"text\": \"quiet please\"}"}
    ]}]});
    let run = heddle_engine::run::Run::new(
        Arc::new(graph),
        heddle_engine::RunId::from("m"),
        input,
        heddle_engine::run::RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    assert_eq!(output.state["messages"][1]["content"], "QUIET PLEASE");
    assert_eq!(output.state["messages"][1]["tool_call_id"], "c1");
}
