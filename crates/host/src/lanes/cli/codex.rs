//! `--cli codex`: `codex exec --json`. Owns the command line and the parser
//! of Codex's thread events (`thread.started`, `item.*`, `turn.completed`,
//! `turn.failed`, `error`).
//!
//! `codex exec --json --skip-git-repo-check [-m M] [PERMISSIONS] ARGS
//! [resume ID] -`: `-` makes Codex read the prompt from stdin. Permissions:
//! workspace is `-s workspace-write` (on resume `-c
//! sandbox_mode="workspace-write"`, as `resume` takes no `-s`), bypass is
//! `--dangerously-bypass-approvals-and-sandbox`. Usage in `turn.completed`
//! is cumulative for the thread; the rollout file ([`super::codex_rollout`])
//! turns it into the turn's own and adds the context window.

use std::collections::HashSet;
use std::path::PathBuf;

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
use serde_json::Value;

use super::codex_rollout::{self, Rollout};
use super::common::{
    Tally, at, message, parse, percent, resume_id, stdin_plan, str_at, stray, tool_call,
    tool_result,
};
use super::{CliConnector, CommandPlan, Outcome, TurnContext, TurnParser};

/// The Codex connector.
#[derive(Debug)]
pub(super) struct Codex;

impl CliConnector for Codex {
    fn kind(&self) -> CliKind {
        CliKind::Codex
    }

    fn program(&self) -> &'static str {
        "codex"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        let resume = resume_id(turn)?;
        let spec = turn.spec;
        let mut plan = stdin_plan(turn.program, &["exec", "--json", "--skip-git-repo-check"]);
        if let Some(server) = turn.flotilla {
            super::mcp::codex(&mut plan, server);
        }
        plan.opt("-m", spec.model.as_deref());
        match (spec.permissions, resume.is_some()) {
            (Permissions::Default, _) => {}
            (Permissions::Workspace, false) => {
                plan.args(["-s", "workspace-write"]);
            }
            (Permissions::Workspace, true) => {
                plan.args(["-c", "sandbox_mode=\"workspace-write\""]);
            }
            (Permissions::Bypass, _) => {
                plan.args(["--dangerously-bypass-approvals-and-sandbox"])
                    .note("codex runs with --dangerously-bypass-approvals-and-sandbox: no sandbox, no approvals");
            }
        }
        plan.args(&spec.args);
        if let Some(id) = &resume {
            plan.args(["resume", id]);
        }
        plan.args(["-"]);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, _: &super::ContextWindows) -> Box<dyn TurnParser> {
        Box::new(CodexParser::new(codex_rollout::codex_home(&spec.env)))
    }
}

/// Parses one turn of `codex exec --json`.
#[derive(Debug, Default)]
struct CodexParser {
    tally: Tally,
    /// Where the rollout files are, if known.
    codex_home: Option<PathBuf>,
    /// Thread usage as `turn.completed` reported it.
    cumulative: Option<flotilla_actors::lane::Usage>,
    /// The rollout agreed with `turn.completed`.
    from_rollout: bool,
    /// Items whose start was reported (their completion is a tool result).
    started: HashSet<String>,
}

impl CodexParser {
    fn new(codex_home: Option<PathBuf>) -> Self {
        Self {
            codex_home,
            ..Self::default()
        }
    }

    fn item(&mut self, v: &Value, done: bool) -> Vec<EventKind> {
        let Some(item) = at(v, &["item"]) else {
            return Vec::new();
        };
        let id = str_at(item, &["id"]);
        let mut events = Vec::new();
        let kind = str_at(item, &["type"]).unwrap_or("");
        match (kind, done) {
            ("agent_message", true) => {
                let text = str_at(item, &["text"]).unwrap_or("");
                events.extend(message(text));
                self.tally.result = Some(text.to_owned());
            }
            ("error", true) => events.push(EventKind::Note {
                text: format!("codex: {}", str_at(item, &["message"]).unwrap_or("")),
            }),
            ("command_execution" | "file_change" | "mcp_tool_call" | "web_search", _) => {
                if !id.is_some_and(|i| self.started.contains(i)) {
                    events.push(tool_call(&tool_name(item), id, Some(&tool_input(item))));
                    self.started.extend(id.map(str::to_owned));
                }
                if done {
                    let (is_error, output) = tool_output(item);
                    events.push(tool_result(id, is_error, &output));
                }
            }
            _ => {}
        }
        events
    }

