//! Lanes across failures: a daemon crash during a turn (adopted, or
//! reported lost, never silent), a deadline that holds across a crash,
//! `flotilla down` with turns running, and the watchdog's restarts of
//! stalled turns.

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};

use crate::lanes::{code, daemon, kill_turn_with_daemon, running_with, unique};

fn stalling_daemon(restarts: u32) -> TestHome {
    let mut home = TestHome::new();
    let config = format!(
        "watchdog_interval_ms = 100\nlane_stall_secs = 1.0\nlane_stall_restarts = {restarts}\n"
    );
    std::fs::write(home.path().join("config.toml"), config).expect("config");
    home.spawn_daemon("h");
    home
}

#[test]
fn a_turn_survives_a_daemon_crash_and_is_adopted() {
    let mut home = daemon();
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "long",
        "--",
        "sh",
        "-c",
        "echo before; read line < /dev/null; sleep 2; echo after",
    ]);
    wait_until("the first output", Duration::from_secs(10), || {
        let out = home.run(&["lane", "events", "long"]);
        String::from_utf8_lossy(&out.stdout).contains("message: before")
    });
    home.kill_daemon();
    home.spawn_daemon("h");
    let (c, v) = code(&home, &["lane", "wait", "long"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(
        v["result"], "before\nafter",
        "output is neither lost nor repeated"
    );
    let events =
        String::from_utf8_lossy(&home.run(&["lane", "events", "long"]).stdout).into_owned();
    assert!(events.contains("adopted"), "{events}");
}

#[test]
fn a_turn_whose_process_died_with_the_daemon_is_reported_lost() {
    let mut home = daemon();
    let doomed = unique(7);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "doomed", "--", "sleep", &doomed,
    ]);
    wait_until("the process", Duration::from_secs(10), || {
        home.json(&["lane", "status", "doomed"])["pid"].is_number()
    });
    kill_turn_with_daemon(&mut home, "doomed", &format!("sleep {}", unique(7)));
    home.spawn_daemon("h");
    let (c, v) = code(&home, &["lane", "wait", "doomed"]);
    assert_eq!((c, v["status"].as_str()), (1, Some("lost")), "{v}");
    assert!(
        v["error"]
            .as_str()
            .expect("error")
            .contains("was gone when the daemon restarted")
    );
}

#[test]
fn down_leaves_no_lane_process_running() {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h"]);
    let bg = unique(8);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "bg", "--", "sleep", &bg,
    ]);
    wait_until("the process", Duration::from_secs(10), || {
        running_with(&format!("sleep {}", unique(8)))
    });
    home.ok(&["down"]);
    assert!(
        !running_with(&format!("sleep {}", unique(8))),
        "flotilla down stops every lane's process"
    );
    home.ok(&["up", "--name", "h"]);
    let (_, v) = code(&home, &["lane", "wait", "bg"]);
    assert_eq!(v["status"], "interrupted");
}

#[test]
fn the_watchdog_restarts_a_stalled_turn_in_place() {
    let home = stalling_daemon(2);
    let marker = home.path().join("stalled-once");
    let script = format!(
        "if [ -e {m} ]; then echo recovered; else touch {m}; kill -STOP $$; fi",
        m = marker.display()
    );
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "stuck",
            "--restart-on-stall",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_eq!((c, v["status"].as_str()), (0, Some("completed")), "{v}");
    assert_eq!(v["result"], "recovered");
    let events =
        String::from_utf8_lossy(&home.run(&["lane", "events", "stuck"]).stdout).into_owned();
    assert!(
        events.contains("watchdog: no output and no CPU time"),
        "{events}"
    );
    assert!(events.contains("restarted the turn"), "{events}");
}

#[test]
fn the_watchdog_gives_up_after_its_restarts() {
    let home = stalling_daemon(1);
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "dead",
            "--restart-on-stall",
            "--",
            "sh",
            "-c",
            "kill -STOP $$",
        ],
    );
    assert_eq!((c, v["status"].as_str()), (1, Some("failed")), "{v}");
    assert!(v["error"].as_str().unwrap_or("").contains("gave up"), "{v}");
}

#[test]
fn a_deadline_holds_across_a_daemon_crash() {
    let mut home = daemon();
    let sleeper = unique(9);
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "bounded",
        "--timeout",
        "3",
        "--",
        "sleep",
        &sleeper,
    ]);
    wait_until("the process", Duration::from_secs(10), || {
        running_with(&format!("sleep {sleeper}"))
    });
    home.kill_daemon();
    home.spawn_daemon("h");
    let (c, v) = code(&home, &["lane", "wait", "bounded"]);
    assert_eq!((c, v["status"].as_str()), (124, Some("timed_out")), "{v}");
    wait_until("no leftover process", Duration::from_secs(15), || {
        !running_with(&format!("sleep {sleeper}"))
    });
}
