//! The normalized lane event vocabulary, schema `flotilla.lane.v1`
//! (documented in `docs/lanes.md`). Every connector maps its CLI's output
//! onto these; the store keeps them as JSON lines, in order, per lane.

use serde::{Deserialize, Serialize};

use super::{CliKind, Permissions, TurnResult, Usage};
use crate::model::Timestamp;

/// Schema id of lane events.
pub const SCHEMA: &str = "flotilla.lane.v1";

/// One event of a lane's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneEvent {
    /// Position in the lane's log, from 1.
    pub seq: u64,
    /// When it was recorded.
    pub at: Timestamp,
    /// The turn it belongs to (0 for lane-level events).
    pub turn: u32,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type")]
pub enum EventKind {
    /// The lane was created.
    #[serde(rename = "lane.started")]
    LaneStarted {
        /// Its CLI.
        cli: CliKind,
        /// Its working directory.
        cwd: String,
        /// Its model.
        model: Option<String>,
        /// Its permission mode.
        permissions: Permissions,
    },
    /// A turn began.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// Size of the prompt.
        prompt_bytes: u64,
        /// Whether it continues the native session.
        resume: bool,
        /// The process's id.
        pid: Option<u32>,
    },
    /// Assistant text.
    #[serde(rename = "message")]
    Message {
        /// The text.
        text: String,
    },
    /// The CLI called a tool.
    #[serde(rename = "tool.call")]
    ToolCall {
        /// The tool's name as the CLI calls it.
        name: String,
        /// The call's id, when the CLI gives one.
        id: Option<String>,
        /// Its input, as JSON text.
        input: String,
    },
    /// A tool answered.
    #[serde(rename = "tool.result")]
    ToolResult {
        /// The call's id.
        id: Option<String>,
        /// Whether the tool reported an error.
        is_error: bool,
        /// Its output (cut to 8 KiB).
        output: String,
    },
    /// Token usage so far.
    #[serde(rename = "usage")]
    Usage {
        /// The counts.
        usage: Usage,
        /// The context window, when known.
        context_window: Option<u64>,
        /// The last model request's context over `context_window`, in
        /// percent (four decimals), when known.
        #[serde(default)]
        context_used_pct: Option<f64>,
    },
    /// An error the CLI reported.
    #[serde(rename = "error")]
    Error {
        /// What it said.
        message: String,
    },
    /// Something Flotilla itself did or noticed: the bypass warning, an
    /// adoption after restart, a watchdog restart.
    #[serde(rename = "note")]
    Note {
        /// What.
        text: String,
    },
    /// A turn ended.
    #[serde(rename = "turn.completed")]
    TurnCompleted(TurnResult),
}

impl LaneEvent {
    /// Encodes for the store.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// Cuts text to at most `max` bytes on a character boundary.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
