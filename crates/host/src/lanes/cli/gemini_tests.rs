//! Tests of the gemini connector on real captured output.

use flotilla_actors::lane::events::EventKind;

use super::super::common::testing::{of, plan, run, spec};
use super::*;

/// A parser of a lane with no `-m`, on the built-in model table.
fn parser() -> GeminiParser {
    GeminiParser::new(ModelWindow::new(
        CliKind::Gemini,
        None,
        &ContextWindows::default(),
    ))
}

fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
    run(Box::new(parser()), fixture, Some(exit), "")
}

#[test]
fn command_lines_per_permission_mode() {
    let s = spec(
        CliKind::Gemini,
        Permissions::Default,
        Some("gemini-2.5-flash"),
    );
    let p = plan(&Gemini, &s, None).expect("plan");
    assert_eq!(
        p.argv,
        ["gemini", "-o", "stream-json", "-m", "gemini-2.5-flash"]
    );
    assert!(p.stdin_prompt && p.notes.is_empty());
    assert_eq!(
        p.env,
        [("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned())]
    );
    let mut s = spec(CliKind::Gemini, Permissions::Workspace, Some("m"));
    s.args = vec!["--include-directories".into(), "/data".into()];
    let p = plan(&Gemini, &s, Some("uuid-1")).expect("plan");
    assert_eq!(
        p.argv[5..],
        [
            "--approval-mode",
            "auto_edit",
            "--resume",
            "uuid-1",
            "--include-directories",
            "/data"
        ]
    );
    let s = spec(CliKind::Gemini, Permissions::Bypass, None);
    let p = plan(&Gemini, &s, None).expect("plan");
    assert_eq!(p.argv[3..], ["--approval-mode", "yolo"]);
    assert_eq!(p.notes.len(), 2, "no model, and bypass");
}

#[test]
fn text_and_resume() {
    let (events, out) = parse(include_str!("testdata/gemini-text.jsonl"), 0);
    assert!(!out.failed);
    assert_eq!(out.result.as_deref(), Some("hello from fake"));
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("c4e25064-c43b-4970-bfbe-52fd63f6efaf")
    );
    assert_eq!(
        (out.usage.input, out.usage.output, out.usage.cached),
        (11, 5, 0)
    );
    assert_eq!(
        of(&events, "message"),
        [&EventKind::Message {
            text: "hello from fake".into()
        }]
    );
    let (_, again) = parse(include_str!("testdata/gemini-resume.jsonl"), 0);
    assert_eq!(again.native_session_id, out.native_session_id);
}

#[test]
fn deltas_are_joined_into_one_message() {
    let mut p = parser();
    assert!(
        p.line(r#"{"type":"message","role":"assistant","content":"hel","delta":true}"#)
            .is_empty()
    );
    p.line(r#"{"type":"message","role":"assistant","content":"lo","delta":true}"#);
    let events = p.line(r#"{"type":"result","status":"success","stats":{}}"#);
    assert_eq!(
        events[0],
        EventKind::Message {
            text: "hello".into()
        }
    );
    assert_eq!(p.finish(Some(0), "").result.as_deref(), Some("hello"));
}

#[test]
fn tools() {
    let (events, out) = parse(
        include_str!("testdata/gemini-tool-write_file-default-notregistered.jsonl"),
        0,
    );
    assert!(!out.failed);
    assert!(
        matches!(of(&events, "tool.call")[0], EventKind::ToolCall { name, id, .. }
        if name == "write_file" && id.as_deref() == Some("write_file__write_file_1796019441919_0"))
    );
    assert!(
        matches!(of(&events, "tool.result")[0], EventKind::ToolResult { is_error: true, output, .. }
        if output.contains("not found"))
    );
    let (events, out) = parse(
        include_str!("testdata/gemini-tool-run_shell_command-yolo.jsonl"),
        0,
    );
    assert!(!out.failed && out.usage.input == 22);
    assert!(matches!(
        of(&events, "tool.result")[0],
        EventKind::ToolResult {
            is_error: false,
            ..
        }
    ));
    let messages = of(&events, "message");
    assert_eq!(messages.len(), 1);
}

#[test]
fn api_errors_exit_with_the_status_low_byte() {
    for (fixture, exit) in [
        (include_str!("testdata/gemini-http400.jsonl"), 144),
        (include_str!("testdata/gemini-http500.jsonl"), 244),
    ] {
        let (events, out) = parse(fixture, exit);
        assert!(out.failed);
        assert!(out.error.expect("error").starts_with("[API Error:"));
        assert_eq!(of(&events, "error").len(), 1);
    }
}

#[test]
fn sigint_exits_0_without_a_result() {
    let (_, out) = parse(include_str!("testdata/gemini-sigint.jsonl"), 0);
    assert!(out.failed);
    assert_eq!(out.result.as_deref(), Some("hello from fake"));
    assert_eq!(
        out.error.as_deref(),
        Some("the CLI exited without finishing its turn")
    );
}

#[test]
fn an_untrusted_folder_gets_a_hint() {
    let mut p = parser();
    let out = p.finish(
        Some(55),
        "Gemini CLI is not running in a trusted directory.",
    );
    assert!(out.failed);
    assert!(
        out.error
            .expect("error")
            .contains("GEMINI_CLI_TRUST_WORKSPACE")
    );
}

#[test]
fn an_api_errors_status_comes_back_from_the_exit_code() {
    assert_eq!(super::http_status_of_exit(145), Some(401));
    assert_eq!(super::http_status_of_exit(173), Some(429));
    assert_eq!(super::http_status_of_exit(244), Some(500));
    assert_eq!(super::http_status_of_exit(1), None);
    assert_eq!(super::http_status_of_exit(55), None, "gemini's own code");
}

/// Issue 9: gemini tells only the turn's totals, so the last request is
/// estimated as the main model's totals over the requests counted (one per
/// round of output between tool results); the window is the table's.
#[test]
fn the_context_used_is_estimated_per_request() {
    let (_, out) = parse(include_str!("testdata/gemini-text.jsonl"), 0);
    assert_eq!(out.context_window, Some(1_048_576));
    assert_eq!(
        out.context_used_pct,
        Some(0.0015),
        "16 tokens of one request"
    );
    let (_, out) = parse(
        include_str!("testdata/gemini-tool-run_shell_command-yolo.jsonl"),
        0,
    );
    assert_eq!(out.usage.input, 22);
    assert_eq!(
        out.context_used_pct,
        Some(0.0015),
        "32 tokens over two requests"
    );
    let windows = ContextWindows::new([("gemini-2.5-flash".to_owned(), 1_000)]);
    let mut p = GeminiParser::new(ModelWindow::new(CliKind::Gemini, None, &windows));
    p.line(r#"{"type":"init","session_id":"s","model":"auto"}"#);
    p.line(r#"{"type":"tool_use","tool_name":"a","tool_id":"1","parameters":{}}"#);
    p.line(r#"{"type":"tool_use","tool_name":"b","tool_id":"2","parameters":{}}"#);
    p.line(r#"{"type":"tool_result","tool_id":"1","status":"success","output":""}"#);
    p.line(r#"{"type":"tool_result","tool_id":"2","status":"success","output":""}"#);
    p.line(r#"{"type":"message","role":"assistant","content":"done","delta":true}"#);
    let events = p.line(r#"{"type":"result","status":"success","stats":{"input_tokens":630,"output_tokens":30,"models":{"gemini-2.5-flash-lite":{"input_tokens":30,"output_tokens":0},"gemini-2.5-flash":{"input_tokens":600,"output_tokens":30}}}}"#);
    assert!(events.iter().any(|e| matches!(e, EventKind::Usage { context_window: Some(1_000), context_used_pct: Some(p), .. } if *p == 31.5)), "{events:?}");
}
