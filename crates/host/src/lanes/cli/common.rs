//! What the CLI connectors share: reading fields out of JSON lines, the
//! start of every command plan (program, model, resume id), and the
//! [`Tally`] a parser keeps of a turn (answer, usage, session, error) and
//! turns into an [`Outcome`] once the process has exited.

use flotilla_actors::lane::events::{EventKind, clip};
use flotilla_actors::lane::{ErrorSignal, Usage};
use serde_json::Value;

use super::{CommandPlan, Outcome, TurnContext, tail};

/// Largest message, tool input or tool output kept in an event.
pub(super) const MAX_EVENT: usize = 8 * 1024;
/// Largest final answer kept.
pub(super) const MAX_RESULT: usize = 64 * 1024;

/// One line of output as JSON; `None` for a blank or non-JSON line.
pub(super) fn parse(line: &str) -> Option<Value> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    serde_json::from_str(line).ok()
}

/// What a line that is not JSON becomes: a note (nothing for a blank one).
pub(super) fn stray(line: &str) -> Vec<EventKind> {
    let line = line.trim();
    if line.is_empty() {
        return Vec::new();
    }
    vec![EventKind::Note {
        text: format!("output: {}", clip(line, MAX_EVENT)),
    }]
}

/// The value at `path`.
pub(super) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, key| v.get(key))
}

/// The string at `path`.
pub(super) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

/// The count at `path` (0 when absent).
pub(super) fn u64_at(v: &Value, path: &[&str]) -> u64 {
    at(v, path).and_then(Value::as_u64).unwrap_or(0)
}

/// The flag at `path` (false when absent).
pub(super) fn bool_at(v: &Value, path: &[&str]) -> bool {
    at(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// A tool's input as JSON text (a string, such as a raw patch, as is).
pub(super) fn json_text(v: Option<&Value>) -> String {
    let text = match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    clip(&text, MAX_EVENT)
}

/// The text of a content value: a string, or the `text` of each block of
/// an array, joined by newlines.
pub(super) fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.as_str().or_else(|| str_at(b, &["text"])))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A message event (nothing for empty text).
pub(super) fn message(text: &str) -> Option<EventKind> {
    (!text.trim().is_empty()).then(|| EventKind::Message {
        text: clip(text, MAX_EVENT),
    })
}

/// A tool call event.
pub(super) fn tool_call(name: &str, id: Option<&str>, input: Option<&Value>) -> EventKind {
    EventKind::ToolCall {
        name: name.to_owned(),
        id: id.map(str::to_owned),
        input: json_text(input),
    }
}

/// A tool result event.
pub(super) fn tool_result(id: Option<&str>, is_error: bool, output: &str) -> EventKind {
    EventKind::ToolResult {
        id: id.map(str::to_owned),
        is_error,
        output: clip(output, MAX_EVENT),
    }
}

/// The session to continue, when the turn resumes; an error when there is
/// none yet.
pub(super) fn resume_id(turn: &TurnContext<'_>) -> Result<Option<String>, String> {
    if !turn.resume {
        return Ok(None);
    }
    match turn.native_session {
        Some(id) if !id.is_empty() => Ok(Some(id.to_owned())),
        _ => Err(format!(
            "lane {} has no native session to resume yet (its first turn did not report one)",
            turn.spec.name
        )),
    }
}

/// Where a CLI keeps its configuration, as the lane's process will see
/// it: `dir_var` (such as `CODEX_HOME`) or `HOME/home_sub`, the lane's own
/// `--env` first, then the daemon's environment (which the CLI inherits).
pub(super) fn config_dir(
    env: &[(String, String)],
    dir_var: &str,
    home_sub: &str,
) -> Option<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let lane = |key: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let daemon = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    let under_home = |h: String| Path::new(&h).join(home_sub);
    lane(dir_var)
        .map(PathBuf::from)
        .or_else(|| lane("HOME").map(under_home))
        .or_else(|| daemon(dir_var).map(PathBuf::from))
        .or_else(|| daemon("HOME").map(under_home))
}

/// The lane's own directory (`state/lanes/NAME`), from the turn's prompt
/// file (`state/lanes/NAME/turn-N/prompt`).
pub(super) fn lane_dir<'a>(turn: &TurnContext<'a>) -> Option<&'a std::path::Path> {
    turn.prompt_file.parent()?.parent()
}

/// A plan with the prompt on stdin: `program` then `args`.
pub(super) fn stdin_plan(program: &str, args: &[&str]) -> CommandPlan {
    let mut argv = vec![program.to_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    CommandPlan {
        argv,
        env: Vec::new(),
        stdin_prompt: true,
        notes: Vec::new(),
        cli_home: None,
    }
}

impl CommandPlan {
    /// Appends arguments.
    pub(super) fn args<S: AsRef<str>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Self {
        self.argv
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Appends `flag value` when there is a value.
    pub(super) fn opt(&mut self, flag: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.args([flag, v]);
        }
        self
    }

    /// Adds an environment variable.
    pub(super) fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Adds a note for the lane's events.
    pub(super) fn note(&mut self, text: impl Into<String>) -> &mut Self {
        self.notes.push(text.into());
        self
    }
}

/// Why a process that ended on its own failed, from its exit code and the
/// end of its stderr.
pub(super) fn exit_error(exit: Option<i32>, stderr_tail: &str) -> String {
    let last = tail(stderr_tail, 2048);
    match (exit, last.is_empty()) {
        (Some(code), true) => format!("exited with code {code}"),
        (Some(code), false) => format!("exited with code {code}: {last}"),
        (None, _) => "killed before it could exit".to_owned(),
    }
}

/// What a parser has learnt of a turn so far.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// The CLI's session id.
    pub(super) session: Option<String>,
    /// The final answer.
    pub(super) result: Option<String>,
    /// Tokens.
    pub(super) usage: Usage,
    /// Context window.
    pub(super) context_window: Option<u64>,
    /// Share of the window in use.
    pub(super) context_used_pct: Option<f64>,
    /// Cost.
    pub(super) cost_usd: Option<f64>,
    /// The error the CLI reported.
    pub(super) error: Option<String>,
    /// The CLI printed its final event (a turn without one did not finish).
    pub(super) ended: bool,
    /// What its structured output said about a failure.
    pub(super) signal: ErrorSignal,
}

