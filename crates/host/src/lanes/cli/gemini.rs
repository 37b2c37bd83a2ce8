//! `--cli gemini`: Gemini CLI headless. Owns the command line and the
//! parser of its `stream-json` events (`init`, `message` deltas,
//! `tool_use`, `tool_result`, `error`, `result`).
//!
//! `gemini -o stream-json [-m M] [--approval-mode auto_edit|yolo]
//! [--resume ID] ARGS`, the prompt on stdin (with no `-p`, a non-terminal
//! stdin is the prompt). `GEMINI_CLI_NO_RELAUNCH=true` keeps the work in the
//! process the shim started, so SIGINT reaches it. An API error ends with
//! `result.status: "error"` and exit code HTTP status & 0xFF (144, 244).
//!
//! Gemini tells usage only as the turn's totals per model, in `result`:
//! the last request's context is estimated as the main model's totals over
//! its requests (counted from the stream: one per round of model output
//! between tool results), exact for a turn of one request. The window is
//! the model table's.

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
use serde_json::Value;

use super::common::{
    Tally, at, message, parse, resume_id, stdin_plan, str_at, stray, tool_call, tool_result, u64_at,
};
use super::context_windows::ModelWindow;
use super::{CliConnector, CommandPlan, ContextWindows, Outcome, TurnContext, TurnParser};

/// Exit code of a headless run in a folder Gemini does not trust.
const UNTRUSTED: i32 = 55;

/// The Gemini CLI connector.
#[derive(Debug)]
pub(super) struct Gemini;

impl CliConnector for Gemini {
    fn kind(&self) -> CliKind {
        CliKind::Gemini
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        let resume = resume_id(turn)?;
        let spec = turn.spec;
        let mut plan = stdin_plan(turn.program, &["-o", "stream-json"]);
        plan.env("GEMINI_CLI_NO_RELAUNCH", "true");
        if let (Some(server), Some(lane_dir)) = (turn.flotilla, super::common::lane_dir(turn)) {
            super::mcp::gemini(&mut plan, server, &spec.env, lane_dir);
        }
        match spec.model.as_deref() {
            Some(m) => {
                plan.args(["-m", m]);
            }
            None => {
                plan.note(
                    "gemini runs without -m: its automatic model choice asks a router model first",
                );
            }
        }
        match spec.permissions {
            Permissions::Default => {}
            Permissions::Workspace => {
                plan.args(["--approval-mode", "auto_edit"]);
            }
            Permissions::Bypass => {
                plan.args(["--approval-mode", "yolo"])
                    .note("gemini runs with --approval-mode yolo: every tool is allowed");
            }
        }
        plan.opt("--resume", resume.as_deref()).args(&spec.args);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        Box::new(GeminiParser::new(ModelWindow::new(
            CliKind::Gemini,
            spec.model.as_deref(),
            windows,
        )))
    }
}

/// Parses one turn of Gemini's `stream-json`.
#[derive(Debug)]
struct GeminiParser {
    tally: Tally,
    /// Assistant text streamed since the last other event.
    pending: String,
    /// The model and its window.
    window: ModelWindow,
    /// Model requests seen so far (rounds of output between tool results).
    requests: u64,
    /// The current request's output has begun (no tool result since).
    in_request: bool,
}

impl GeminiParser {
    fn new(window: ModelWindow) -> Self {
        Self {
            tally: Tally::default(),
            pending: String::new(),
            window,
            requests: 0,
            in_request: false,
        }
    }

    /// Model output arrived: a new request unless its round is under way.
    fn output(&mut self) {
        if !self.in_request {
            self.requests += 1;
            self.in_request = true;
        }
    }

    /// Ends the assistant message being streamed: its event, and it is the
    /// answer so far.
    fn flush(&mut self) -> Option<EventKind> {
        if self.pending.is_empty() {
            return None;
        }
        let text = std::mem::take(&mut self.pending);
        let event = message(&text);
        self.tally.result = Some(text);
        event
    }