    fn completed(&mut self, v: &Value) -> Vec<EventKind> {
        self.tally.ended = true;
        // Errors before a completed turn were transient (retries).
        self.tally.error = None;
        let cumulative = codex_rollout::usage(at(v, &["usage"]));
        self.cumulative = Some(cumulative);
        self.tally.usage = cumulative;
        self.apply_rollout();
        vec![self.tally.usage_event()]
    }

    /// Takes the turn's own usage and the context window from the rollout
    /// once it has caught up with `turn.completed`.
    fn apply_rollout(&mut self) {
        let (Some(home), Some(thread), Some(cumulative)) =
            (&self.codex_home, &self.tally.session, self.cumulative)
        else {
            return;
        };
        let Some(r) = codex_rollout::read(home, thread).filter(|r| r.total == cumulative) else {
            return;
        };
        let Rollout {
            before_turn: b,
            window,
            last_call_tokens,
            ..
        } = r;
        self.tally.usage.input = cumulative.input.saturating_sub(b.input);
        self.tally.usage.output = cumulative.output.saturating_sub(b.output);
        self.tally.usage.cached = cumulative.cached.saturating_sub(b.cached);
        self.tally.context_window = window;
        self.tally.context_used_pct = percent(last_call_tokens, window);
        self.from_rollout = true;
    }
}

fn tool_name(item: &Value) -> String {
    match (str_at(item, &["server"]), str_at(item, &["tool"])) {
        (Some(server), Some(tool)) => format!("{server}.{tool}"),
        _ => str_at(item, &["type"]).unwrap_or("tool").to_owned(),
    }
}

fn tool_input(item: &Value) -> Value {
    let mut input = serde_json::Map::new();
    for key in ["command", "changes", "arguments", "query"] {
        if let Some(v) = at(item, &[key]) {
            input.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(input)
}

/// Whether a finished tool item failed, and what it printed or changed.
fn tool_output(item: &Value) -> (bool, String) {
    let status = str_at(item, &["status"]).unwrap_or("completed");
    let exit = at(item, &["exit_code"]).and_then(Value::as_i64);
    let is_error = status != "completed" || exit.is_some_and(|c| c != 0);
    let output = if let Some(out) = str_at(item, &["aggregated_output"]) {
        out.to_owned()
    } else if let Some(changes) = at(item, &["changes"]).and_then(Value::as_array) {
        changes
            .iter()
            .map(|c| {
                let kind = str_at(c, &["kind"]).unwrap_or("update");
                format!("{kind} {}", str_at(c, &["path"]).unwrap_or("?"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    } else if let Some(e) = str_at(item, &["error", "message"]) {
        e.to_owned()
    } else {
        at(item, &["result"])
            .map(Value::to_string)
            .unwrap_or_default()
    };
    (is_error, output)
}

impl TurnParser for CodexParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        match str_at(&v, &["type"]) {
            Some("thread.started") => {
                self.tally.session = str_at(&v, &["thread_id"]).map(str::to_owned);
                Vec::new()
            }
            Some("item.started") => self.item(&v, false),
            Some("item.completed") => self.item(&v, true),
            Some("turn.completed") => self.completed(&v),
            Some("error") => self
                .tally
                .fail(str_at(&v, &["message"]).unwrap_or("error"))
                .into_iter()
                .collect(),
            Some("turn.failed") => {
                let why = str_at(&v, &["error", "message"]).unwrap_or("the turn failed");
                self.tally.fail(why).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        if !self.from_rollout {
            self.apply_rollout();
        }
        self.tally.outcome(exit, stderr_tail)
    }
}

#[cfg(test)]
#[path = "codex_tests.rs"]
mod tests;
