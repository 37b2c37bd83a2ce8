//! `flotilla mcp`: Flotilla's tools for an agent, over the Model Context
//! Protocol on stdio (rmcp, the official Rust SDK).
//!
//! The server acts as one peer: `--as NAME` or `FLOTILLA_PEER` (a lane's
//! processes have it), on the daemon of `--home` / `FLOTILLA_HOME`. No
//! tool takes an identity in its arguments, so a session can act only as
//! the peer it was started as. Results are structured content plus one
//! short line of text; errors are tool errors carrying the CLI's JSON
//! error envelope (code, exit, message, hint). stdout carries the
//! protocol: logs go to stderr.
//!
//! This module is the thin shell (rmcp's handler); [`catalog`] holds the
//! tools' names and schemas, [`tools`] and [`lane`] what they do.

mod catalog;
mod fleet;
mod lane;
mod tools;

use std::sync::Arc;

use anyhow::Result;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::args::McpArgs;
use crate::commands::Env;
use crate::exit::{self, OK};

/// Serves the tools on stdin/stdout until the client closes them.
pub(crate) async fn run(env: Env, a: McpArgs) -> Result<u8> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLOTILLA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
    let session = tools::Session::new(env, a.as_peer.as_deref())?;
    if session.me().is_none() {
        tracing::warn!("no identity: {}", tools::NO_IDENTITY_HINT);
    }
    let server = FlotillaMcp {
        session: Arc::new(session),
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(OK)
}

/// The rmcp handler.
#[derive(Debug, Clone)]
struct FlotillaMcp {
    session: Arc<tools::Session>,
}

fn tool(spec: &catalog::ToolSpec) -> Tool {
    let object = |v: &Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(spec.read_only);
    Tool::new(spec.name, spec.description, object(&spec.input))
        .with_raw_output_schema(object(&spec.output))
        .annotate(annotations)
}

fn success(done: tools::Done) -> CallToolResult {
    let mut result = CallToolResult::structured(done.value);
    result.content = vec![ContentBlock::text(done.line)];
    result
}

fn failure(err: &anyhow::Error) -> CallToolResult {
    let (envelope, _) = exit::envelope(err);
    let line = format!(
        "error ({}): {}",
        envelope["error"]["code"].as_str().unwrap_or("failed"),
        envelope["error"]["message"].as_str().unwrap_or_default()
    );
    let mut result = CallToolResult::structured_error(envelope);
    result.content = vec![ContentBlock::text(line)];
    result
}

impl ServerHandler for FlotillaMcp {
    fn get_info(&self) -> ServerConfig {
        let who = match self.session.me() {
            Some(me) => format!("You act as the Flotilla peer {me}."),
            None => format!("No identity is set: {}.", tools::NO_IDENTITY_HINT),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("flotilla", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Flotilla connects you to the other agents and people of your team. {who} \
                 Use list_peers to see who you can reach, send/reply to message them, inbox to read, \
                 and lane to start worker sessions and collect their results."
            ))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = catalog::tools().iter().map(tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        catalog::find(name).map(|spec| tool(&spec))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        let result = match tools::call(&self.session, &request.name, input).await {
            Ok(done) => success(done),
            Err(e) => {
                tracing::debug!(tool = %request.name, "tool error: {e:#}");
                failure(&e)
            }
        };
        Ok(result.into())
    }
}
