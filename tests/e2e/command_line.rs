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
        &["completions", "bash"],
        &["man"],
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

#[test]
fn a_reader_that_stops_after_one_byte_of_a_long_output_leaves_no_error() {
    // The script is far longer than a pipe holds, so the write meets the
    // closed pipe once `head` has gone; pipefail keeps flotilla's status.
    let line = format!(
        "set -o pipefail; '{}' completions bash | head -c1",
        flotilla_tests::flotilla_bin().display()
    );
    let out = Command::new("bash")
        .args(["-c", &line])
        .stdin(Stdio::null())
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(out.stdout.len(), 1);
}

#[test]
fn completions_cover_the_commands_and_leave_out_the_internal_ones() {
    let home = TestHome::new();
    let bash = home.ok(&["completions", "bash"]);
    assert!(bash.contains("_flotilla()"), "a bash function");
    for command in ["roster", "lane", "completions"] {
        assert!(bash.contains(command), "{command} is offered");
    }
    assert!(!bash.contains("lane-shim"), "internal commands stay hidden");
    for shell in ["zsh", "fish", "powershell"] {
        assert!(
            home.ok(&["completions", shell]).contains("roster"),
            "{shell}"
        );
    }
}

#[test]
fn man_prints_a_roff_page_or_writes_one_per_command() {
    let home = TestHome::new();
    let page = home.ok(&["man"]);
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq"),
        "a roff header: {page:.80}"
    );
    assert!(page.contains(".TH flotilla 1"), "{page:.200}");
    assert!(page.contains("roster"), "the page lists the commands");
    let dir = home.path().join("man1");
    let dir_arg = dir.display().to_string();
    let written = home.json(&["man", "--out", &dir_arg]);
    assert_eq!(written["schema"], "flotilla.man.v1");
    for page in ["flotilla.1", "flotilla-lane-run.1", "flotilla-peer-join.1"] {
        let text = std::fs::read_to_string(dir.join(page)).expect(page);
        assert!(text.contains(".TH"), "{page}");
    }
    assert!(
        !dir.join("flotilla-lane-shim.1").exists(),
        "internal commands stay out"
    );
}

#[test]
fn an_empty_flotilla_home_does_not_break_an_explicit_home() {
    let home = flotilla_tests::TestHome::new();
    let out = home
        .command(&["--json", "doctor"])
        .env("FLOTILLA_HOME", "")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("a value is required"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&home.path().display().to_string()));
}

#[test]
fn up_says_a_bad_config_toml_whole_with_its_line_and_column() {
    let home = flotilla_tests::TestHome::new();
    home.write_config("max_message_bytes = \"x\"\n");
    let stderr = home.fails(&["up", "--name", "h"], 1);
    assert!(
        stderr.contains("line 1, column 21") && stderr.contains("expected usize"),
        "{stderr}"
    );
    assert!(stderr.contains("config.toml"), "names the file: {stderr}");
}
