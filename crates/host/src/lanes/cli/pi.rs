//! `--cli pi`: pi in print mode with JSON events. Owns the command line and
//! the parser of its events (`session`, `message_end`, `tool_execution_end`,
//! `auto_retry_*`, `agent_end`).
//!
//! `pi -p --mode json [--model M] [--tools read,edit,write,grep,find,ls]
//! [--session ID] ARGS`, the prompt on stdin. pi has no approvals: every
//! enabled tool runs unasked, so workspace takes the shell away (pi cannot
//! sandbox it). In `--mode json` an API error still exits 0: the last
//! assistant message's `stopReason: "error"` is what says it failed.
//!
//! Each assistant `message_end` carries its model request's usage: the
//! context used is that request's, sent mid-turn; the window is the model
//! table's (pi's own model config holds one but its output does not).

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
use serde_json::Value;

use super::common::{
    Tally, at, bool_at, message, parse, resume_id, stdin_plan, str_at, stray, text_of, tool_call,
    tool_result, u64_at,
};
use super::context_windows::ModelWindow;
use super::{CliConnector, CommandPlan, ContextWindows, Outcome, TurnContext, TurnParser};

/// The tools of `--permissions workspace`: files, no shell.
const WORKSPACE_TOOLS: &str = "read,edit,write,grep,find,ls";

/// The pi connector.
#[derive(Debug)]
pub(super) struct Pi;

impl CliConnector for Pi {
    fn kind(&self) -> CliKind {
        CliKind::Pi
    }

    fn program(&self) -> &'static str {
        "pi"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        let resume = resume_id(turn)?;
        let spec = turn.spec;
        let mut plan = stdin_plan(turn.program, &["-p", "--mode", "json"]);
        plan.opt("--model", spec.model.as_deref());
        match spec.permissions {
            Permissions::Default => {
                plan.note(
                    "pi has no approvals: its default tools (read, bash, edit, write) run unasked",
                );
            }
            Permissions::Workspace => {
                plan.args(["--tools", WORKSPACE_TOOLS]).note(
                    "pi cannot sandbox commands: workspace gives it file tools only (read, edit, write, grep, find, ls), no shell",
                );
            }
            Permissions::Bypass => {
                plan.note("pi runs every tool unasked");
            }
        }
        plan.opt("--session", resume.as_deref()).args(&spec.args);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        Box::new(PiParser::new(ModelWindow::new(
            CliKind::Pi,
            spec.model.as_deref(),
            windows,
        )))
    }
}

/// Parses one turn of `pi --mode json`.
#[derive(Debug)]
struct PiParser {
    tally: Tally,
    /// The model and its window.
    window: ModelWindow,
}

impl PiParser {
    fn new(window: ModelWindow) -> Self {
        Self {
            tally: Tally::default(),
            window,
        }
    }

    fn message_end(&mut self, v: &Value) -> Vec<EventKind> {
        let Some(msg) = at(v, &["message"]).filter(|m| str_at(m, &["role"]) == Some("assistant"))
        else {
            return Vec::new();
        };
        let mut events = Vec::new();
        let mut text = Vec::new();
        for block in at(msg, &["content"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match str_at(block, &["type"]) {
                Some("text") => text.push(str_at(block, &["text"]).unwrap_or("")),
                Some("toolCall") => events.push(tool_call(
                    str_at(block, &["name"]).unwrap_or("?"),
                    str_at(block, &["id"]),
                    at(block, &["arguments"]),
                )),
                _ => {}
            }
        }
        let text = text.join("\n");
        if let Some(m) = message(&text) {
            events.insert(0, m);
            self.tally.result = Some(text);
        }
        self.add_usage(msg);
        events.push(self.tally.usage_event());
        match str_at(msg, &["stopReason"]) {
            Some(reason @ ("error" | "aborted")) => {
                let why = str_at(msg, &["errorMessage"]).unwrap_or(reason);
                events.extend(self.tally.fail(why));
            }
            // A later answer means a retry succeeded.
            _ => self.tally.error = None,
        }
        events
    }

    fn add_usage(&mut self, msg: &Value) {
        let Some(u) = at(msg, &["usage"]) else {
            return;
        };
        let read = u64_at(u, &["cacheRead"]);
        let input = u64_at(u, &["input"]) + read + u64_at(u, &["cacheWrite"]);
        let output = u64_at(u, &["output"]);
        let usage = &mut self.tally.usage;
        usage.input += input;
        usage.output += output;
        usage.cached += read;
        self.window.saw(str_at(msg, &["model"]));
        self.tally.context(input + output, self.window.tokens());
        if let Some(cost) = at(u, &["cost", "total"]).and_then(Value::as_f64) {
            *self.tally.cost_usd.get_or_insert(0.0) += cost;
        }
    }
}

impl TurnParser for PiParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        match str_at(&v, &["type"]) {
            Some("session") => {
                self.tally.session = str_at(&v, &["id"]).map(str::to_owned);
                Vec::new()
            }
            Some("agent_start") => {
                self.tally.ended = false;
                Vec::new()
            }
            Some("agent_end") => {
                self.tally.ended = true;
                Vec::new()
            }
            Some("message_end") => self.message_end(&v),
            Some("tool_execution_end") => vec![tool_result(
                str_at(&v, &["toolCallId"]),
                bool_at(&v, &["isError"]),
                &text_of(at(&v, &["result", "content"])),
            )],
            Some("auto_retry_start") => vec![EventKind::Note {
                text: format!(
                    "retrying after: {} (attempt {} of {})",
                    str_at(&v, &["errorMessage"]).unwrap_or("an error"),
                    u64_at(&v, &["attempt"]),
                    u64_at(&v, &["maxAttempts"]),
                ),
            }],
            Some("auto_retry_end") if !bool_at(&v, &["success"]) => {
                let why = str_at(&v, &["finalError"]).unwrap_or("retries failed");
                self.tally.fail(why).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        self.tally.outcome(exit, stderr_tail)
    }
}

#[cfg(test)]
#[path = "pi_tests.rs"]
mod tests;
