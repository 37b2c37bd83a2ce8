//! `--cli opencode`: `opencode run --format json`. Owns the command line
//! and the parser of its events (`step_start`, `text`, `tool_use`,
//! `step_finish`, `error`), each carrying the `sessionID`.
//!
//! `opencode run --format json [-m PROVIDER/MODEL] [--auto]
//! (--title T | --session ID) ARGS`, the prompt on stdin (read when it is
//! not a terminal). A new session gets a title so that opencode makes no
//! extra model call to invent one. Permissions go through
//! `OPENCODE_PERMISSION` (it overrides the user's config): workspace allows
//! edits and asks for the shell (in `run`, asks are refused), bypass allows
//! both and `--auto` approves any other ask. opencode ignores SIGINT: an
//! interrupt ends it with SIGTERM once the grace period is over.
//!
//! Each `step_finish` carries its model request's tokens: the context used
//! is that request's, sent mid-turn; the window is the model table's for
//! the lane's `-m` (opencode's output names no model or window).

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
use serde_json::Value;

use super::common::{
    Tally, at, message, parse, resume_id, stdin_plan, str_at, stray, tool_call, tool_result, u64_at,
};
use super::{CliConnector, CommandPlan, ContextWindows, Outcome, TurnContext, TurnParser};

/// `OPENCODE_PERMISSION` for `--permissions workspace`.
const WORKSPACE: &str = r#"{"edit":"allow","bash":"ask"}"#;
/// `OPENCODE_PERMISSION` for `--permissions bypass`.
const BYPASS: &str = r#"{"edit":"allow","bash":"allow"}"#;

/// The opencode connector.
#[derive(Debug)]
pub(super) struct Opencode;

impl CliConnector for Opencode {
    fn kind(&self) -> CliKind {
        CliKind::Opencode
    }

    fn program(&self) -> &'static str {
        "opencode"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        let resume = resume_id(turn)?;
        let spec = turn.spec;
        let mut plan = stdin_plan(turn.program, &["run", "--format", "json"]);
        if let Some(server) = turn.flotilla {
            super::mcp::opencode(&mut plan, server);
        }
        plan.opt("-m", spec.model.as_deref());
        match spec.permissions {
            Permissions::Default => {}
            Permissions::Workspace => {
                plan.env("OPENCODE_PERMISSION", WORKSPACE).note(
                    "opencode cannot sandbox commands: workspace allows edits and refuses the shell",
                );
            }
            Permissions::Bypass => {
                plan.args(["--auto"])
                    .env("OPENCODE_PERMISSION", BYPASS)
                    .note("opencode runs with every permission allowed (--auto)");
            }
        }
        match &resume {
            Some(id) => plan.args(["--session", id]),
            None => plan.args(["--title", &format!("flotilla lane {}", spec.name)]),
        };
        plan.note(
            "opencode ignores SIGINT: an interrupt stops it with SIGTERM after the grace period",
        )
        .args(&spec.args);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        Box::new(OpencodeParser::new(
            windows.window(CliKind::Opencode, spec.model.as_deref()),
        ))
    }
}

/// Parses one turn of `opencode run --format json`.
#[derive(Debug)]
struct OpencodeParser {
    tally: Tally,
    /// The model's context window.
    window: u64,
}

impl OpencodeParser {
    fn new(window: u64) -> Self {
        Self {
            tally: Tally::default(),
            window,
        }
    }

    fn tool(&mut self, part: &Value) -> Vec<EventKind> {
        let id = str_at(part, &["callID"]);
        let state = at(part, &["state"]).unwrap_or(&Value::Null);
        let call = tool_call(
            str_at(part, &["tool"]).unwrap_or("?"),
            id,
            at(state, &["input"]),
        );
        let status = str_at(state, &["status"]).unwrap_or("");
        if !matches!(status, "completed" | "error") {
            return vec![call];
        }
        let output = str_at(state, &["output"])
            .or_else(|| str_at(state, &["error"]))
            .unwrap_or("");
        vec![call, tool_result(id, status == "error", output)]
    }

    fn step_finish(&mut self, part: &Value) -> Vec<EventKind> {
        let read = u64_at(part, &["tokens", "cache", "read"]);
        let write = u64_at(part, &["tokens", "cache", "write"]);
        let input = u64_at(part, &["tokens", "input"]) + read + write;
        let output = u64_at(part, &["tokens", "output"]) + u64_at(part, &["tokens", "reasoning"]);
        let usage = &mut self.tally.usage;
        usage.input += input;
        usage.output += output;
        usage.cached += read;
        self.tally.context(input + output, self.window);
        if let Some(cost) = at(part, &["cost"]).and_then(Value::as_f64) {
            *self.tally.cost_usd.get_or_insert(0.0) += cost;
        }
        vec![self.tally.usage_event()]
    }

    fn error(&mut self, v: &Value) -> Vec<EventKind> {
        let error = at(v, &["error"]).unwrap_or(&Value::Null);
        let text = str_at(error, &["data", "message"])
            .or_else(|| str_at(error, &["message"]))
            .or_else(|| str_at(error, &["name"]))
            .unwrap_or("error");
        let why = match at(error, &["data", "statusCode"]).and_then(Value::as_u64) {
            Some(code) => format!("{text} (HTTP {code})"),
            None => text.to_owned(),
        };
        self.tally.fail(&why).into_iter().collect()
    }
}

impl TurnParser for OpencodeParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        if let Some(id) = str_at(&v, &["sessionID"]) {
            self.tally.session = Some(id.to_owned());
        }
        let part = at(&v, &["part"]).unwrap_or(&Value::Null);
        match str_at(&v, &["type"]) {
            Some("text") => {
                let text = str_at(part, &["text"]).unwrap_or("");
                self.tally.result = Some(text.to_owned());
                message(text).into_iter().collect()
            }
            Some("tool_use") => self.tool(part),
            Some("step_finish") => self.step_finish(part),
            Some("error") => self.error(&v),
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        // `run` has no final event: a clean exit without an error is done.
        self.tally.ended = exit == Some(0);
        self.tally.outcome(exit, stderr_tail)
    }
}

#[cfg(test)]
#[path = "opencode_tests.rs"]
mod tests;
