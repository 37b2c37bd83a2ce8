//! A hub killed with `kill -9` and started again (issue 11, relinking):
//! the restarted hub resets its predecessor's links at their first packet,
//! because its stateless-reset key comes from its own key; and a remote
//! lane call made while the link is down waits for the link instead of
//! failing.

use std::process::Stdio;

use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::{TestHome, signal_child, wait_until};
use serde_json::Value;

use crate::remote_lanes::federation_with;

/// `lane run --host work` of an exec lane NAME that echoes TEXT, as `lead`.
fn remote_echo<'a>(name: &'a str, text: &'a str) -> [&'a str; 16] {
    [
        "--json", "lane", "run", "--host", "work", "--as", "lead", "--cli", "exec", "-n", name,
        "--prompt", "x", "--", "echo", text,
    ]
}

/// The run succeeded and its result holds `text`.
fn assert_ran(out: &std::process::Output, text: &str) {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{v} {stderr}");
    assert!(v.to_string().contains(text), "{v}");
}

fn exec_lanes() -> (
    flotilla_tests::TestHome,
    flotilla_tests::federation::Running,
    flotilla_tests::TestHome,
    flotilla_tests::TestHome,
) {
    federation_with(|_| "allow_remote_lanes = [\"exec\"]\n".into())
}

#[test]
fn a_restarted_hub_resets_the_links_of_the_hub_that_died() {
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    // A ping may go unanswered for 30 s: only a reset ends the link sooner.
    let config = std::fs::read_to_string(laptop.path().join("config.toml")).expect("config");
    laptop.write_config(&config.replace(
        "hub_connect_timeout_ms = 1000",
        "hub_connect_timeout_ms = 30000",
    ));
    laptop.spawn_daemon("laptop");
    let up = wait_link(&laptop, "the link to be up", |l| l["state"] == "connected");
    let before = up["connects"].as_u64().unwrap_or(0);
    signal_child(&mut server, "KILL");
    let _server = run_hub(&hub);
    let after = wait_link(&laptop, "the link to be up again", |l| {
        l["state"] == "connected" && l["connects"].as_u64().unwrap_or(0) > before
    });
    // Without the stable key the old link ends only when a ping goes
    // unanswered (here after 30 s, past the wait); with it, at the new
    // hub's stateless reset.
    let why = after["last_error"].as_str().unwrap_or_default();
    assert!(
        why.contains("reset"),
        "the old link ended by a reset: {after}"
    );
}

#[test]
fn a_remote_lane_call_made_while_the_link_is_down_waits_for_it() {
    let (hub, mut server, laptop, _work) = exec_lanes();
    signal_child(&mut server, "KILL");
    wait_link(&laptop, "the link to be down", |l| {
        l["state"] != "connected"
    });
    let run = laptop
        .command(&remote_echo("after", "ran-after-the-restart"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lane run");
    let log = laptop.path().join("logs/daemon.log");
    wait_until(
        "the call to wait for the link",
        flotilla_tests::federation::PATIENCE,
        || {
            std::fs::read_to_string(&log)
                .is_ok_and(|l| l.contains("a remote lane call waits for the hub link"))
        },
    );
    let _server = run_hub(&hub);
    let out = run.wait_with_output().expect("lane run output");
    assert_ran(&out, "ran-after-the-restart");
}

/// A host's daemon restarted with the default pings (every 5 s, 10 s to
/// answer) instead of the tests' quick ones.
fn with_default_pings(home: &mut TestHome, name: &str) {
    let config = std::fs::read_to_string(home.path().join("config.toml")).expect("config");
    home.kill_daemon();
    home.write_config(
        &config
            .replace("hub_ping_interval_ms = 100", "hub_ping_interval_ms = 5000")
            .replace(
                "hub_connect_timeout_ms = 1000",
                "hub_connect_timeout_ms = 10000",
            ),
    );
    home.spawn_daemon(name);
    wait_link(home, "the link to be up", |l| l["state"] == "connected");
}

/// `kill -9` of the hub, a restart, and a `lane run --host` at once, with
/// the default pings on both hosts. The call usually goes into the link
/// of the hub that died: the new hub's reset shows no hub took it, so it
/// is sent again on the new link; and `work`, not yet back either, is
/// waited for (the hub's relink grace) instead of being refused.
#[test]
fn a_remote_lane_run_right_after_a_hub_restart_succeeds() {
    let (hub, mut server, mut laptop, mut work) = exec_lanes();
    with_default_pings(&mut laptop, "laptop");
    with_default_pings(&mut work, "work");
    signal_child(&mut server, "KILL");
    let _server = run_hub(&hub);
    wait_until("the new hub to answer", PATIENCE, || {
        hub.run(&["hub", "roster", "--json"]).status.success()
    });
    let out = laptop.run(&remote_echo("soon", "ran-right-after"));
    assert_ran(&out, "ran-right-after");
}
