//! `--cli grok`: Grok CLI headless. Owns the command line and the parser of
//! its output: once the whole turn is over, one JSON chat message per line
//! (`user`, `assistant` with `tool_calls`, `tool`).
//!
//! `grok [-m M] --prompt=PROMPT ARGS`: grok takes the prompt only as an
//! argument (so it shows in the process list); `--prompt=` keeps a prompt
//! that starts with `-` a value. Headless grok approves every tool, has no
//! session to resume and reports no usage; an API error exits 0 with an
//! assistant message `Sorry, I encountered an error: ...`.
//!
//! With no usage, the context used is an estimate: the messages printed
//! (the last request's context, which held every earlier one, and its
//! answer) at [`CHARS_PER_TOKEN`] characters a token, without grok's system
//! prompt, which it does not print; the window is the model table's.

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
use serde_json::Value;

use super::common::{Tally, at, message, parse, str_at, stray, tool_call, tool_result};
use super::{CliConnector, CommandPlan, ContextWindows, Outcome, TurnContext, TurnParser};

/// Characters per token of the context estimate (a common rule of thumb
/// for English text and code).
const CHARS_PER_TOKEN: u64 = 4;

/// How grok words an API error in its last message.
const ERROR_PREFIX: &str = "Sorry, I encountered an error:";

/// The Grok CLI connector.
#[derive(Debug)]
pub(super) struct Grok;

impl CliConnector for Grok {
    fn kind(&self) -> CliKind {
        CliKind::Grok
    }

    fn program(&self) -> &'static str {
        "grok"
    }

    fn supports_resume(&self) -> bool {
        false
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        if turn.resume {
            return Err(
                "resume is not supported by this CLI (grok keeps no session in headless mode); start a new lane instead"
                    .into(),
            );
        }
        let spec = turn.spec;
        let mut plan = CommandPlan {
            argv: vec![turn.program.to_owned()],
            env: Vec::new(),
            stdin_prompt: false,
            notes: Vec::new(),
            cli_home: None,
        };
        match spec.permissions {
            Permissions::Default => {
                plan.note("grok has no permission modes: headless grok runs every tool unasked");
            }
            Permissions::Workspace => {
                return Err("grok cannot limit its tools (headless grok approves everything); use --permissions default or bypass".into());
            }
            Permissions::Bypass => {
                plan.note("grok runs every tool unasked");
            }
        }
        plan.opt("-m", spec.model.as_deref())
            .args([format!("--prompt={}", turn.prompt)])
            .note("grok takes the prompt only as an argument: it is visible in the process list")
            .args(&spec.args);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        Box::new(GrokParser::new(
            windows.window(CliKind::Grok, spec.model.as_deref()),
        ))
    }
}

/// Parses grok's chat messages.
#[derive(Debug)]
struct GrokParser {
    tally: Tally,
    /// The model's context window.
    window: u64,
    /// Characters of the messages printed so far.
    chars: u64,
}

impl GrokParser {
    fn new(window: u64) -> Self {
        Self {
            tally: Tally::default(),
            window,
            chars: 0,
        }
    }

    /// Counts a message's text, tool calls included, into the estimate.
    fn count(&mut self, v: &Value) {
        let calls = at(v, &["tool_calls"]).map_or(0, |c| c.to_string().chars().count());
        let text = str_at(v, &["content"]).map_or(0, |t| t.chars().count());
        self.chars += (calls + text) as u64;
    }

    fn assistant(&mut self, v: &Value) -> Vec<EventKind> {
        let text = str_at(v, &["content"]).unwrap_or("");
        let calls = at(v, &["tool_calls"]).and_then(Value::as_array);
        let mut events = Vec::new();
        if text.trim_start().starts_with(ERROR_PREFIX) {
            events.extend(self.tally.fail(text));
        } else {
            events.extend(message(text));
            self.tally.error = None;
        }
        if calls.is_none_or(|c| c.is_empty()) {
            self.tally.result = Some(text.to_owned());
        }
        for call in calls.into_iter().flatten() {
            let args = at(call, &["function", "arguments"]);
            events.push(tool_call(
                str_at(call, &["function", "name"]).unwrap_or("?"),
                str_at(call, &["id"]),
                args,
            ));
        }
        events
    }
}

