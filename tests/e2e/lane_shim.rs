//! The lane shim in both its forms: `flotilla-lane-shim` (the small program
//! the daemon starts when it is installed beside `flotilla`) and `flotilla
//! lane-shim` (what the daemon runs when only `flotilla` is there). Both
//! hold back the command until the daemon's go, and the daemon picks the
//! small one when it can.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use flotilla_tests::{TestHome, flotilla_bin, output_with_stdin};

use crate::lanes::code;

/// Runs a shim form (`program` and its leading words) with `input` on its
/// stdin, in the turn directory `dir`, running `sh -c script`.
fn shim(program: &Path, lead: &[&str], dir: &Path, script: &str, input: &[u8]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(lead)
        .args(["--gated", "--dir"])
        .arg(dir)
        .args(["--", "sh", "-c", script]);
    output_with_stdin(cmd, input)
}

fn small_shim() -> PathBuf {
    flotilla_bin().with_file_name("flotilla-lane-shim")
}

/// Issue 13, point 8: a daemon that crashed at a turn's start (the shim
/// spawned, its pid not yet on disk) left the command running unknown to
/// the restarted daemon, and a `resume` ran a second turn beside it. The
/// shim now runs nothing before the daemon's go, given once its pid is on
/// disk: without it (the daemon's end of the pipe closed), nothing runs.
#[test]
fn a_shim_runs_nothing_before_the_daemons_go() {
    let home = TestHome::new();
    let forms: [(PathBuf, &[&str]); 2] = [(small_shim(), &[]), (flotilla_bin(), &["lane-shim"])];
    for (i, (program, lead)) in forms.iter().enumerate() {
        let dir = home.path().join(format!("turn-{i}"));
        std::fs::create_dir_all(&dir).expect("dir");
        let mark = home.path().join(format!("ran-{i}"));
        let script = format!("touch '{}'", mark.display());
        let crashed = shim(program, lead, &dir, &script, b"");
        assert_eq!(crashed.status.code(), Some(0), "{program:?} {crashed:?}");
        assert!(!mark.exists(), "{program:?} ran without the go");
        assert!(!dir.join("exit").exists(), "no exit code: no turn ran");

        let given = shim(program, lead, &dir, &script, b"g");
        assert_eq!(given.status.code(), Some(0), "{program:?} {given:?}");
        assert!(mark.exists(), "{program:?} runs once the go is given");
        assert_eq!(
            std::fs::read_to_string(dir.join("exit")).expect("exit"),
            "0\n"
        );
    }
}

/// The small shim refuses what the daemon never sends, with exit 2.
#[test]
fn the_small_shim_refuses_arguments_it_does_not_know() {
    let out = Command::new(small_shim())
        .args(["--dir", "/nonexistent", "--bogus", "--", "true"])
        .output()
        .expect("run the shim");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--bogus"),
        "{out:?}"
    );
}

/// The command line of the lane command's parent: its shim.
const PARENT: &str = "tr '\\0' ' ' < /proc/$PPID/cmdline";

fn parent_of_a_lane_command(home: &TestHome, name: &str) -> String {
    let (c, v) = code(
        home,
        &[
            "lane", "run", "--cli", "exec", "-n", name, "--", "sh", "-c", PARENT,
        ],
    );
    assert_eq!(c, 0, "{v}");
    v["result"].as_str().unwrap_or_default().to_owned()
}

/// The daemon runs turns under the small shim beside it, and under its own
/// `lane-shim` when only `flotilla` is installed (a copy of it, alone in a
/// directory, runs the daemon here).
#[test]
#[cfg(target_os = "linux")]
fn the_daemon_uses_the_small_shim_beside_it_and_its_own_without_one() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let parent = parent_of_a_lane_command(&home, "beside");
    assert!(
        parent.contains("flotilla-lane-shim --gated"),
        "the small shim runs the turn: {parent}"
    );

    // `flotilla` alone: a hard link (or a copy) in a directory of its own,
    // inside the target directory so a link works.
    let alone = flotilla_bin()
        .with_file_name(format!("shimless-{}", std::process::id()))
        .join("flotilla");
    let _ = std::fs::remove_dir_all(alone.parent().expect("dir"));
    std::fs::create_dir_all(alone.parent().expect("dir")).expect("dir");
    if std::fs::hard_link(flotilla_bin(), &alone).is_err() {
        std::fs::copy(flotilla_bin(), &alone).expect("copy flotilla");
    }
    let other = TestHome::new();
    let log = std::fs::File::create(other.path().join("daemon-test.stderr")).expect("log");
    let mut daemon = Command::new(&alone)
        .arg("--home")
        .arg(other.path())
        .args(["host", "run", "--name", "alone"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn the daemon");
    other.wait_answering();
    let parent = parent_of_a_lane_command(&other, "alone");
    flotilla_tests::stop_child(&mut daemon);
    let _ = std::fs::remove_dir_all(alone.parent().expect("dir"));
    assert!(
        parent.contains("flotilla lane-shim --gated") && !parent.contains("flotilla-lane-shim"),
        "its own lane-shim runs the turn: {parent}"
    );
}
