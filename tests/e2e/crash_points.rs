//! Issue 13, point 9: `kill -9` at each stage of a send, made exact with
//! the daemon's crash points (test hooks only: `FLOTILLA_TEST_CRASH_AT`
//! makes the daemon exit at once, without cleaning up, when it reaches the
//! named step). A careful client retries with the same id; each message
//! then arrives exactly once, whichever step the crash came after:
//! - `send.stored`: the message is on disk, its acknowledgement not sent;
//! - `forward.answered` (sending host): the hub has it, the host has not
//!   recorded the hub's answer;
//! - `verdict.stored` (sending host): the host recorded the hub's answer
//!   without waiting for the disk, so the crash may lose that record;
//! - `delivery.stored` (receiving host): it is in the inbox, the hub has
//!   not heard so.
//!
//! A client whose daemon stays away says which messages may be stored and
//! their ids, so a resend stores each once. And a sync of the write-ahead
//! log that fails (`FLOTILLA_TEST_SYNC_FAIL`, a test hook): the daemon
//! stops at once, before it acknowledges.

use flotilla_tests::federation::{PATIENCE, wait_link};
use flotilla_tests::{TestHome, wait_until};

use crate::federation::{bodies, collect, inbox, outbox_states, two_hosts};

const CRASH_AT: &str = "FLOTILLA_TEST_CRASH_AT";

/// Restarts `host`'s daemon set to crash at `point`.
fn arm(host: &mut TestHome, name: &str, point: &str) {
    host.signal_daemon("TERM");
    host.env.push((CRASH_AT.into(), point.into()));
    host.spawn_daemon(name);
}

/// Waits for the armed daemon to have crashed, then starts it normally.
fn crashed_then_restart(host: &mut TestHome, name: &str) {
    wait_until("the daemon to crash at its point", PATIENCE, || {
        !host.run(&["host", "status"]).status.success()
    });
    host.env.retain(|(k, _)| k != CRASH_AT);
    host.spawn_daemon(name);
}

#[test]
fn a_crash_after_the_store_before_the_acknowledgement_keeps_the_message_once() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    arm(&mut home, "h", "send.stored");
    let first = home.run(&[
        "send", "--as", "a", "--to", "b", "--id", "m1", "once", "--json",
    ]);
    assert_eq!(first.status.code(), Some(3), "no acknowledgement came");
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(
        said.contains("no flotilla daemon is running")
            && said.contains("it may be stored already")
            && said.contains("send it again with its id `m1` (`--id m1`)"),
        "says the send may be stored and how to send it again once: {said}"
    );
    let envelope: serde_json::Value = serde_json::from_slice(&first.stdout).expect("envelope");
    assert_eq!(envelope["error"]["code"], "not_running", "{envelope}");
    assert_eq!(envelope["error"]["details"]["id"], "m1", "{envelope}");
    crashed_then_restart(&mut home, "h");
    let again = home.json(&["send", "--as", "a", "--to", "b", "--id", "m1", "once"]);
    assert_eq!(
        again["duplicate"], true,
        "the retry finds it stored: {again}"
    );
    assert_eq!(bodies(&inbox(&home, "b")), ["once"]);
}

/// The same crash under `send --batch`, with the daemon not back within
/// the batch's patience: each line without an answer is refused
/// `unavailable` (exit 7), says it may be stored and names the id it was
/// given (`details.id`); the lines sent again with those ids are each
/// stored once, in order.
#[test]
fn a_batch_whose_daemon_stays_away_names_each_unanswered_id_and_a_resend_stores_once() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    arm(&mut home, "h", "send.stored");
    let lines: String = ["one", "two", "three"]
        .iter()
        .map(|body| format!("{{\"to\": \"b\", \"body\": \"{body}\"}}\n"))
        .collect();
    let out = home.run_with_stdin(
        &["send", "--as", "a", "--batch", "--json"],
        lines.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(answers.len(), 3, "one answer a line: {answers:?}");
    let mut again = String::new();
    for (answer, body) in answers.iter().zip(["one", "two", "three"]) {
        let error = &answer["error"];
        assert_eq!(answer["ok"], false, "{answer}");
        assert_eq!(error["code"], "unavailable", "{answer}");
        let id = error["details"]["id"]
            .as_str()
            .expect("the id it was given");
        let said = format!("{} {}", error["message"], error["hint"]);
        assert!(
            said.contains("may be stored already") && said.contains(id),
            "says it may be stored and names its id: {said}"
        );
        again.push_str(&format!(
            "{{\"to\": \"b\", \"body\": \"{body}\", \"id\": \"{id}\"}}\n"
        ));
    }
    crashed_then_restart(&mut home, "h");
    let resent = home.run_with_stdin(&["send", "--as", "a", "--batch"], again.as_bytes());
    assert!(resent.status.success(), "{resent:?}");
    assert_eq!(bodies(&inbox(&home, "b")), ["one", "two", "three"]);
}

