//! The command line itself, whatever the command (issue 12, "a CLI that
//! behaves"): a closed stdout ends a command quietly, usage errors follow
//! `--json`, closed sets suggest the value meant, and the completions and
//! man pages come from the same definition.

use std::process::{Command, Output, Stdio};

use flotilla_tests::TestHome;
use serde_json::Value;

/// Runs `cmd` with stdout a pipe whose reader is already gone, as in
/// `flotilla roster | head -0`: the first write meets a closed pipe.
fn run_into_closed_pipe(mut cmd: Command) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run flotilla")
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_0() {
    let mut home = TestHome::new();
    home.spawn_daemon("pipes");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    for args in [
        &["roster"][..],
        &["roster", "--json"],
        &["peers", "--as", "lead"],
        &["host", "status"],
        &["lane", "list", "--json"],
        &["--help"],
    ] {
        let out = run_into_closed_pipe(home.command(args));
        assert_eq!(
            out.status.code(),
            Some(0),
            "flotilla {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "flotilla {args:?} wrote to stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn with_json_a_refused_command_line_is_the_error_envelope_with_exit_2() {
    let home = TestHome::new();
    for args in [
        &["roster", "--bogus", "--json"][..],
        &["--json", "inbox", "--as"],
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "--timeout",
            "soon",
            "--json",
        ],
    ] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "flotilla {args:?}");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("flotilla {args:?}: stdout is not JSON ({e}): {out:?}"));
        assert_eq!(doc["error"]["code"], "usage", "{doc}");
        assert_eq!(doc["error"]["exit"], 2, "{doc}");
        assert!(
            doc["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("error: "),
            "clap's text stays on stderr: {stderr}"
        );
    }
}

#[test]
fn without_json_a_refused_command_line_is_clap_text_and_help_still_works() {
    let home = TestHome::new();
    let out = home.run(&["roster", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unexpected argument '--bogus'"), "{stderr}");
    let help = home.ok(&["--json", "--help"]);
    assert!(help.contains("Usage: flotilla"), "{help}");
    let version = home.ok(&["--json", "--version"]);
    assert!(version.starts_with("flotilla "), "{version}");
}

#[test]
fn a_mistyped_closed_value_gets_the_nearest_one() {
    let home = TestHome::new();
    let stderr = home.fails(&["lane", "run", "--cli", "claud", "--prompt", "hi"], 2);
    assert!(
        stderr.contains("tip: a similar value exists: 'claude'"),
        "{stderr}"
    );
    let out = home.run(&[
        "--json",
        "lane",
        "run",
        "--cli",
        "exec",
        "--permissions",
        "bypas",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the envelope");
    let hint = doc["error"]["hint"].as_str().expect("a hint");
    assert!(hint.contains("a similar value exists: 'bypass'"), "{hint}");
    assert!(hint.contains("default, workspace, bypass"), "{hint}");
}
