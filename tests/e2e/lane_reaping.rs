//! No process left behind (issue 13, point 5): a child that leaves the
//! turn's process group with `setsid` ends with its turn, whether the turn
//! ends by itself or is interrupted; and when the daemon and the shim were
//! both killed, the turn reported lost takes what it started down with it;
//! and a turn is read to its last line, however much it printed.

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

/// Issue 13, point 8: only 4 MiB of output was read after the process
/// exited, and the cut line was parsed as the last one.
#[test]
fn a_turn_with_more_than_4_mib_of_output_is_read_to_its_last_line() {
    let home = daemon();
    let script = "head -c 9000000 /dev/zero | tr '\\0' x; echo; echo FINAL-LINE-MARK";
    let (c, v) = code(
        &home,
        &[
            "lane", "run", "--cli", "exec", "-n", "loud", "--", "sh", "-c", script,
        ],
    );
    assert_eq!(
        c,
        0,
        "{}",
        v.to_string().chars().take(300).collect::<String>()
    );
    let events = home.ok(&["--json", "lane", "events", "loud"]);
    let last_message = events
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "message")
        .map(|e| e["text"].clone());
    assert_eq!(last_message, Some(serde_json::json!("FINAL-LINE-MARK")));
}
