//! A real MCP client (rmcp's) driving `flotilla mcp` as a child process,
//! for the agents tests: calls a tool and returns its structured content,
//! or the tool error's envelope.

use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use crate::{TestHome, flotilla_bin};

/// A connected client.
pub type McpClient = RunningService<RoleClient, ()>;

/// Starts `flotilla --home HOME mcp [--as NAME]` and connects to it.
pub async fn connect(home: &TestHome, as_peer: Option<&str>) -> McpClient {
    let mut cmd = tokio::process::Command::new(flotilla_bin());
    cmd.arg("--home").arg(home.path()).arg("mcp");
    if let Some(name) = as_peer {
        cmd.args(["--as", name]);
    }
    cmd.env_remove("FLOTILLA_PEER").env_remove("FLOTILLA_HOME");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn flotilla mcp");
    ().serve(transport).await.expect("MCP handshake")
}

/// Calls `tool` with `args` (a JSON object).
pub async fn call(client: &McpClient, tool: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.call_tool(params).await.expect("a tool result")
}

/// Calls a tool that must succeed; returns its structured content.
pub async fn ok(client: &McpClient, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool} failed: {result:?}");
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(
        !text.is_empty() && !text.contains('\n'),
        "{tool}: one short line of text, got {text:?}"
    );
    result.structured_content.expect("structured content")
}

/// Calls a tool that must fail; returns the envelope's `error` object.
pub async fn error(client: &McpClient, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_eq!(result.is_error, Some(true), "{tool} must fail: {result:?}");
    result.structured_content.expect("an error envelope")["error"].clone()
}
