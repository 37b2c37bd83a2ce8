//! One module per CLI behind one trait: how to build a turn's command line,
//! environment and config, and how to read its output into the normalized
//! lane events (`flotilla.lane.v1`), its native session id, usage and errors.
//!
//! Connectors are plain logic; the lane's connector actor runs the process
//! and feeds output lines to a [`TurnParser`]. They never copy credentials
//! or change the user's configuration files.

mod claude;
mod codex;
mod codex_rollout;
mod common;
mod context_windows;
mod exec;
#[cfg(test)]
mod fuzz_tests;
mod gemini;
mod grok;
mod interactive;
mod mcp;
mod opencode;
mod pi;
mod qwen;
mod stream_json;

use std::path::Path;

pub use context_windows::ContextWindows;
pub use interactive::{InteractiveContext, InteractivePlan, interactive_plan};
pub(crate) use mcp::settings_with_server as mcp_settings_with_server;

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, ErrorSignal, LaneSpec, TurnStatus, Usage};

/// What a connector needs to build one turn's command.
#[derive(Debug)]
pub struct TurnContext<'a> {
    /// The lane.
    pub spec: &'a LaneSpec,
    /// The executable to run (resolved from PATH or config).
    pub program: &'a str,
    /// Whether the turn continues the native session.
    pub resume: bool,
    /// The native session to continue, if any.
    pub native_session: Option<&'a str>,
    /// The prompt, for CLIs that only take it as an argument.
    pub prompt: &'a str,
    /// The prompt file (fed to stdin when the plan asks for it).
    pub prompt_file: &'a Path,
    /// Flotilla's MCP server for this lane, to register for this run only
    /// where the CLI takes MCP servers per run.
    pub flotilla: Option<&'a super::identity::McpServer>,
}

/// How to run one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPlan {
    /// The command line, program first.
    pub argv: Vec<String>,
    /// Environment added to the daemon's.
    pub env: Vec<(String, String)>,
    /// Feed the prompt file to stdin (else stdin is empty).
    pub stdin_prompt: bool,
    /// Notes for the lane's events (e.g. the bypass warning).
    pub notes: Vec<String>,
    /// A private configuration directory to prepare before the command
    /// starts (Gemini CLI, Qwen Code: the user's own, plus Flotilla's MCP
    /// server).
    pub cli_home: Option<Box<CliHome>>,
}

/// A lane's private configuration directory for a CLI: every entry of the
/// user's own directory linked in (login, history, trusted folders...),
/// except the settings file, which is the user's settings with Flotilla's
/// MCP server added. The user's files are never written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliHome {
    /// The private directory (created 0700).
    pub dir: std::path::PathBuf,
    /// The user's own directory, whose entries are linked.
    pub source: std::path::PathBuf,
    /// The settings file's name in both.
    pub settings: &'static str,
    /// The `mcpServers` entry to add, by name.
    pub server: (String, serde_json::Value),
    /// Hook groups to add, by event (interactive sessions' live delivery),
    /// after the user's own hooks of that event.
    pub hooks: serde_json::Map<String, serde_json::Value>,
}

/// How a turn ended, as the CLI's output tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Completed or failed (the lane decides interrupted and timed out).
    pub failed: bool,
    /// The answer.
    pub result: Option<String>,
    /// The error, when failed.
    pub error: Option<String>,
    /// Tokens.
    pub usage: Usage,
    /// Context window.
    pub context_window: Option<u64>,
    /// Share of the window in use.
    pub context_used_pct: Option<f64>,
    /// Cost.
    pub cost_usd: Option<f64>,
    /// The CLI's session id.
    pub native_session_id: Option<String>,
    /// What the CLI's structured output said about a failure.
    pub signal: ErrorSignal,
}

impl Outcome {
    /// The status this outcome means.
    pub fn status(&self) -> TurnStatus {
        if self.failed {
            TurnStatus::Failed
        } else {
            TurnStatus::Completed
        }
    }
}

/// Reads one turn's output.
pub trait TurnParser: Send + std::fmt::Debug {
    /// One complete line of stdout.
    fn line(&mut self, line: &str) -> Vec<EventKind>;
    /// The process ended with `exit` (None: killed before the shim could
    /// tell); `stderr_tail` is the end of its stderr.
    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome;
}

/// One CLI.
pub trait CliConnector: Send + Sync + std::fmt::Debug {
    /// Which CLI.
    fn kind(&self) -> CliKind;
    /// The executable's usual name.
    fn program(&self) -> &'static str;
    /// Whether `resume` can continue a native session.
    fn supports_resume(&self) -> bool;
    /// The command for one turn; an error says what is missing.
    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String>;
    /// A parser for one turn's output of lane `spec` (whose environment
    /// may say where the CLI keeps its state); `windows` is the model
    /// table, for CLIs that do not tell their context window.
    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser>;
}

/// The connector of a CLI.
pub fn connector(kind: CliKind) -> Option<&'static dyn CliConnector> {
    match kind {
        CliKind::Exec => Some(&exec::Exec),
        CliKind::Claude => Some(&claude::Claude),
        CliKind::Codex => Some(&codex::Codex),
        CliKind::Qwen => Some(&qwen::Qwen),
        CliKind::Gemini => Some(&gemini::Gemini),
        CliKind::Pi => Some(&pi::Pi),
        CliKind::Opencode => Some(&opencode::Opencode),
        CliKind::Grok => Some(&grok::Grok),
    }
}

/// The last `max` bytes of a text, from a line start when possible.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.trim_end().to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = &text[start..];
    let cut = cut.find('\n').map_or(cut, |i| &cut[i + 1..]);
    cut.trim_end().to_owned()
}
