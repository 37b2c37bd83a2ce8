//! The command line itself, whatever the command (issue 12, "a CLI that
//! behaves"): a closed stdout ends a command quietly, usage errors follow
//! `--json`, closed sets suggest the value meant, and the completions and
//! man pages come from the same definition.

use std::process::{Command, Output, Stdio};

use flotilla_tests::TestHome;

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
