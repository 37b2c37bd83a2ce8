//! `--cli qwen`: Qwen Code headless. Owns the command line; the output is
//! Claude-style stream-json, parsed by [`super::stream_json`] (flavor Qwen,
//! which reads a result text starting with `[API Error:` as a failure:
//! Qwen reports API errors as successful turns and exits 0).
//!
//! `qwen -o stream-json [-m M] [--approval-mode auto-edit|yolo]
//! [--resume ID] ARGS`, the prompt on stdin (with no positional prompt,
//! Qwen reads the whole prompt from stdin).

use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};

use super::common::{resume_id, stdin_plan};
use super::context_windows::ModelWindow;
use super::stream_json::{Flavor, StreamJsonParser};
use super::{CliConnector, CommandPlan, ContextWindows, TurnContext, TurnParser};

/// The Qwen Code connector.
#[derive(Debug)]
pub(super) struct Qwen;

impl CliConnector for Qwen {
    fn kind(&self) -> CliKind {
        CliKind::Qwen
    }

    fn program(&self) -> &'static str {
        "qwen"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        let resume = resume_id(turn)?;
        let spec = turn.spec;
        let mut plan = stdin_plan(turn.program, &["-o", "stream-json"]);
        if let (Some(server), Some(lane_dir)) = (turn.flotilla, super::common::lane_dir(turn)) {
            super::mcp::qwen(&mut plan, server, &spec.env, lane_dir);
        }
        plan.opt("-m", spec.model.as_deref());
        match spec.permissions {
            Permissions::Default => {}
            Permissions::Workspace => {
                plan.args(["--approval-mode", "auto-edit"]);
            }
            Permissions::Bypass => {
                plan.args(["--approval-mode", "yolo"])
                    .note("qwen runs with --approval-mode yolo: every tool is allowed");
            }
        }
        plan.opt("--resume", resume.as_deref()).args(&spec.args);
        Ok(plan)
    }

    fn parser(&self, spec: &LaneSpec, windows: &ContextWindows) -> Box<dyn TurnParser> {
        let window = ModelWindow::new(CliKind::Qwen, spec.model.as_deref(), windows);
        Box::new(StreamJsonParser::new(Flavor::Qwen, window))
    }
}

#[cfg(test)]
mod tests {
    use flotilla_actors::lane::events::EventKind;

    use super::super::Outcome;
    use super::super::common::testing::{of, plan, run, spec};
    use super::*;

    fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
        let s = spec(CliKind::Qwen, Permissions::Default, None);
        run(
            Qwen.parser(&s, &ContextWindows::default()),
            fixture,
            Some(exit),
            "",
        )
    }

    #[test]
    fn command_lines_per_permission_mode() {
        let argv = |p, model: Option<&str>, session: Option<&str>| {
            let mut s = spec(CliKind::Qwen, p, model);
            s.args = vec!["--max-session-turns".into(), "5".into()];
            plan(&Qwen, &s, session).expect("plan")
        };
        let d = argv(Permissions::Default, None, None);
        assert_eq!(
            d.argv,
            ["qwen", "-o", "stream-json", "--max-session-turns", "5"]
        );
        assert!(d.stdin_prompt && d.notes.is_empty());
        let w = argv(Permissions::Workspace, Some("qwen3-coder"), Some("s-1"));
        assert_eq!(
            w.argv[3..],
            [
                "-m",
                "qwen3-coder",
                "--approval-mode",
                "auto-edit",
                "--resume",
                "s-1",
                "--max-session-turns",
                "5"
            ]
        );
        let b = argv(Permissions::Bypass, None, None);
        assert_eq!(b.argv[3..5], ["--approval-mode", "yolo"]);
        assert_eq!(b.notes.len(), 1);
    }

    #[test]
    fn text_and_resume() {
        let (events, out) = parse(include_str!("testdata/qwen-text.jsonl"), 0);
        assert!(!out.failed);
        assert_eq!(out.result.as_deref(), Some("hello from fake"));
        assert_eq!((out.usage.input, out.usage.output), (11, 5));
        assert_eq!(out.cost_usd, None);
        assert_eq!(of(&events, "message").len(), 1);
        let (_, again) = parse(include_str!("testdata/qwen-resume.jsonl"), 0);
        assert_eq!(
            (again.usage.input, again.usage.output),
            (11, 5),
            "the resumed turn's own call, not the session's 22/10 of its result"
        );
        assert_eq!(again.native_session_id, out.native_session_id);
        assert_eq!(
            again.native_session_id.as_deref(),
            Some("600f2374-8f46-4dd1-b819-cd5d7f77a5b1")
        );
    }

    #[test]
    fn api_errors_reported_as_success_are_failures() {
        for (fixture, code) in [
            (include_str!("testdata/qwen-http400.jsonl"), "400"),
            (include_str!("testdata/qwen-http500.jsonl"), "500"),
        ] {
            let (events, out) = parse(fixture, 0);
            assert!(out.failed, "{code}");
            let error = out.error.expect("error");
            assert!(error.starts_with(&format!("[API Error: {code}")), "{error}");
            assert_eq!(of(&events, "error").len(), 1);
            assert!(of(&events, "message").is_empty());
        }
    }

    #[test]
    fn tools_denied_and_allowed() {
        let (events, out) = parse(
            include_str!("testdata/qwen-tool-write_file-default-denied.jsonl"),
            0,
        );
        assert!(!out.failed);
        assert!(
            matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, id, .. }
            if name == "write_file" && id.as_deref() == Some("call_fake_1"))
        );
        assert!(matches!(
            of(&events, "tool.result")[0],
            EventKind::ToolResult { is_error: true, .. }
        ));
        assert_eq!(of(&events, "note").len(), 1);
        let (events, out) = parse(
            include_str!("testdata/qwen-tool-run_shell_command-yolo.jsonl"),
            0,
        );
        assert!(!out.failed);
        assert!(
            matches!(of(&events, "tool.result")[0], EventKind::ToolResult { is_error: false, output, .. }
            if output.contains("Exit Code: 0"))
        );
        assert_eq!(out.usage.input, 22);
    }

    /// Issue 9: the context used is the last model call's (Qwen's input
    /// holds the cached tokens) over the model table's window, sent as each
    /// call's message comes.
    #[test]
    fn the_context_used_is_the_last_calls_mid_turn() {
        let table = ContextWindows::new([("fake-model".to_owned(), 1_000)]);
        let s = spec(CliKind::Qwen, Permissions::Default, None);
        let mut p = Qwen.parser(&s, &table);
        p.line(r#"{"type":"system","subtype":"init","session_id":"q","model":"fake-model"}"#);
        let call = |id: &str, input: u64, output: u64| {
            format!(
                r#"{{"type":"assistant","session_id":"q","message":{{"id":"{id}","model":"fake-model","content":[],"usage":{{"input_tokens":{input},"output_tokens":{output},"cache_read_input_tokens":50}}}}}}"#
            )
        };
        let first = p.line(&call("m1", 100, 10));
        assert!(
            matches!(first[0], EventKind::Usage { context_window: Some(1_000), context_used_pct: Some(p), .. } if p == 11.0),
            "{first:?}"
        );
        p.line(&call("m2", 300, 20));
        p.line(r#"{"type":"result","subtype":"success","session_id":"q","result":"ok","usage":{"input_tokens":400,"output_tokens":30}}"#);
        let out = p.finish(Some(0), "");
        assert_eq!(
            out.context_used_pct,
            Some(32.0),
            "the last call, not the sum"
        );
        let (_, out) = parse(include_str!("testdata/qwen-text.jsonl"), 0);
        assert_eq!(
            (out.context_window, out.context_used_pct),
            (Some(131_072), Some(0.0122)),
            "an unknown model has qwen's default window"
        );
    }

    #[test]
    fn sigint_has_no_result() {
        let (_, out) = parse(include_str!("testdata/qwen-sigint-partial.jsonl"), 130);
        assert!(out.failed);
        assert_eq!(out.error.as_deref(), Some("exited with code 130"));
        assert_eq!(
            out.native_session_id.as_deref(),
            Some("26efa9b6-820e-476c-817d-e6dbf75e7cf1")
        );
    }
}