    fn event(&mut self, v: &Value) -> Vec<EventKind> {
        match str_at(v, &["type"]) {
            Some("init") => {
                self.tally.session = str_at(v, &["session_id"]).map(str::to_owned);
                self.window.saw(str_at(v, &["model"]));
                Vec::new()
            }
            Some("tool_use") => {
                self.output();
                vec![tool_call(
                    str_at(v, &["tool_name"]).unwrap_or("?"),
                    str_at(v, &["tool_id"]),
                    at(v, &["parameters"]),
                )]
            }
            Some("tool_result") => {
                self.in_request = false;
                let output = str_at(v, &["output"])
                    .filter(|o| !o.is_empty())
                    .or_else(|| str_at(v, &["error", "message"]))
                    .unwrap_or("");
                let is_error = str_at(v, &["status"]) == Some("error");
                vec![tool_result(str_at(v, &["tool_id"]), is_error, output)]
            }
            Some("error") => {
                let text = str_at(v, &["message"]).unwrap_or("error");
                if str_at(v, &["severity"]) == Some("warning") {
                    vec![EventKind::Note {
                        text: format!("gemini: {text}"),
                    }]
                } else {
                    self.tally.fail(text).into_iter().collect()
                }
            }
            Some("result") => self.result(v),
            _ => Vec::new(),
        }
    }

    fn result(&mut self, v: &Value) -> Vec<EventKind> {
        self.tally.ended = true;
        let stats = at(v, &["stats"]).unwrap_or(&Value::Null);
        self.tally.usage.input = u64_at(stats, &["input_tokens"]);
        self.tally.usage.output = u64_at(stats, &["output_tokens"]);
        self.tally.usage.cached = u64_at(stats, &["cached"]);
        self.estimate_context(stats);
        let mut events = vec![self.tally.usage_event()];
        if str_at(v, &["status"]) != Some("success") {
            let why = str_at(v, &["error", "message"]).unwrap_or("the turn failed");
            events.extend(self.tally.fail(why));
        }
        events
    }
}

impl GeminiParser {
    /// The last request's context, estimated from the turn's totals: the
    /// main model's (the one with the most input; a router model's calls
    /// are apart) over the requests counted.
    fn estimate_context(&mut self, stats: &Value) {
        let main = at(stats, &["models"])
            .and_then(Value::as_object)
            .and_then(|m| m.iter().max_by_key(|(_, s)| u64_at(s, &["input_tokens"])));
        let (tokens, model) = match main {
            Some((name, s)) => (
                u64_at(s, &["input_tokens"]) + u64_at(s, &["output_tokens"]),
                Some(name.as_str()),
            ),
            None => (self.tally.usage.input + self.tally.usage.output, None),
        };
        self.window.saw(model);
        let last = tokens.div_ceil(self.requests.max(1));
        self.tally.context(last, self.window.tokens());
    }
}

impl TurnParser for GeminiParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        let kind = str_at(&v, &["type"]);
        if kind == Some("message") {
            if str_at(&v, &["role"]) == Some("assistant") {
                self.output();
                self.pending
                    .push_str(str_at(&v, &["content"]).unwrap_or(""));
            }
            return Vec::new();
        }
        let mut events: Vec<EventKind> = self.flush().into_iter().collect();
        events.extend(self.event(&v));
        events
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        self.flush();
        if self.tally.error.is_some() {
            self.tally.signal.http_status = exit.and_then(http_status_of_exit);
        }
        let mut outcome = self.tally.outcome(exit, stderr_tail);
        if exit == Some(UNTRUSTED) && self.tally.error.is_none() {
            outcome.error = outcome.error.map(|e| {
                format!("{e} (gemini does not trust the lane's directory: trust it in gemini, or start the lane with --env GEMINI_CLI_TRUST_WORKSPACE=true)")
            });
        }
        outcome
    }
}

/// The HTTP status of a failed API call, from gemini's exit code (the
/// status & 0xFF: 401 exits 145, 429 exits 173, 500 exits 244), for the
/// statuses 400 to 511 (exits 144 to 255; the lower codes are gemini's own).
fn http_status_of_exit(exit: i32) -> Option<u16> {
    let low = u16::try_from(exit)
        .ok()
        .filter(|e| (144..=255).contains(e))?;
    Some(low + 256)
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
