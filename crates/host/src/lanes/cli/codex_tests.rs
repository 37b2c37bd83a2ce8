//! Tests of the codex connector on real captured output.

use flotilla_actors::lane::events::EventKind;

use super::super::common::testing::{of, plan, run, spec};
use super::*;

fn parse(fixture: &str, exit: i32) -> (Vec<EventKind>, Outcome) {
    run(Box::new(CodexParser::new(None)), fixture, Some(exit), "")
}

#[test]
fn new_turns_read_the_prompt_from_stdin() {
    let s = spec(CliKind::Codex, Permissions::Default, None);
    let p = plan(&Codex, &s, None).expect("plan");
    assert_eq!(
        p.argv,
        ["codex", "exec", "--json", "--skip-git-repo-check", "-"]
    );
    assert!(p.stdin_prompt && p.notes.is_empty());
}

#[test]
fn workspace_uses_the_sandbox_flag_or_its_config_on_resume() {
    let mut s = spec(CliKind::Codex, Permissions::Workspace, Some("gpt-5.5"));
    s.args = vec!["-c".into(), "model_reasoning_effort=\"low\"".into()];
    let new = plan(&Codex, &s, None).expect("plan");
    assert_eq!(
        new.argv[4..],
        [
            "-m",
            "gpt-5.5",
            "-s",
            "workspace-write",
            "-c",
            "model_reasoning_effort=\"low\"",
            "-"
        ]
    );
    let resumed = plan(&Codex, &s, Some("thread-1")).expect("plan");
    assert_eq!(
        resumed.argv[6..],
        [
            "-c",
            "sandbox_mode=\"workspace-write\"",
            "-c",
            "model_reasoning_effort=\"low\"",
            "resume",
            "thread-1",
            "-"
        ]
    );
}

#[test]
fn bypass_says_so() {
    let s = spec(CliKind::Codex, Permissions::Bypass, None);
    let p = plan(&Codex, &s, Some("t")).expect("plan");
    assert_eq!(
        p.argv[4..],
        [
            "--dangerously-bypass-approvals-and-sandbox",
            "resume",
            "t",
            "-"
        ]
    );
    assert_eq!(p.notes.len(), 1);
}

#[test]
fn text_turn() {
    let (events, out) = parse(include_str!("testdata/codex-text.jsonl"), 0);
    assert!(!out.failed);
    assert_eq!(out.result.as_deref(), Some("hello from fake"));
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("01a22b12-54f3-73c2-b2f0-876c7290e1cc")
    );
    assert_eq!(
        (out.usage.input, out.usage.output, out.usage.cached),
        (11, 5, 0)
    );
    assert_eq!((out.context_window, out.cost_usd), (None, None));
    assert_eq!(of(&events, "message").len(), 1);
    assert_eq!(of(&events, "usage").len(), 1);
}

#[test]
fn resumed_usage_is_cumulative_without_a_rollout() {
    let (_, out) = parse(include_str!("testdata/codex-resume-other-cwd.jsonl"), 0);
    assert!(!out.failed);
    assert_eq!((out.usage.input, out.usage.output), (33, 15));
}

#[test]
fn resumed_usage_is_the_turns_own_with_a_rollout() {
    let home = tempfile::tempdir().expect("tempdir");
    let day = home.path().join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).expect("mkdir");
    let count = |i: u64, o: u64| {
        format!(
            r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{i},"cached_input_tokens":0,"output_tokens":{o},"total_tokens":{}}},"last_token_usage":{{"input_tokens":11,"output_tokens":5,"total_tokens":16}},"model_context_window":258400}}}}}}"#,
            i + o
        )
    };
    let started = r#"{"type":"event_msg","payload":{"type":"task_started"}}"#;
    let rollout = [
        started.to_owned(),
        count(11, 5),
        started.to_owned(),
        count(22, 10),
        started.to_owned(),
        count(33, 15),
    ]
    .join("\n");
    std::fs::write(
        day.join("rollout-2026-11-30T06-09-00-01a22b12-54f3-73c2-b2f0-876c7290e1cc.jsonl"),
        rollout,
    )
    .expect("write");
    let parser = CodexParser::new(Some(home.path().to_owned()));
    let (events, out) = run(
        Box::new(parser),
        include_str!("testdata/codex-resume-other-cwd.jsonl"),
        Some(0),
        "",
    );
    assert_eq!((out.usage.input, out.usage.output), (11, 5));
    assert_eq!(out.context_window, Some(258_400));
    assert_eq!(out.context_used_pct, Some(0.0062));
    assert!(
        matches!(of(&events, "usage")[0], EventKind::Usage { usage, context_window: Some(258_400), context_used_pct: Some(_) } if usage.input == 11)
    );
}

#[test]
fn tools_become_calls_and_results() {
    let (events, out) = parse(
        include_str!("testdata/codex-tool-exec_command-workspace-write.jsonl"),
        0,
    );
    assert!(!out.failed);
    let calls = of(&events, "tool.call");
    assert_eq!(calls.len(), 1, "started once, completed once");
    assert!(matches!(calls[0], EventKind::ToolCall { name, id, input }
        if name == "command_execution" && id.as_deref() == Some("item_0") && input.contains("sh.txt")));
    assert!(matches!(
        of(&events, "tool.result")[0],
        EventKind::ToolResult {
            is_error: false,
            ..
        }
    ));
    let (events, _) = parse(
        include_str!("testdata/codex-tool-apply_patch-workspace-write.jsonl"),
        0,
    );
    assert!(
        matches!(of(&events, "tool.result")[0], EventKind::ToolResult { output, .. }
        if output == "add /tmp/clifacts/codex/wd/out.txt")
    );
    let (events, out) = parse(
        include_str!("testdata/codex-tool-apply_patch-readonly-rejected.jsonl"),
        0,
    );
    assert!(!out.failed && of(&events, "tool.call").is_empty());
}

#[test]
fn http_errors_fail_once() {
    let (events, out) = parse(include_str!("testdata/codex-http500.jsonl"), 1);
    assert!(out.failed);
    assert!(out.error.expect("error").contains("high demand"));
    assert_eq!(of(&events, "error").len(), 1);
    let (_, out) = parse(include_str!("testdata/codex-http400.jsonl"), 1);
    assert!(
        out.error
            .expect("error")
            .contains("fake server scripted HTTP 400")
    );
}

#[test]
fn sigint_leaves_the_turn_unfinished() {
    let (_, out) = parse(include_str!("testdata/codex-sigint.jsonl"), 1);
    assert!(out.failed);
    assert_eq!(out.error.as_deref(), Some("exited with code 1"));
    assert_eq!(
        out.native_session_id.as_deref(),
        Some("01a22b12-9f48-76e1-a442-38e80a7cc232")
    );
}

#[test]
fn an_error_before_a_completed_turn_does_not_fail_it() {
    let mut p = CodexParser::new(None);
    p.line(r#"{"type":"thread.started","thread_id":"t"}"#);
    assert_eq!(
        p.line(r#"{"type":"error","message":"Reconnecting... 1/5"}"#)
            .len(),
        1
    );
    p.line(r#"{"type":"item.completed","item":{"id":"i","type":"error","message":"Model metadata not found"}}"#);
    p.line(r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#);
    assert!(!p.finish(Some(0), "").failed);
}
