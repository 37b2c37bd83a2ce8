//! Issue 13, point 9, chaos: a host frozen with SIGSTOP for longer than
//! the hub's grace (its link's idle timeout) is marked offline and its
//! link closed; messages sent to it meanwhile wait at the hub; after
//! SIGCONT it links again and gets each of them once, in order.

use std::process::Command;

use flotilla_tests::federation::PATIENCE;
use flotilla_tests::wait_until;

use crate::federation::{bodies, collect, inbox, two_hosts};

fn signal(pid: i32, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal}");
}

#[test]
fn a_host_frozen_past_the_hubs_grace_gets_its_messages_once_when_it_thaws() {
    let (hub, _server, laptop, work) = two_hosts("");
    let frozen = work.daemon_pid();
    signal(frozen, "STOP");
    let work_state = || {
        let roster = hub.json(&["hub", "roster"]);
        roster["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|h| h["host"] == "work")
            .map(|h| h["state"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    // The link's idle timeout is 30 s: past it the hub lets work go.
    let grace = PATIENCE + std::time::Duration::from_secs(30);
    wait_until("the hub to let frozen work go", grace, || {
        work_state() == "offline"
    });
    for i in 1..=3 {
        laptop.ok(&[
            "send",
            "--as",
            "lead",
            "--to",
            "work/builder",
            &format!("f{i}"),
        ]);
    }
    signal(frozen, "CONT");
    let got = collect(&work, "builder", 3);
    assert_eq!(bodies(&got), ["f1", "f2", "f3"]);
    wait_until("work online again", PATIENCE, || work_state() == "online");
    assert!(inbox(&work, "builder").is_empty(), "each once");
}
