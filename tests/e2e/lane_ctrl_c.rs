//! Ctrl-C on `lane run` (issue 12): the first detaches and says how to
//! collect the result (exit 0, the lane keeps running); a second within
//! two seconds interrupts the turn (exit 130). Signals go to the real
//! `flotilla` process, as a terminal's Ctrl-C would.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};

use crate::lanes::{daemon, unique};

fn interrupt(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
}

/// Starts `lane run` of a long sleep, attached, with its stderr in a file;
/// returns once its progress shows the turn's process started.
fn attached_run(home: &TestHome, name: &str, n: u32) -> (Child, std::path::PathBuf) {
    let sleep = format!("sleep {}", unique(n));
    let stderr = home.path().join(format!("{name}.stderr"));
    let child = home
        .command(&[
            "lane", "run", "-n", name, "--cli", "exec", "--prompt", "x", "--", "sh", "-c", &sleep,
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("lane run");
    wait_until(
        "the turn's process started",
        Duration::from_secs(20),
        || std::fs::read_to_string(&stderr).is_ok_and(|t| t.contains("process started")),
    );
    (child, stderr)
}

fn wait_exit(child: &mut Child) -> Option<i32> {
    let mut status = None;
    wait_until("lane run exits", Duration::from_secs(30), || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    });
    status.and_then(|s| s.code())
}

#[test]
fn one_ctrl_c_detaches_and_the_lane_keeps_running() {
    let home = daemon();
    let (mut child, stderr) = attached_run(&home, "once", 11);
    interrupt(&child);
    assert_eq!(wait_exit(&mut child), Some(0), "a detach is not a failure");
    let said = std::fs::read_to_string(&stderr).expect("stderr");
    assert!(
        said.contains("detached: lane once keeps running")
            && said.contains(&format!("`{}`", home.flotilla_cmd("lane wait once"))),
        "{said}"
    );
    assert_eq!(home.json(&["lane", "status", "once"])["phase"], "running");
    home.ok(&["lane", "archive", "once"]);
}

#[test]
fn a_second_ctrl_c_interrupts_the_turn() {
    let home = daemon();
    let (mut child, stderr) = attached_run(&home, "twice", 12);
    interrupt(&child);
    wait_until("the detach message", Duration::from_secs(10), || {
        std::fs::read_to_string(&stderr).is_ok_and(|t| t.contains("detached"))
    });
    interrupt(&child);
    assert_eq!(wait_exit(&mut child), Some(130));
    let status = home.json(&["lane", "status", "twice"]);
    assert_eq!(status["phase"], "idle", "{status}");
    assert_eq!(status["last_status"], "interrupted", "{status}");
    assert_eq!(status["uncollected"], false, "run collected the result");
}
