//! The message path across hosts, against what a line-by-line review found
//! (issue 13, point 7): real daemons and a real hub. Ids are chosen by
//! clients, so the same id from two senders is two messages, at the hub and
//! at the receiving host.

use std::process::Stdio;

use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::{signal, stop_child, wait_until};

use crate::federation::{
    bodies, collect, outbox_states, start, two_hosts, two_hosts_with, wait_visible,
};

#[test]
fn issue_13_the_same_id_from_senders_on_two_hosts_and_a_local_one_is_three_messages() {
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut mac = host_home(&hub, "mac", &addr);
    let mut work = host_home(&hub, "work", &addr);
    start(&mut laptop, "laptop");
    start(&mut mac, "mac");
    start(&mut work, "work");
    laptop.ok(&["peer", "join", "lead", "-g", "proj"]);
    mac.ok(&["peer", "join", "tester", "-g", "proj"]);
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    work.ok(&["peer", "join", "local", "-g", "proj"]);
    wait_visible(&laptop, "lead", "work/builder");
    wait_visible(&mac, "tester", "work/builder");

    work.ok(&[
        "send", "--as", "local", "--to", "builder", "--id", "42", "local 42",
    ]);
    laptop.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "work/builder",
        "--id",
        "42",
        "laptop 42",
    ]);
    mac.ok(&[
        "send",
        "--as",
        "tester",
        "--to",
        "work/builder",
        "--id",
        "42",
        "mac 42",
    ]);
    let mut got = bodies(&collect(&work, "builder", 3));
    got.sort();
    assert_eq!(got, ["laptop 42", "local 42", "mac 42"]);
    stop_child(&mut server);
}

#[test]
fn issue_13_a_peer_renamed_while_the_hub_is_away_keeps_what_it_queued() {
    let (hub, mut server, laptop, work) = two_hosts("");
    stop_child(&mut server);
    wait_link(&laptop, "the link to go down", |l| {
        l["state"] != "connected"
    });
    laptop.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "work/builder",
        "before the rename",
    ]);
    laptop.ok(&["peer", "rename", "lead", "chief"]);
    assert_eq!(outbox_states(&laptop, "chief"), ["work/builder=accepted"]);
    let mut server = run_hub(&hub);
    let got = collect(&work, "builder", 1);
    assert_eq!(got[0]["from"], "laptop/chief");
    assert_eq!(bodies(&got), ["before the rename"]);
    wait_until("the outbox to show the delivery", PATIENCE, || {
        outbox_states(&laptop, "chief") == ["work/builder=delivered"]
    });
    stop_child(&mut server);
}

#[test]
fn issue_13_a_message_over_the_frame_limit_is_refused_and_does_not_wedge_the_link() {
    let (_hub, mut server, laptop, work) = two_hosts_with("", "max_message_bytes = 16777216\n");

    let big = vec![b'x'; 9 * 1024 * 1024];
    let out = laptop.run_with_stdin(&["send", "--as", "lead", "--to", "work/builder", "-"], &big);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a 9 MiB message for another host is refused"
    );
    assert!(
        stderr.contains("8388608"),
        "the error names the limit: {stderr}"
    );
    laptop.ok(&["send", "--as", "lead", "--to", "work/builder", "after"]);
    assert_eq!(bodies(&collect(&work, "builder", 1)), ["after"]);
    stop_child(&mut server);
}

#[test]
fn issue_13_the_queue_to_an_absent_hub_is_bounded_and_refuses_clearly() {
    let (hub, mut server, laptop, work) = two_hosts_with("", "outbox_max_messages = 2\n");
    laptop.ok(&["peer", "join", "near", "-g", "proj"]);
    stop_child(&mut server);
    wait_link(&laptop, "the link to go down", |l| {
        l["state"] != "connected"
    });
    for body in ["one", "two"] {
        laptop.ok(&["send", "--as", "lead", "--to", "work/builder", body]);
    }
    let stderr = laptop.fails(
        &["send", "--as", "lead", "--to", "work/builder", "three"],
        7,
    );
    assert!(
        stderr.contains("outbox_max_messages = 2") && stderr.contains("hub"),
        "the refusal names the bound and what to do: {stderr}"
    );
    laptop.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "near",
        "local mail still flows",
    ]);
    assert_eq!(
        outbox_states(&laptop, "lead").len(),
        3,
        "nothing stored of three"
    );
    let mut server = run_hub(&hub);
    assert_eq!(bodies(&collect(&work, "builder", 2)), ["one", "two"]);
    wait_until("the queue to the hub to empty", PATIENCE, || {
        laptop
            .run(&["send", "--as", "lead", "--to", "work/builder", "three"])
            .status
            .success()
    });
    assert_eq!(bodies(&collect(&work, "builder", 1)), ["three"]);
    stop_child(&mut server);
}

/// Issue 11: a send waiting for the hub's verdict is answered, with the
/// message still `accepted`, as soon as the link drops, not at the end of
/// its wait (here ten minutes, far past the test's patience).
#[test]
fn issue_11_a_send_waiting_for_the_hubs_verdict_is_answered_when_the_link_drops() {
    let (_hub, server, laptop, work) = two_hosts_with("", "hub_verdict_wait_ms = 600000\n");
    let hub_pid = server.id();
    signal(hub_pid, "STOP");
    let mut send = laptop
        .command(&[
            "send",
            "--as",
            "lead",
            "--to",
            "work/builder",
            "--json",
            "frozen",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("send");
    wait_link(&laptop, "the link to the frozen hub to drop", |l| {
        l["state"] != "connected"
    });
    wait_until("the send to be answered", PATIENCE, || {
        matches!(send.try_wait(), Ok(Some(_)))
    });
    let out = send.wait_with_output().expect("send output");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(reply["remote"][0]["peer"], "work/builder");
    assert_eq!(reply["remote"][0]["state"], "accepted", "{reply}");
    signal(hub_pid, "CONT");
    assert_eq!(bodies(&collect(&work, "builder", 1)), ["frozen"]);
}
