//! No process left behind (issue 13, point 5): a child that leaves the
//! turn's process group with `setsid` ends with its turn, whether the turn
//! ends by itself or is interrupted; and when the daemon and the shim were
//! both killed, the turn reported lost takes what it started down with it.

use std::time::Duration;

use flotilla_tests::wait_until;

use crate::lanes::{code, daemon, running_with, unique};

const PATIENCE: Duration = Duration::from_secs(20);

#[test]
fn a_process_that_escapes_with_setsid_ends_with_its_turn() {
    let home = daemon();
    let quiet = format!("sleep {}", unique(31));
    let script = format!("setsid {quiet} >/dev/null 2>&1 & echo done");
    let (c, v) = code(
        &home,
        &[
            "lane", "run", "--cli", "exec", "-n", "escapes", "--", "sh", "-c", &script,
        ],
    );
    assert_eq!(c, 0, "{v}");
    wait_until("the escaped process to end", PATIENCE, || {
        !running_with(&quiet)
    });

    let held = format!("sleep {}", unique(32));
    let script = format!("setsid {held} >/dev/null 2>&1 & sleep {}", unique(33));
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "held", "--", "sh", "-c", &script,
    ]);
    wait_until("the escaped process to run", PATIENCE, || {
        running_with(&held)
    });
    home.ok(&["lane", "interrupt", "held"]);
    let (c, v) = code(&home, &["lane", "wait", "held"]);
    assert_eq!((c, v["status"].as_str()), (130, Some("interrupted")), "{v}");
    wait_until("the escaped process to end", PATIENCE, || {
        !running_with(&held)
    });
}

#[test]
fn a_lost_turn_kills_the_process_group_its_shim_left() {
    let mut home = daemon();
    let child = format!("sleep {}", unique(34));
    let script = format!("{child}; true");
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "orphan", "--", "sh", "-c", &script,
    ]);
    wait_until("the process", PATIENCE, || {
        home.json(&["lane", "status", "orphan"])["pid"].is_number() && running_with(&child)
    });
    let shim = home.json(&["lane", "status", "orphan"])["pid"]
        .as_i64()
        .expect("pid");
    home.kill_daemon();
    let killed = std::process::Command::new("kill")
        .args(["-s", "KILL", &shim.to_string()])
        .status()
        .expect("kill the shim");
    assert!(killed.success());
    assert!(running_with(&child), "the shim's children outlive it");
    home.spawn_daemon("h");
    let (c, v) = code(&home, &["lane", "wait", "orphan"]);
    assert_eq!((c, v["status"].as_str()), (1, Some("lost")), "{v}");
    wait_until("the lost turn's processes to end", PATIENCE, || {
        !running_with(&child)
    });
}