impl TurnParser for GrokParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        self.count(&v);
        match str_at(&v, &["role"]) {
            Some("assistant") => {
                self.tally.ended = true;
                let tokens = self.chars.div_ceil(CHARS_PER_TOKEN);
                self.tally.context(tokens, self.window);
                let mut events = self.assistant(&v);
                events.push(self.tally.usage_event());
                events
            }
            Some("tool") => vec![tool_result(
                str_at(&v, &["tool_call_id"]),
                false,
                str_at(&v, &["content"]).unwrap_or(""),
            )],
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        self.tally.outcome(exit, stderr_tail)
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{of, plan, run, spec};
    use super::*;

    fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
        run(Box::new(GrokParser::new(256_000)), fixture, Some(exit), "")
    }

    #[test]
    fn the_prompt_is_an_argument() {
        let mut s = spec(
            CliKind::Grok,
            Permissions::Default,
            Some("grok-code-fast-1"),
        );
        s.args = vec!["--max-tool-rounds".into(), "5".into()];
        let p = plan(&Grok, &s, None).expect("plan");
        assert_eq!(
            p.argv,
            [
                "grok",
                "-m",
                "grok-code-fast-1",
                "--prompt=do the thing",
                "--max-tool-rounds",
                "5"
            ]
        );
        assert!(!p.stdin_prompt);
        assert_eq!(p.notes.len(), 2);
        let b = plan(&Grok, &spec(CliKind::Grok, Permissions::Bypass, None), None).expect("plan");
        assert_eq!(b.argv, ["grok", "--prompt=do the thing"]);
    }

    #[test]
    fn workspace_and_resume_are_refused() {
        assert!(!Grok.supports_resume());
        let s = spec(CliKind::Grok, Permissions::Workspace, None);
        assert!(
            plan(&Grok, &s, None)
                .expect_err("workspace")
                .contains("cannot limit")
        );
        let s = spec(CliKind::Grok, Permissions::Default, None);
        let err = plan(&Grok, &s, Some("x")).expect_err("resume");
        assert!(err.contains("not supported by this CLI"), "{err}");
    }

    #[test]
    fn text_turn() {
        let (events, out) = parse(include_str!("testdata/grok-text.jsonl"), 0);
        assert!(!out.failed);
        assert_eq!(out.result.as_deref(), Some("hello from fake"));
        assert_eq!(out.native_session_id, None);
        assert_eq!(out.usage, Default::default());
        assert_eq!(of(&events, "message").len(), 1);
    }

    #[test]
    fn tool_turns() {
        for (fixture, tool) in [
            (include_str!("testdata/grok-tool-bash.jsonl"), "bash"),
            (
                include_str!("testdata/grok-tool-create_file.jsonl"),
                "create_file",
            ),
        ] {
            let (events, out) = parse(fixture, 0);
            assert!(!out.failed);
            assert_eq!(out.result.as_deref(), Some("hello from fake"));
            assert!(
                matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, id, .. }
                if name == tool && id.as_deref() == Some("call_fake_1"))
            );
            assert!(
                matches!(of(&events, "tool.result")[0], EventKind::ToolResult { id, .. }
                if id.as_deref() == Some("call_fake_1"))
            );
        }
    }

    #[test]
    fn api_errors_exit_0_with_an_apology() {
        for fixture in [
            include_str!("testdata/grok-http400.jsonl"),
            include_str!("testdata/grok-http500.jsonl"),
        ] {
            let (events, out) = parse(fixture, 0);
            assert!(out.failed);
            assert!(out.error.expect("error").contains("Grok API error"));
            assert_eq!(of(&events, "error").len(), 1);
        }
    }

    /// Issue 9: grok reports no usage; the context used is estimated from
    /// the messages printed, four characters a token.
    #[test]
    fn the_context_used_is_estimated_from_the_messages() {
        let (events, out) = parse(include_str!("testdata/grok-text.jsonl"), 0);
        // "say hello" and "hello from fake": 24 characters, 6 tokens.
        assert_eq!(out.context_window, Some(256_000));
        assert_eq!(out.context_used_pct, Some(0.0023));
        assert_eq!(out.usage, Default::default(), "no usage is made up");
        assert!(matches!(
            of(&events, "usage")[..],
            [EventKind::Usage {
                context_used_pct: Some(_),
                ..
            }]
        ));
        let s = spec(CliKind::Grok, Permissions::Bypass, Some("my-grok"));
        let windows = ContextWindows::new([("my-grok".to_owned(), 100)]);
        let (_, out) = run(
            Grok.parser(&s, &windows),
            "{\"role\":\"assistant\",\"content\":\"abcdefgh\"}",
            Some(0),
            "",
        );
        assert_eq!(out.context_used_pct, Some(2.0));
    }

    #[test]
    fn sigint_prints_nothing() {
        let (_, out) = parse("", 130);
        assert!(out.failed);
        assert_eq!(out.error.as_deref(), Some("exited with code 130"));
    }
}
