//! Tests of the opencode connector on real captured output.

use flotilla_actors::lane::events::EventKind;

use super::super::common::testing::{of, plan, run, spec};
use super::*;

/// A parser of a lane whose model the table does not know.
fn parser() -> OpencodeParser {
    OpencodeParser::new(128_000)
}

fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
    run(Box::new(parser()), fixture, Some(exit), "")
}

#[test]
fn command_lines_per_permission_mode() {
    let s = spec(
        CliKind::Opencode,
        Permissions::Default,
        Some("fake/fake-model"),
    );
    let p = plan(&Opencode, &s, None).expect("plan");
    assert_eq!(
        p.argv,
        [
            "opencode",
            "run",
            "--format",
            "json",
            "-m",
            "fake/fake-model",
            "--title",
            "flotilla lane worker"
        ]
    );
    assert!(p.stdin_prompt && p.env.is_empty());
    assert!(p.notes.iter().any(|n| n.contains("SIGINT")));
    let mut s = spec(CliKind::Opencode, Permissions::Workspace, None);
    s.args = vec!["--agent".into(), "build".into()];
    let p = plan(&Opencode, &s, Some("ses_1")).expect("plan");
    assert_eq!(p.argv[4..], ["--session", "ses_1", "--agent", "build"]);
    assert_eq!(
        p.env,
        [("OPENCODE_PERMISSION".to_owned(), WORKSPACE.to_owned())]
    );
    let p = plan(
        &Opencode,
        &spec(CliKind::Opencode, Permissions::Bypass, None),
        None,
    )
    .expect("plan");
    assert_eq!(p.argv[4], "--auto");
    assert_eq!(
        p.env,
        [("OPENCODE_PERMISSION".to_owned(), BYPASS.to_owned())]
    );
    for json in [WORKSPACE, BYPASS] {
        serde_json::from_str::<serde_json::Value>(json).expect("valid JSON");
    }
}

#[test]
fn text_turn() {
    let (events, out) = parse(include_str!("testdata/opencode-text.jsonl"), 0);
    assert!(!out.failed);
    assert_eq!(out.result.as_deref(), Some("hello from fake"));
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("ses_dd4dcdc90ffenJkaSLo5Wj7lE6")
    );
    assert_eq!(
        (out.usage.input, out.usage.output, out.usage.cached),
        (11, 5, 0)
    );
    assert_eq!(out.cost_usd, Some(0.0));
    assert_eq!(of(&events, "message").len(), 1);
    assert_eq!(of(&events, "usage").len(), 1);
}

#[test]
fn tools_and_usage_over_steps() {
    let (events, out) = parse(include_str!("testdata/opencode-tool-write.jsonl"), 0);
    assert!(!out.failed);
    assert!(
        matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, id, input }
        if name == "write" && id.as_deref() == Some("call_fake_1") && input.contains("filePath"))
    );
    assert!(
        matches!(of(&events, "tool.result")[0], EventKind::ToolResult { is_error: false, output, .. }
        if output == "Wrote file successfully.")
    );
    assert_eq!((out.usage.input, out.usage.output), (22, 10));
    let (events, _) = parse(include_str!("testdata/opencode-tool-bash.jsonl"), 0);
    assert!(
        matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, .. } if name == "bash")
    );
}

#[test]
fn a_refused_tool_is_an_error_result() {
    let line = r#"{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"bash","callID":"c","state":{"status":"error","input":{"command":"x"},"error":"The user rejected permission to use this specific tool call."}}}"#;
    let mut p = parser();
    let events = p.line(line);
    assert!(
        matches!(&events[1], EventKind::ToolResult { is_error: true, output, .. } if output.contains("rejected"))
    );
}

#[test]
fn http_errors() {
    let (events, out) = parse(include_str!("testdata/opencode-http400.jsonl"), 1);
    assert!(out.failed);
    assert_eq!(
        out.error.as_deref(),
        Some("fake server scripted HTTP 400 (HTTP 400)")
    );
    assert_eq!(of(&events, "error").len(), 1);
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("ses_dd4da3206ffeN2KG6ws1JgQAVy")
    );
    let (_, out) = parse(include_str!("testdata/opencode-http500.jsonl"), 1);
    assert!(out.failed && out.error.expect("error").contains("500"));
}

#[test]
fn sigterm_after_an_ignored_sigint() {
    let (_, out) = parse(
        include_str!("testdata/opencode-sigint-then-sigterm.jsonl"),
        143,
    );
    assert!(out.failed);
    assert_eq!(out.error.as_deref(), Some("exited with code 143"));
}

/// Issue 9: each step is one model request; the context used is the last
/// step's (input, cache, output, reasoning) over the window, sent mid-turn.
#[test]
fn the_context_used_is_the_last_steps_mid_turn() {
    let step = |input: u64, read: u64, output: u64| {
        format!(
            r#"{{"type":"step_finish","sessionID":"s","part":{{"type":"step-finish","tokens":{{"input":{input},"output":{output},"reasoning":5,"cache":{{"write":0,"read":{read}}}}},"cost":0}}}}"#
        )
    };
    let mut p = OpencodeParser::new(1_000);
    let first = p.line(&step(100, 0, 5));
    assert!(
        matches!(first[0], EventKind::Usage { context_window: Some(1_000), context_used_pct: Some(p), .. } if p == 11.0),
        "{first:?}"
    );
    p.line(&step(10, 300, 5));
    let out = p.finish(Some(0), "");
    assert_eq!(out.usage.input, 410);
    assert_eq!(
        out.context_used_pct,
        Some(32.0),
        "the last step, not the sum"
    );
    let windows = ContextWindows::new([("fake-model".to_owned(), 32_000)]);
    let s = spec(
        CliKind::Opencode,
        Permissions::Default,
        Some("fake/fake-model"),
    );
    let (_, out) = run(
        Opencode.parser(&s, &windows),
        include_str!("testdata/opencode-tool-write.jsonl"),
        Some(0),
        "",
    );
    assert_eq!(
        (out.context_window, out.context_used_pct),
        (Some(32_000), Some(0.05))
    );
}
