//! Results handed out never (hardening review of lanes, section 8): a
//! result put aside by a message's turn, a `wait` whose client died before
//! its reply, a daemon crash between a turn's end and its owner's notice,
//! and a crash between events and the offset they end at. Each result
//! reaches a client, each event is logged once.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};
use serde_json::json;

use crate::lanes::{code, daemon};

/// How many of a lane's events are of type `kind` and hold `needle`.
fn count_events(home: &TestHome, lane: &str, kind: &str, needle: &str) -> usize {
    let out = home.run(&["lane", "events", lane, "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == kind && e.to_string().contains(needle))
        .count()
}

/// A daemon that exits at crash point `point` (see `crash_point`).
fn crashing_daemon(point: &str) -> TestHome {
    let mut home = TestHome::new();
    home.env
        .push(("FLOTILLA_TEST_CRASH_AT".into(), point.to_owned()));
    home.spawn_daemon("h");
    home
}

/// Waits for the daemon to exit on its own, then starts it again without
/// the crash point.
fn restart_after_crash(home: &mut TestHome) {
    let mut child = home.daemon.take().expect("daemon running");
    wait_until("the daemon to crash", Duration::from_secs(30), || {
        child.try_wait().ok().flatten().is_some()
    });
    home.env.retain(|(k, _)| k != "FLOTILLA_TEST_CRASH_AT");
    home.spawn_daemon("h");
}

#[test]
fn a_message_to_an_idle_persistent_lane_keeps_its_uncollected_result() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "keeper",
        "--persistent",
        "--as",
        "lead",
        "--prompt",
        "FIRST-MARK",
        "--",
        "cat",
    ]);
    wait_until("the first turn to end", Duration::from_secs(20), || {
        let v = home.json(&["lane", "status", "keeper"]);
        v["phase"] == "idle" && v["uncollected"] == true
    });
    home.ok(&["send", "--as", "lead", "--to", "keeper", "SECOND-MARK"]);
    wait_until("the second turn to end", Duration::from_secs(20), || {
        let v = home.json(&["lane", "status", "keeper"]);
        v["turns"] == 2 && v["phase"] == "idle"
    });
    let (c, first) = code(&home, &["lane", "wait", "keeper"]);
    assert_eq!((c, first["turn"].as_u64()), (0, Some(1)), "{first}");
    assert!(
        first["result"]
            .as_str()
            .unwrap_or("")
            .contains("FIRST-MARK"),
        "the first turn's result is handed out first: {first}"
    );
    let (c, second) = code(&home, &["lane", "wait", "keeper"]);
    assert_eq!((c, second["turn"].as_u64()), (0, Some(2)), "{second}");
    assert!(
        second["result"]
            .as_str()
            .unwrap_or("")
            .contains("SECOND-MARK"),
        "{second}"
    );
    home.fails(&["lane", "wait", "keeper"], 4);
}

#[test]
fn a_wait_whose_client_died_before_the_reply_leaves_the_result_collectable() {
    let home = daemon();
    let go = home.path().join("go");
    let script = format!(
        "while [ ! -e {g} ]; do sleep 0.05; done; echo done",
        g = go.display()
    );
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "held", "--", "sh", "-c", &script,
    ]);
    // The client asks, then dies before the answer: a byte after the
    // request keeps the daemon from taking the close for a hang-up.
    let mut request =
        serde_json::to_vec(&json!({"v": 1, "id": 1, "op": "lane.wait", "args": {"name": "held"}}))
            .expect("json");
    request.extend_from_slice(b"\nx");
    let mut client = UnixStream::connect(home.socket_path()).expect("connect");
    client.write_all(&request).expect("send");
    drop(client);
    std::fs::write(&go, b"").expect("go");
    wait_until("the turn to end", Duration::from_secs(20), || {
        home.json(&["lane", "status", "held"])["phase"] == "idle"
    });
    let (c, v) = code(&home, &["lane", "wait", "held"]);
    assert_eq!((c, v["result"].as_str()), (0, Some("done")), "{v}");
    home.fails(&["lane", "wait", "held"], 4);
}

#[test]
fn a_crash_after_a_turn_ends_still_logs_it_and_tells_the_owner() {
    let mut home = crashing_daemon("lane.finish");
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "told", "--as", "lead", "--", "echo", "over",
    ]);
    restart_after_crash(&mut home);
    wait_until("the owner's notice", Duration::from_secs(20), || {
        notices_from(&home, "told") > 0
    });
    assert_eq!(
        count_events(&home, "told", "turn.completed", ""),
        1,
        "the turn's end is logged once"
    );
    let (c, v) = code(&home, &["lane", "wait", "told"]);
    assert_eq!((c, v["result"].as_str()), (0, Some("over")), "{v}");
}

/// That the owner was told is committed without an fsync: a crash right
/// after it may lose the record, and the notice is then sent again under
/// the same id, which the owner's inbox stores once.
#[test]
fn a_crash_after_the_owners_notice_is_recorded_tells_the_owner_once() {
    let mut home = crashing_daemon("lane.notice_sent");
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "once", "--as", "lead", "--", "echo", "over",
    ]);
    restart_after_crash(&mut home);
    wait_until("the owner's notice", Duration::from_secs(20), || {
        notices_from(&home, "once") > 0
    });
    let (c, v) = code(&home, &["lane", "wait", "once"]);
    assert_eq!((c, v["result"].as_str()), (0, Some("over")), "{v}");
    assert_eq!(notices_from(&home, "once"), 1, "the owner is told once");
}

/// How many messages from lane `lane` wait in the inbox of `lead`.
fn notices_from(home: &TestHome, lane: &str) -> usize {
    let inbox = home.json(&["inbox", "--as", "lead", "--peek"]);
    let suffix = format!("/{lane}");
    inbox["messages"].as_array().map_or(0, |m| {
        m.iter()
            .filter(|m| m["from"].as_str().unwrap_or("").ends_with(&suffix))
            .count()
    })
}

#[test]
fn a_crash_after_events_are_logged_does_not_repeat_them() {
    let mut home = crashing_daemon("lane.events");
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "once",
        "--",
        "sh",
        "-c",
        "echo ONCE-MARK; read x < /dev/null; sleep 1; echo after",
    ]);
    restart_after_crash(&mut home);
    let (c, v) = code(&home, &["lane", "wait", "once"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(
        count_events(&home, "once", "message", "ONCE-MARK"),
        1,
        "output logged before the crash is not logged again"
    );
}
