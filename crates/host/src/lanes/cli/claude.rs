//! `--cli claude`: Claude Code in print mode. Owns the command line; the
//! output is parsed by [`super::stream_json`] (flavor Claude).
//!
//! `claude -p --output-format stream-json --verbose [--model M]
//! [--permission-mode acceptEdits|bypassPermissions] [--resume ID] ARGS`,
//! the prompt on stdin.

use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};

use super::common::{resume_id, stdin_plan};
use super::context_windows::ModelWindow;
use super::stream_json::{Flavor, StreamJsonParser};
use super::{CliConnector, CommandPlan, ContextWindows, TurnContext, TurnParser};

/// The Claude Code connector.
#[derive(Debug)]
pub(super) struct Claude;

impl CliConnector for Claude {
    fn kind(&self) -> CliKind {
        CliKind::Claude
    }

    fn program(&self) -> &'static str {
        "claude"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        command(turn, rustix::process::geteuid().is_root())
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        let window = ModelWindow::new(CliKind::Claude, spec.model.as_deref(), windows);
        Box::new(StreamJsonParser::new(Flavor::Claude, window))
    }
}

/// The command; `as_root` because bypass as root needs `IS_SANDBOX=1`.
fn command(turn: &TurnContext<'_>, as_root: bool) -> Result<CommandPlan, String> {
    let resume = resume_id(turn)?;
    let spec = turn.spec;
    let mut plan = stdin_plan(turn.program, &["-p"]);
    if let Some(server) = turn.flotilla {
        // Both options take several values: the next option ends them.
        super::mcp::claude(&mut plan, server);
    }
    plan.args(["--output-format", "stream-json", "--verbose"]);
    plan.opt("--model", spec.model.as_deref());
    match spec.permissions {
        Permissions::Default => {}
        Permissions::Workspace => {
            plan.args(["--permission-mode", "acceptEdits"]);
        }
        Permissions::Bypass => {
            plan.args(["--permission-mode", "bypassPermissions"]).note(
                "claude runs with --permission-mode bypassPermissions: every tool is allowed",
            );
            if as_root {
                // Claude refuses to bypass permissions as root without it.
                plan.env("IS_SANDBOX", "1");
            }
        }
    }
    plan.opt("--resume", resume.as_deref()).args(&spec.args);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use flotilla_actors::lane::events::EventKind;

    use super::super::common::testing::{of, plan, run, spec};
    use super::*;

    fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, super::super::Outcome) {
        run(
            Claude.parser(
                &spec(CliKind::Claude, Permissions::Default, None),
                &ContextWindows::default(),
            ),
            fixture,
            Some(exit),
            "",
        )
    }

    #[test]
    fn default_permissions_add_no_flag_and_the_prompt_goes_to_stdin() {
        let s = spec(CliKind::Claude, Permissions::Default, None);
        let p = plan(&Claude, &s, None).expect("plan");
        assert_eq!(
            p.argv,
            [
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose"
            ]
        );
        assert!(p.stdin_prompt && p.env.is_empty() && p.notes.is_empty());
    }

    #[test]
    fn model_workspace_resume_and_user_args() {
        let mut s = spec(CliKind::Claude, Permissions::Workspace, Some("sonnet"));
        s.args = vec!["--max-turns".into(), "3".into()];
        let p = plan(&Claude, &s, Some("sess-1")).expect("plan");
        assert_eq!(
            p.argv[5..],
            [
                "--model",
                "sonnet",
                "--permission-mode",
                "acceptEdits",
                "--resume",
                "sess-1",
                "--max-turns",
                "3"
            ]
        );
    }

    #[test]
    fn bypass_says_so_and_sets_is_sandbox_only_as_root() {
        let s = spec(CliKind::Claude, Permissions::Bypass, None);
        let turn = TurnContext {
            spec: &s,
            program: "/opt/claude",
            resume: false,
            native_session: None,
            prompt: "p",
            prompt_file: std::path::Path::new("/tmp/p"),
            flotilla: None,
        };
        let root = command(&turn, true).expect("plan");
        assert_eq!(root.argv[0], "/opt/claude");
        assert!(
            root.argv
                .ends_with(&["--permission-mode".into(), "bypassPermissions".into()])
        );
        assert_eq!(root.env, [("IS_SANDBOX".into(), "1".into())]);
        assert_eq!(root.notes.len(), 1);
        assert!(command(&turn, false).expect("plan").env.is_empty());
    }

    #[test]
    fn resume_without_a_session_is_refused() {
        let s = spec(CliKind::Claude, Permissions::Default, None);
        let turn = TurnContext {
            spec: &s,
            program: "claude",
            resume: true,
            native_session: None,
            prompt: "p",
            prompt_file: std::path::Path::new("/tmp/p"),
            flotilla: None,
        };
        assert!(command(&turn, false).is_err());
    }

    #[test]
    fn text_turn() {
        let (events, out) = parse(include_str!("testdata/claude-text.jsonl"), 0);
        assert_eq!(
            of(&events, "message"),
            [&EventKind::Message {
                text: "hello from fake".into()
            }]
        );
        assert!(!out.failed, "{out:?}");
        assert_eq!(out.result.as_deref(), Some("hello from fake"));
        assert_eq!(
            (out.usage.input, out.usage.output, out.usage.cached),
            (11, 5, 0)
        );
        assert_eq!(out.context_window, Some(1_000_000));
        assert_eq!(out.context_used_pct, Some(0.0012));
        assert_eq!(out.cost_usd, Some(0.00017999999999999998));
        assert_eq!(
            out.native_session_id.as_deref(),
            Some("8b7256dc-bb5a-43fb-b03b-9b3ecd199b35")
        );
        // One as the model call's message came (its share in the model
        // table's window: claude tells its own only in the result), one at
        // the result.
        assert!(
            matches!(
                of(&events, "usage")[..],
                [
                    EventKind::Usage {
                        context_window: Some(200_000),
                        context_used_pct: Some(_),
                        ..
                    },
                    EventKind::Usage {
                        context_window: Some(1_000_000),
                        context_used_pct: Some(0.0012),
                        ..
                    },
                ]
            ),
            "{events:?}"
        );
    }

    #[test]
    fn resumed_turn_keeps_the_session() {
        let (_, out) = parse(include_str!("testdata/claude-resume.jsonl"), 0);
        assert!(!out.failed);
        assert_eq!(
            out.native_session_id.as_deref(),
            Some("8b7256dc-bb5a-43fb-b03b-9b3ecd199b35")
        );
        assert_eq!(out.context_window, Some(200_000));
    }

    #[test]
    fn denied_write_is_a_failed_tool_and_a_note() {
        let (events, out) = parse(
            include_str!("testdata/claude-tool-write-default-denied.jsonl"),
            0,
        );
        assert!(!out.failed);
        let EventKind::ToolCall { name, id, input } = of(&events, "tool.call")[0] else {
            panic!("no tool call");
        };
        assert_eq!(
            (name.as_str(), id.as_deref()),
            ("Write", Some("toolu_fake_1"))
        );
        assert!(input.contains("\"file_path\""));
        let EventKind::ToolResult {
            is_error, output, ..
        } = of(&events, "tool.result")[0]
        else {
            panic!("no tool result");
        };
        assert!(*is_error && output.contains("haven't granted"));
        assert!(
            matches!(of(&events, "note")[0], EventKind::Note { text } if text.contains("Write"))
        );
        assert_eq!((out.usage.input, out.usage.output), (22, 12));
    }

    #[test]
    fn bash_under_bypass() {
        let (events, out) = parse(include_str!("testdata/claude-tool-bash-bypass.jsonl"), 0);
        assert!(!out.failed);
        assert!(
            matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, .. } if name == "Bash")
        );
        assert!(matches!(
            of(&events, "tool.result")[0],
            EventKind::ToolResult {
                is_error: false,
                ..
            }
        ));
    }

    #[test]
    fn http_errors_fail_once() {
        let (events, out) = parse(include_str!("testdata/claude-http400.jsonl"), 1);
        assert!(out.failed);
        assert_eq!(
            out.error.as_deref(),
            Some("API Error: 400 fake server scripted HTTP 400")
        );
        assert_eq!(of(&events, "error").len(), 1);
        assert!(of(&events, "message").is_empty());
        let (events, out) = parse(include_str!("testdata/claude-http500-retries2.jsonl"), 1);
        assert!(out.failed && out.error.expect("error").starts_with("API Error: 500"));
        assert_eq!(of(&events, "note").len(), 2, "one note per retry");
    }

    #[test]
    fn sigint_ends_with_error_during_execution_even_on_exit_0() {
        let (events, out) = parse(include_str!("testdata/claude-sigint-partial.jsonl"), 0);
        assert!(out.failed);
        assert_eq!(
            out.error.as_deref(),
            Some("error_during_execution (aborted_streaming)")
        );
        assert_eq!(out.result.as_deref(), Some("hello from fake"));
        assert!(!of(&events, "note").is_empty());
    }

    #[test]
    fn resume_from_another_directory_fails_with_stderr() {
        let line = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"s"}"#;
        let mut p = Claude.parser(
            &spec(CliKind::Claude, Permissions::Default, None),
            &ContextWindows::default(),
        );
        p.line(line);
        let out = p.finish(Some(1), "No conversation found with session ID: s\n");
        assert!(out.failed);
        assert_eq!(
            out.error.as_deref(),
            Some("error_during_execution: No conversation found with session ID: s")
        );
    }
}