impl Tally {
    /// Records an error the CLI reported; returns its event unless the same
    /// error was already reported.
    pub(super) fn fail(&mut self, message: &str) -> Option<EventKind> {
        let message = clip(message.trim(), MAX_EVENT);
        if self.error.as_deref() == Some(message.as_str()) {
            return None;
        }
        self.error = Some(message.clone());
        Some(EventKind::Error { message })
    }

    /// The usage event for what is known now.
    pub(super) fn usage_event(&self) -> EventKind {
        EventKind::Usage {
            usage: self.usage,
            context_window: self.context_window,
            context_used_pct: self.context_used_pct,
        }
    }

    /// Records the context of the last model request, `last_call_tokens`
    /// (its input, cached included, and output), in `window`.
    pub(super) fn context(&mut self, last_call_tokens: u64, window: u64) {
        self.context_window = Some(window);
        self.context_used_pct = percent(last_call_tokens, Some(window));
    }

    /// The outcome: failed when the CLI reported an error, printed no final
    /// event, or exited other than with 0.
    pub(super) fn outcome(&self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        let failed = self.error.is_some() || !self.ended || exit != Some(0);
        let error = failed.then(|| match (&self.error, exit) {
            (Some(e), _) => e.clone(),
            (None, Some(0)) => {
                let last = tail(stderr_tail, 2048);
                let why = "the CLI exited without finishing its turn";
                if last.is_empty() {
                    why.to_owned()
                } else {
                    format!("{why}: {last}")
                }
            }
            (None, _) => exit_error(exit, stderr_tail),
        });
        Outcome {
            failed,
            result: self.result.as_deref().map(|r| clip(r, MAX_RESULT)),
            error,
            usage: self.usage,
            context_window: self.context_window,
            context_used_pct: self.context_used_pct,
            cost_usd: self.cost_usd,
            native_session_id: self.session.clone(),
            signal: self.signal.clone(),
        }
    }
}

/// Share of `window` that `used` tokens fill, in percent.
pub(super) fn percent(used: u64, window: Option<u64>) -> Option<f64> {
    let window = window.filter(|w| *w > 0)?;
    (used > 0).then(|| (used as f64 * 1_000_000.0 / window as f64).round() / 10_000.0)
}

/// Test helpers: a lane spec and a turn context, and running a fixture
/// through a parser.
#[cfg(test)]
pub(super) mod testing {
    use std::path::Path;

    use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
    use flotilla_actors::names::{PeerId, PeerName};

    use super::super::{CommandPlan, Outcome, TurnContext, TurnParser};
    use flotilla_actors::lane::events::EventKind;

    /// A lane of `cli` with `permissions` and a model.
    pub(crate) fn spec(cli: CliKind, permissions: Permissions, model: Option<&str>) -> LaneSpec {
        LaneSpec {
            name: PeerName::new("worker").expect("name"),
            cli,
            cwd: "/tmp/wd".into(),
            model: model.map(str::to_owned),
            permissions,
            timeout_secs: None,
            persistent: false,
            auto_archive_secs: None,
            groups: Vec::new(),
            inherit_groups: false,
            owner: "h/operator".parse::<PeerId>().expect("owner"),
            env: Vec::new(),
            args: Vec::new(),
            restart_on_stall: false,
        }
    }

    /// The plan of a first turn, or of a resumed one when `session` is set.
    pub(crate) fn plan(
        connector: &dyn super::super::CliConnector,
        spec: &LaneSpec,
        session: Option<&str>,
    ) -> Result<CommandPlan, String> {
        let turn = TurnContext {
            spec,
            program: connector.program(),
            resume: session.is_some(),
            native_session: session,
            prompt: "do the thing",
            prompt_file: Path::new("/tmp/prompt"),
            flotilla: None,
        };
        connector.command(&turn)
    }

    /// Every event of a fixture, and the outcome for `exit`.
    pub(crate) fn run(
        mut parser: Box<dyn TurnParser>,
        fixture: &str,
        exit: Option<i32>,
        stderr: &str,
    ) -> (Vec<EventKind>, Outcome) {
        let events = fixture.lines().flat_map(|l| parser.line(l)).collect();
        let outcome = parser.finish(exit, stderr);
        (events, outcome)
    }

    /// The events of one type.
    pub(crate) fn of<'a>(events: &'a [EventKind], kind: &str) -> Vec<&'a EventKind> {
        events
            .iter()
            .filter(|e| {
                let tag = match e {
                    EventKind::Message { .. } => "message",
                    EventKind::ToolCall { .. } => "tool.call",
                    EventKind::ToolResult { .. } => "tool.result",
                    EventKind::Usage { .. } => "usage",
                    EventKind::Error { .. } => "error",
                    EventKind::Note { .. } => "note",
                    _ => "other",
                };
                tag == kind
            })
            .collect()
    }
}
