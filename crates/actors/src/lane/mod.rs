//! Lanes: supervised worker sessions of one CLI. This module holds the plain
//! data and rules (no processes, no clock): what a lane is ([`LaneSpec`],
//! [`LaneRecord`]), its state machine ([`LaneRecord::begin_turn`] and
//! friends), the normalized event vocabulary (`flotilla.lane.v1`, in
//! [`events`]) and the result of a turn.
//!
//! The host's lane actors drive these types and carry out the effects; the
//! connectors (one per CLI) turn each CLI's output into [`events::EventKind`]s.

pub mod answers;
pub mod errors;
pub mod events;
pub mod hold;
pub mod input;
pub mod resets;
mod state;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use errors::{ErrorClass, ErrorSignal, classify};
pub use state::{LaneError, LanePhase, LaneRecord, RunningTurn, TurnPlan};

use crate::model::Timestamp;
use crate::names::{GroupName, PeerId, PeerName};

/// Which CLI a lane runs.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CliKind {
    /// A plain command; the prompt on its stdin.
    Exec,
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Qwen Code.
    Qwen,
    /// Gemini CLI.
    Gemini,
    /// pi.
    Pi,
    /// opencode.
    Opencode,
    /// Grok CLI.
    Grok,
}

impl CliKind {
    /// Every kind, in documentation order.
    pub const ALL: [CliKind; 8] = [
        Self::Exec,
        Self::Claude,
        Self::Codex,
        Self::Qwen,
        Self::Gemini,
        Self::Pi,
        Self::Opencode,
        Self::Grok,
    ];

    /// The name used on the command line and in config.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exec => "exec",
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Qwen => "qwen",
            Self::Gemini => "gemini",
            Self::Pi => "pi",
            Self::Opencode => "opencode",
            Self::Grok => "grok",
        }
    }
}

impl fmt::Display for CliKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CliKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|k| k.as_str()).collect();
                format!("unknown CLI {s:?}; use one of {}", names.join(", "))
            })
    }
}

/// One permission vocabulary, mapped onto each CLI's own flags.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Permissions {
    /// The CLI's own headless default.
    #[default]
    Default,
    /// Edit files in the lane's directory and run sandboxed commands.
    Workspace,
    /// Allow everything (said so in the lane's events).
    Bypass,
}

impl Permissions {
    /// Every mode, from the least allowed to the most.
    pub const ALL: [Permissions; 3] = [Self::Default, Self::Workspace, Self::Bypass];

    /// The name used on the command line, in config and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Workspace => "workspace",
            Self::Bypass => "bypass",
        }
    }
}

impl FromStr for Permissions {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown permissions {s:?}; use default, workspace or bypass"))
    }
}

impl fmt::Display for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a lane was asked for: everything but the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneSpec {
    /// The lane's name (its peer is `HOST/NAME`).
    pub name: PeerName,
    /// The CLI.
    pub cli: CliKind,
    /// Working directory (absolute).
    pub cwd: String,
    /// Model, passed to the CLI.
    pub model: Option<String>,
    /// Permission mode.
    pub permissions: Permissions,
    /// Per-turn deadline in seconds.
    pub timeout_secs: Option<u64>,
    /// Outlives its owner and takes messages as prompts (ownership only:
    /// it is auto-archived like any lane unless `auto_archive_secs` is
    /// none).
    pub persistent: bool,
    /// Archive this long after a turn ends (None: never).
    pub auto_archive_secs: Option<u64>,
    /// Groups besides the lane's and its owner's private groups.
    pub groups: Vec<GroupName>,
    /// Also join every group of the owner.
    pub inherit_groups: bool,
    /// The owner, who gets each turn's terminal status.
    pub owner: PeerId,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Arguments passed to the CLI unchanged (for exec: the command).
    pub args: Vec<String>,
    /// The stall watchdog may run an exec lane's command again (agent
    /// CLIs are restarted whatever this says; since store version 7).
    pub restart_on_stall: bool,
}

/// Token usage of a turn.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cached input tokens.
    pub cached: u64,
}

impl std::ops::AddAssign for Usage {
    /// Adds another call's or attempt's tokens (saturating).
    fn add_assign(&mut self, other: Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cached = self.cached.saturating_add(other.cached);
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The CLI finished the turn.
    Completed,
    /// The CLI or the model failed.
    Failed,
    /// The turn's deadline passed.
    TimedOut,
    /// Someone interrupted it.
    Interrupted,
    /// The process vanished while the daemon was down.
    Lost,
}

impl TurnStatus {
    /// The documented exit code of `lane run` / `lane wait`.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Completed => 0,
            Self::Failed | Self::Lost => 1,
            Self::TimedOut => 124,
            Self::Interrupted => 130,
        }
    }
}

impl fmt::Display for TurnStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Interrupted => "interrupted",
            Self::Lost => "lost",
        })
    }
}

/// The outcome of one turn: the payload of `turn.completed`, and what
/// `lane run --json` / `lane wait --json` print.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnResult {
    /// The lane's peer id.
    pub lane: PeerId,
    /// How it ended.
    pub status: TurnStatus,
    /// The process's exit code (or the signal's 128+n), if it exited.
    pub exit: Option<i32>,
    /// The final answer text.
    pub result: Option<String>,
    /// Why it failed, timed out, was interrupted or lost.
    pub error: Option<String>,
    /// Tokens used.
    pub usage: Usage,
    /// The model's context window, where the CLI tells.
    pub context_window: Option<u64>,
    /// Percentage of the window in use at the end, where known.
    pub context_used_pct: Option<f64>,
    /// Cost, where the CLI tells.
    pub cost_usd: Option<f64>,
    /// The CLI's own session id, for resume.
    pub native_session_id: Option<String>,
    /// Wall time of the turn.
    pub duration_ms: u64,
    /// When it ended.
    pub finished_at: Timestamp,
    /// Why it did not complete, as one class (`rate_limited`,
    /// `usage_limit`, `auth`, `model_error`, `cli_crash`, `cannot_start`,
    /// `timed_out`, `interrupted`, `session_not_found`, `other`); `null`
    /// when it completed, was lost, or was stored before classes existed.
    pub error_class: Option<ErrorClass>,
}

impl TurnResult {
    /// A one-line summary of turn `turn`, for the owner's inbox.
    pub fn summary_line(&self, turn: u32) -> String {
        let detail = self
            .error
            .as_deref()
            .or(self.result.as_deref())
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let detail: String = detail.chars().take(120).collect();
        format!(
            "lane {} turn {turn}: {} (exit {})",
            self.lane,
            self.status,
            self.exit.map_or("-".into(), |e| e.to_string())
        ) + if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        }
        .as_str()
    }
}

#[cfg(test)]
mod tests;