/// Crashes the sending host at `point` during a send of `id` to another
/// host, restarts it, and checks that the message arrives once and its
/// outbox follows it to `delivered`.
fn a_crash_of_the_sender_at(point: &str, id: &str) {
    let (_hub, _server, mut laptop, work) = two_hosts("");
    arm(&mut laptop, "laptop", point);
    wait_link(&laptop, "the armed laptop to link", |l| {
        l["state"] == "connected"
    });
    let _ = laptop.run(&[
        "send",
        "--as",
        "lead",
        "--to",
        "work/builder",
        "--id",
        id,
        id,
    ]);
    crashed_then_restart(&mut laptop, "laptop");
    let got = collect(&work, "builder", 1);
    assert_eq!(bodies(&got), [id]);
    wait_until("the outbox to show the delivery", PATIENCE, || {
        outbox_states(&laptop, "lead") == ["work/builder=delivered"]
    });
    assert!(inbox(&work, "builder").is_empty(), "once");
}

#[test]
fn a_crash_of_the_sender_after_the_hubs_answer_delivers_once() {
    a_crash_of_the_sender_at("forward.answered", "f1");
}

#[test]
fn a_crash_of_the_sender_after_recording_the_hubs_answer_lazily_delivers_once() {
    a_crash_of_the_sender_at("verdict.stored", "v1");
}

#[test]
fn a_crash_of_the_receiver_after_storing_a_delivery_keeps_it_once() {
    let (_hub, _server, laptop, mut work) = two_hosts("");
    arm(&mut work, "work", "delivery.stored");
    wait_link(&work, "the armed work to link", |l| {
        l["state"] == "connected"
    });
    laptop.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "work/builder",
        "--id",
        "d1",
        "d1",
    ]);
    crashed_then_restart(&mut work, "work");
    wait_link(&work, "work to link again", |l| l["state"] == "connected");
    wait_until("the outbox to show the delivery", PATIENCE, || {
        outbox_states(&laptop, "lead") == ["work/builder=delivered"]
    });
    assert_eq!(bodies(&inbox(&work, "builder")), ["d1"], "stored once");
}

/// A failed sync of the write-ahead log stops the daemon at once (an
/// abort, with a message saying what to do), before it acknowledges the
/// send it was storing. That send's client goes on retrying with the same
/// id; once the daemon is started again (as the service manager would),
/// the retry is stored and acknowledged, and every message is in the
/// inbox once, in order. (A group may commit durably without the log, at
/// least one a second does, so sends go on until one meets the failing
/// sync, ten at most.)
#[test]
fn a_failed_sync_stops_the_daemon_before_it_acknowledges_and_the_retry_stores_once() {
    use std::os::unix::process::ExitStatusExt;

    let mut home = TestHome::new();
    let fail = home.path().join("fail-sync");
    let hook = (
        "FLOTILLA_TEST_SYNC_FAIL".to_owned(),
        fail.display().to_string(),
    );
    home.env.push(hook);
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    home.ok(&["send", "--as", "a", "--to", "b", "--id", "m0", "m0"]);
    std::fs::write(&fail, "").expect("arm the hook");
    let mut sent = vec!["m0".to_owned()];
    let mut stopped = None;
    for id in (1..=10).map(|n| format!("m{n}")) {
        let mut send = home
            .command(&["send", "--as", "a", "--to", "b", "--id", &id, &id])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("send");
        sent.push(id);
        let daemon = home.daemon.as_mut().expect("daemon");
        let (mut acked, mut died) = (None, None);
        wait_until("the send's answer or the daemon's stop", PATIENCE, || {
            acked = send.try_wait().expect("wait send");
            died = daemon.try_wait().expect("wait daemon");
            acked.is_some() || died.is_some()
        });
        if let Some(status) = died {
            stopped = Some((status, send));
            break;
        }
        assert!(acked.is_some_and(|s| s.success()), "acknowledged");
    }
    let (status, mut send) = stopped.expect("a send met the failing sync");
    assert_eq!(status.signal(), Some(6), "an abort: {status:?}");
    let stderr = std::fs::read_to_string(home.path().join("daemon-test.stderr")).expect("stderr");
    assert!(
        stderr.contains("could not be synced") && stderr.contains("start the daemon again"),
        "says what happened and what to do: {stderr}"
    );
    let answered = send.try_wait().expect("wait send");
    assert!(
        answered.is_none(),
        "not acknowledged: its client still retries"
    );
    std::fs::remove_file(&fail).expect("disarm");
    home.daemon = None;
    home.spawn_daemon("h");
    let mut retried = None;
    wait_until("the retried send to be answered", PATIENCE, || {
        retried = send.try_wait().expect("wait send");
        retried.is_some()
    });
    assert!(retried.is_some_and(|s| s.success()), "the retry stored it");
    assert_eq!(bodies(&inbox(&home, "b")), sent);
}
