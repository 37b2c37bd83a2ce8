//! Tests of the pi connector on real captured output.

use flotilla_actors::lane::events::EventKind;

use super::super::common::testing::{of, plan, run, spec};
use super::*;

/// A parser of a lane with no `--model`, on the built-in model table.
fn parser() -> PiParser {
    PiParser::new(ModelWindow::new(
        CliKind::Pi,
        None,
        &ContextWindows::default(),
    ))
}

fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
    run(Box::new(parser()), fixture, Some(exit), "")
}

#[test]
fn command_lines_per_permission_mode() {
    let s = spec(CliKind::Pi, Permissions::Default, Some("fake/fake-model"));
    let p = plan(&Pi, &s, None).expect("plan");
    assert_eq!(
        p.argv,
        ["pi", "-p", "--mode", "json", "--model", "fake/fake-model"]
    );
    assert!(p.stdin_prompt);
    assert_eq!(p.notes.len(), 1, "pi has no approvals");
    let mut s = spec(CliKind::Pi, Permissions::Workspace, None);
    s.args = vec!["--no-extensions".into()];
    let p = plan(&Pi, &s, Some("01a22b20")).expect("plan");
    assert_eq!(
        p.argv[4..],
        [
            "--tools",
            WORKSPACE_TOOLS,
            "--session",
            "01a22b20",
            "--no-extensions"
        ]
    );
    let p = plan(&Pi, &spec(CliKind::Pi, Permissions::Bypass, None), None).expect("plan");
    assert_eq!(p.argv.len(), 4);
    assert_eq!(p.notes.len(), 1);
}

#[test]
fn text_and_resume() {
    let (events, out) = parse(include_str!("testdata/pi-text.jsonl"), 0);
    assert!(!out.failed, "{out:?}");
    assert_eq!(out.result.as_deref(), Some("hello from fake"));
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("01a22b20-aeee-7187-9cc5-8c651e0e0d96")
    );
    assert_eq!((out.usage.input, out.usage.output), (11, 5));
    assert_eq!(out.cost_usd, Some(0.0));
    assert_eq!(of(&events, "message").len(), 1, "deltas are not messages");
    let (_, again) = parse(include_str!("testdata/pi-resume.jsonl"), 0);
    assert!(!again.failed);
    assert_eq!(again.native_session_id, out.native_session_id);
}

#[test]
fn a_tool_pi_does_not_have() {
    let (events, out) = parse(
        include_str!("testdata/pi-tool-write-readonly-tools.jsonl"),
        0,
    );
    assert!(!out.failed);
    assert!(
        matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, id, input }
        if name == "write" && id.as_deref() == Some("call_fake_1") && input.contains("out.txt"))
    );
    assert!(
        matches!(of(&events, "tool.result")[0], EventKind::ToolResult { is_error: true, output, .. }
        if output == "Tool write not found")
    );
    assert_eq!((out.usage.input, out.usage.output), (22, 10));
}

#[test]
fn api_errors_exit_0_with_stop_reason_error() {
    let (events, out) = parse(include_str!("testdata/pi-http400.jsonl"), 0);
    assert!(out.failed);
    assert_eq!(
        out.error.as_deref(),
        Some("400 fake server scripted HTTP 400")
    );
    assert_eq!(of(&events, "error").len(), 1);
    let (events, out) = parse(include_str!("testdata/pi-http500-default-retries.jsonl"), 0);
    assert!(out.failed);
    assert_eq!(
        out.error.as_deref(),
        Some("500 fake server scripted HTTP 500")
    );
    assert_eq!(of(&events, "note").len(), 3, "one note per retry");
}

#[test]
fn a_retry_that_succeeds_clears_the_error() {
    let mut p = parser();
    p.line(r#"{"type":"agent_start"}"#);
    p.line(r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500"}}"#);
    p.line(r#"{"type":"agent_end"}"#);
    p.line(r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3}"#);
    p.line(r#"{"type":"agent_start"}"#);
    p.line(r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop"}}"#);
    p.line(r#"{"type":"agent_end"}"#);
    p.line(r#"{"type":"auto_retry_end","success":true}"#);
    let out = p.finish(Some(0), "");
    assert!(!out.failed);
    assert_eq!(out.result.as_deref(), Some("ok"));
}

#[test]
fn sigint_has_no_agent_end() {
    let (_, out) = parse(include_str!("testdata/pi-sigint-partial.jsonl"), 130);
    assert!(out.failed);
    assert_eq!(out.error.as_deref(), Some("exited with code 130"));
}

/// Issue 9: the context used is the last request's (input, cache reads and
/// writes, output) over the model's window, sent as each request ends.
#[test]
fn the_context_used_is_the_last_requests_mid_turn() {
    let table = ContextWindows::new([("fake-model".to_owned(), 1_000)]);
    let mut p = PiParser::new(ModelWindow::new(
        CliKind::Pi,
        Some("fake/fake-model"),
        &table,
    ));
    let call = |input: u64, read: u64, output: u64| {
        format!(
            r#"{{"type":"message_end","message":{{"role":"assistant","model":"fake-model","content":[],"stopReason":"toolUse","usage":{{"input":{input},"output":{output},"cacheRead":{read},"cacheWrite":0}}}}}}"#
        )
    };
    let first = p.line(&call(100, 0, 10));
    assert!(
        first.iter().any(|e| matches!(e, EventKind::Usage {
        context_window: Some(1_000), context_used_pct: Some(p), ..
    } if *p == 11.0)),
        "{first:?}"
    );
    p.line(&call(20, 280, 20));
    let out = p.finish(Some(0), "");
    assert_eq!(out.usage.input, 400, "the turn's usage is the sum");
    assert_eq!(out.context_window, Some(1_000));
    assert_eq!(
        out.context_used_pct,
        Some(32.0),
        "the last request, not the sum"
    );
}

#[test]
fn the_window_of_an_unknown_model_is_pis_default() {
    let (events, out) = parse(include_str!("testdata/pi-text.jsonl"), 0);
    assert_eq!(out.context_window, Some(128_000));
    assert_eq!(out.context_used_pct, Some(0.0125));
    assert!(matches!(
        of(&events, "usage")[0],
        EventKind::Usage {
            context_used_pct: Some(_),
            ..
        }
    ));
}
