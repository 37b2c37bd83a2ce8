//! Watchdog restarts of stalled turns against the other ways a turn ends
//! (hardening review of lanes, section 8, point 2): a deadline that comes
//! while the watchdog's kill is under way, and `flotilla down` after a
//! restart.

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};

use crate::lanes::{code, running_with, unique};

const STALLING: &str =
    "watchdog_interval_ms = 100\nlane_stall_secs = 1.0\nlane_stall_restarts = 2\n";

/// A command that stops itself on its first run (a stall) and runs
/// `then` when the watchdog starts it again.
fn stall_once_then(home: &TestHome, then: &str) -> String {
    let marker = home.path().join("stalled-once");
    format!(
        "if [ -e {m} ]; then {then}; else touch {m}; kill -STOP $$; fi",
        m = marker.display()
    )
}

fn events(home: &TestHome, lane: &str) -> String {
    String::from_utf8_lossy(&home.run(&["lane", "events", lane]).stdout).into_owned()
}

/// Point 2.i: a deadline (or interrupt) that arrived between the
/// watchdog's kill and the exit was swallowed, and the relaunched attempt
/// ran unbounded. The kill is held open for 8 s (a pause point) so the
/// 5 s deadline falls inside it.
#[test]
fn a_deadline_during_the_watchdogs_kill_ends_the_turn_without_a_relaunch() {
    let mut home = TestHome::new();
    home.write_config(STALLING);
    home.env
        .push(("FLOTILLA_TEST_PAUSE_AT".into(), "lane.killed:8000".into()));
    home.spawn_daemon("h");
    let late = unique(41);
    let script = stall_once_then(&home, &format!("sleep {late}; echo late"));
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "racy",
        "--restart-on-stall",
        "--timeout",
        "5",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let (c, v) = code(&home, &["lane", "wait", "racy", "--timeout", "25"]);
    assert_eq!((c, v["status"].as_str()), (124, Some("timed_out")), "{v}");
    assert!(
        !running_with(&format!("sleep {}", unique(41))),
        "no relaunched attempt runs past the deadline"
    );
    let log = events(&home, "racy");
    assert!(log.contains("restarting the turn in place"), "{log}");
    assert!(!log.contains("restarted the turn"), "{log}");
}

/// Point 2.iii: `flotilla down` read the exit of the turn's first attempt,
/// not of the watchdog's restart that was running.
#[test]
fn down_after_a_restart_records_the_exit_of_the_attempt_that_ran() {
    let home = TestHome::new();
    home.write_config(STALLING);
    home.ok(&["up", "--name", "h"]);
    let script = stall_once_then(
        &home,
        "trap 'exit 7' INT; echo second; while :; do sleep 0.2; echo tick; done",
    );
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "twice",
        "--restart-on-stall",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    wait_until("the restarted attempt", Duration::from_secs(30), || {
        events(&home, "twice").contains("message: second")
    });
    home.ok(&["down"]);
    home.ok(&["up", "--name", "h"]);
    let (_, v) = code(&home, &["lane", "wait", "twice"]);
    assert_eq!(v["status"], "interrupted", "{v}");
    assert_eq!(v["exit"], 7, "the restart's exit code: {v}");
    home.ok(&["down"]);
}

