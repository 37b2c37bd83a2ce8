//! Fuzzing each CLI connector's output parser: the lines a CLI prints on
//! stdout (JSON events, or plain text for `exec`), fed to
//! [`TurnParser::line`], then [`TurnParser::finish`]. The CLI and whatever
//! it echoes (a model's output, a tool's output, a file it read) are
//! outside input. Seeds are the recorded real sessions in `testdata/`.

use flotilla_actors::fuzzing::{Target, TestCaseError, fuzz, text};
use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{CliKind, Permissions};
use proptest::{prop_assert, prop_assert_eq};

use super::common::testing::spec;
use super::common::{MAX_EVENT, MAX_RESULT};
use super::connector;

/// Room for the `…` that marks a clipped text.
const ELLIPSIS: usize = '…'.len_utf8();

/// Every recorded session of `kind`, one seed each.
fn seeds(kind: CliKind) -> Vec<Vec<u8>> {
    let recorded: &[(&str, &str)] = &[
        ("claude", include_str!("testdata/claude-text.jsonl")),
        ("claude", include_str!("testdata/claude-resume.jsonl")),
        (
            "claude",
            include_str!("testdata/claude-tool-bash-bypass.jsonl"),
        ),
        (
            "claude",
            include_str!("testdata/claude-http500-retries2.jsonl"),
        ),
        ("codex", include_str!("testdata/codex-text.jsonl")),
        (
            "codex",
            include_str!("testdata/codex-tool-exec_command-workspace-write.jsonl"),
        ),
        (
            "codex",
            include_str!("testdata/codex-tool-apply_patch-readonly-rejected.jsonl"),
        ),
        ("codex", include_str!("testdata/codex-http500.jsonl")),
        ("gemini", include_str!("testdata/gemini-text.jsonl")),
        (
            "gemini",
            include_str!("testdata/gemini-tool-run_shell_command-yolo.jsonl"),
        ),
        ("gemini", include_str!("testdata/gemini-http400.jsonl")),
        ("qwen", include_str!("testdata/qwen-text.jsonl")),
        (
            "qwen",
            include_str!("testdata/qwen-tool-write_file-default-denied.jsonl"),
        ),
        ("qwen", include_str!("testdata/qwen-sigint-partial.jsonl")),
        ("pi", include_str!("testdata/pi-text.jsonl")),
        (
            "pi",
            include_str!("testdata/pi-tool-write-readonly-tools.jsonl"),
        ),
        (
            "pi",
            include_str!("testdata/pi-http500-default-retries.jsonl"),
        ),
        ("opencode", include_str!("testdata/opencode-text.jsonl")),
        (
            "opencode",
            include_str!("testdata/opencode-tool-bash.jsonl"),
        ),
        ("opencode", include_str!("testdata/opencode-http400.jsonl")),
        ("grok", include_str!("testdata/grok-text.jsonl")),
        ("grok", include_str!("testdata/grok-tool-bash.jsonl")),
        ("grok", include_str!("testdata/grok-http500.jsonl")),
    ];
    let mut seeds: Vec<Vec<u8>> = recorded
        .iter()
        .filter(|(cli, _)| *cli == kind.as_str())
        .map(|(_, text)| text.as_bytes().to_vec())
        .collect();
    if kind == CliKind::Exec {
        seeds.push(b"building...\nok: 3 passed\n\n\tdone \xe2\x9c\x93\n".to_vec());
    }
    seeds
}

/// Clipped texts stay within their limits.
fn bounded(event: &EventKind) -> Result<(), TestCaseError> {
    let text = match event {
        EventKind::Message { text } => text,
        EventKind::ToolCall { input, .. } => input,
        EventKind::ToolResult { output, .. } => output,
        EventKind::Error { message } => message,
        _ => return Ok(()),
    };
    prop_assert!(
        text.len() <= MAX_EVENT + ELLIPSIS,
        "an event of {} bytes",
        text.len()
    );
    Ok(())
}

fn check(kind: CliKind, input: &[u8]) -> Result<(), TestCaseError> {
    let mut spec = spec(kind, Permissions::Workspace, Some("model-x"));
    // No real CLI state is read: codex's rollout lookup finds nothing.
    let nowhere = "/nonexistent/flotilla-fuzz".to_owned();
    spec.env = vec![
        ("HOME".into(), nowhere.clone()),
        ("CODEX_HOME".into(), nowhere),
    ];
    let Some(connector) = connector(kind) else {
        return Ok(());
    };
    let mut parser = connector.parser(&spec, &Default::default());
    let output = text(input);
    for line in output.split('\n') {
        for event in parser.line(line) {
            bounded(&event)?;
            prop_assert!(serde_json::to_string(&event).is_ok());
        }
    }
    let outcome = parser.finish(Some(0), "some stderr\n");
    let result = outcome.result.as_deref().map_or(0, str::len);
    prop_assert!(
        result <= MAX_RESULT + ELLIPSIS,
        "a result of {result} bytes"
    );
    prop_assert_eq!(outcome.failed, outcome.error.is_some());
    let failed = parser.finish(Some(1), "");
    prop_assert!(failed.failed, "exit code 1 is a failure");
    Ok(())
}

fn fuzz_cli(kind: CliKind) {
    let seeds = seeds(kind);
    assert!(!seeds.is_empty(), "no seed for {kind:?}");
    let name = format!("cli-{}", kind.as_str());
    let target = Target {
        name: &name,
        seeds: &seeds,
        dictionary: &[
            b"\n",
            b"{",
            b"}",
            b"[",
            b"]",
            b"\"",
            b":",
            b",",
            b"null",
            b"true",
            b"-1",
            b"1e308",
            b"18446744073709551616",
            b"\\u0000",
            b"\"type\":",
            b"\"result\"",
            b"\"usage\":{",
            b"\"error\"",
            b"\"session_id\":",
            b"\xe2\x80\xa6",
            b"\xff",
        ],
    };
    fuzz(target, |input| check(kind, input));
}

#[test]
fn fuzz_cli_exec() {
    fuzz_cli(CliKind::Exec);
}

#[test]
fn fuzz_cli_claude() {
    fuzz_cli(CliKind::Claude);
}

#[test]
fn fuzz_cli_codex() {
    fuzz_cli(CliKind::Codex);
}

#[test]
fn fuzz_cli_gemini() {
    fuzz_cli(CliKind::Gemini);
}

#[test]
fn fuzz_cli_qwen() {
    fuzz_cli(CliKind::Qwen);
}

#[test]
fn fuzz_cli_pi() {
    fuzz_cli(CliKind::Pi);
}

#[test]
fn fuzz_cli_opencode() {
    fuzz_cli(CliKind::Opencode);
}

#[test]
fn fuzz_cli_grok() {
    fuzz_cli(CliKind::Grok);
}