/// Point 2.ii: turn 2 of a lane, stalled before its CLI named a session,
/// was restarted as "continue" in turn 1's session: its own prompt was
/// lost. A fake `claude` (stream-json, resumable) stalls once on that
/// prompt; the restart must give it the prompt again.
#[test]
fn a_stalled_second_turn_without_a_session_keeps_its_prompt() {
    let mut home = TestHome::new();
    let fake = home.path().join("fake-claude");
    let stalled = home.path().join("stalled-once");
    let script = format!(
        r#"#!/bin/sh
prompt=$(cat)
if [ "$prompt" = "SECOND-MARK" ] && [ ! -e {s} ]; then touch {s}; kill -STOP $$; fi
echo '{{"type":"system","subtype":"init","session_id":"sess-1"}}'
printf '{{"type":"result","subtype":"success","is_error":false,"result":"got %s","session_id":"sess-1"}}\n' "$prompt"
"#,
        s = stalled.display()
    );
    flotilla_tests::write_executable(&fake, &script);
    home.write_config(&format!(
        "{STALLING}[clis]\nclaude = \"{}\"\n",
        fake.display()
    ));
    // The watchdog checks the model endpoint before a restart: one that
    // answers, on loopback.
    let endpoint = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let url = format!("http://{}", endpoint.local_addr().expect("addr"));
    home.env.push(("ANTHROPIC_BASE_URL".into(), url));
    home.spawn_daemon("h");
    home.ok(&[
        "lane",
        "run",
        "--cli",
        "claude",
        "-n",
        "two",
        "--prompt",
        "FIRST-MARK",
    ]);
    home.ok(&["lane", "resume", "two", "--prompt", "SECOND-MARK"]);
    let (c, v) = code(&home, &["lane", "wait", "two", "--timeout", "30"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], "got SECOND-MARK", "{v}");
    assert!(events(&home, "two").contains("restarted the turn"));
}

/// Issue 12: a quiet exec command (a `sleep`) is not a stall to act on: the
/// watchdog notes it and lets it run, unless the lane asked for restarts.
#[test]
fn an_exec_lanes_command_is_not_run_again_without_restart_on_stall() {
    let mut home = TestHome::new();
    home.write_config(STALLING);
    home.spawn_daemon("h");
    let counter = home.path().join("runs");
    let script = format!("echo run >> {}; sleep 3; echo done", counter.display());
    let (c, v) = code(
        &home,
        &[
            "lane", "run", "--cli", "exec", "-n", "quiet", "--", "sh", "-c", &script,
        ],
    );
    assert_eq!((c, v["result"].as_str()), (0, Some("done")), "{v}");
    let runs = std::fs::read_to_string(&counter).expect("runs");
    assert_eq!(runs.lines().count(), 1, "the command ran once");
    let log = events(&home, "quiet");
    assert!(log.contains("not run again unless"), "{log}");
    assert!(!log.contains("restarting the turn"), "{log}");
}

/// Issue 12: an agent CLI whose model endpoint is unreachable is not
/// restarted (a restart would stall again); the watchdog waits, spending
/// no restart, and restarts it once the endpoint answers.
#[test]
fn the_watchdog_waits_for_the_model_endpoint_before_a_restart() {
    let mut home = TestHome::new();
    let fake = home.path().join("fake-claude");
    let stalled = home.path().join("stalled-once");
    let script = format!(
        r#"#!/bin/sh
case "$1" in --version) echo '2.1.197 (Claude Code)'; exit 0;; esac
prompt=$(cat)
if [ ! -e {s} ]; then touch {s}; kill -STOP $$; fi
printf '{{"type":"result","subtype":"success","is_error":false,"result":"got %s","session_id":"s"}}\n' "$prompt"
"#,
        s = stalled.display()
    );
    flotilla_tests::write_executable(&fake, &script);
    // One restart allowed: waiting must not spend it.
    home.write_config(&format!(
        "watchdog_interval_ms = 100\nlane_stall_secs = 1.0\nlane_stall_restarts = 1\n\
         [clis]\nclaude = \"{}\"\n",
        fake.display()
    ));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    home.env.push((
        "ANTHROPIC_BASE_URL".into(),
        format!("http://127.0.0.1:{port}"),
    ));
    home.spawn_daemon("h");
    home.ok(&[
        "lane", "start", "--cli", "claude", "-n", "net", "--prompt", "NET-MARK",
    ]);
    wait_until("the watchdog waits twice", Duration::from_secs(30), || {
        events(&home, "net")
            .matches("is unreachable; waiting")
            .count()
            >= 2
    });
    assert!(!events(&home, "net").contains("restarting the turn"));
    let _endpoint = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the endpoint");
    let (c, v) = code(&home, &["lane", "wait", "net", "--timeout", "30"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], "got NET-MARK", "{v}");
    assert!(events(&home, "net").contains("restarted the turn"));
}
