//! The hub and the host link end to end: `hub init`, `certs issue` and
//! `certs show`, a real `hub run` and a host daemon linking to it over QUIC
//! on 127.0.0.1, the link surviving a hub restart, and a host whose
//! certificate comes from another CA never linking and saying why.

use std::process::Child;
use std::time::Duration;

use flotilla_tests::{TestHome, free_udp_port, stop_child, wait_until};
use serde_json::Value;

/// The longest any wait here may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// A home that ran `hub init` for `hub.test` on a free loopback port.
fn hub_home() -> (TestHome, String) {
    let hub = TestHome::new();
    let addr = format!("127.0.0.1:{}", free_udp_port());
    let enroll = format!("127.0.0.1:{}", free_udp_port());
    let init = hub.json(&[
        "hub",
        "init",
        "--name",
        "hub.test",
        "--listen",
        &addr,
        "--enroll-listen",
        &enroll,
    ]);
    assert_eq!(init["schema"], "flotilla.hub-init.v1");
    assert_eq!(init["listen"], addr.as_str());
    assert!(
        init["ca"]["fingerprint"]
            .as_str()
            .expect("fp")
            .starts_with("sha256:")
    );
    (hub, addr)
}

/// A host home holding `name`'s files issued at `ca`, set to link to `addr`
/// with fast reconnects.
fn host_home(ca: &TestHome, name: &str, addr: &str) -> TestHome {
    let host = TestHome::new();
    let out = ca.path().join("issued-for-test").join(name);
    let out = out.to_str().expect("utf-8 path");
    let issued = ca.json(&["certs", "issue", "--name", name, "--out", out]);
    assert_eq!(issued["certificate"]["name"], name);
    let certs = host.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs dir");
    for file in ["host.pem", "host.key", "ca.pem"] {
        std::fs::copy(
            ca.path().join("issued-for-test").join(name).join(file),
            certs.join(file),
        )
        .expect("copy");
    }
    host.write_config(&format!(
        "hub = \"{addr}\"\nhub_name = \"hub.test\"\nhub_reconnect_min_ms = 20\n\
         hub_reconnect_max_ms = 200\nhub_ping_interval_ms = 100\nhub_connect_timeout_ms = 1000\n"
    ));
    host
}

fn link(host: &TestHome) -> Value {
    host.json(&["host", "status"])["hub_link"].clone()
}

fn wait_link(host: &TestHome, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    wait_until(what, PATIENCE, || cond(&link(host)));
    link(host)
}

fn run_hub(hub: &TestHome) -> Child {
    hub.spawn(&["hub", "run"], "hub.stderr")
}

#[test]
fn a_host_links_to_the_hub_and_relinks_after_the_hub_restarts() {
    let (hub, addr) = hub_home();
    let mut host = host_home(&hub, "laptop", &addr);
    let mut server = run_hub(&hub);
    host.spawn_daemon("laptop");
    let up = wait_link(&host, "the link to be up with an RTT", |l| {
        l["state"] == "connected" && l["rtt_ms"].is_number()
    });
    assert_eq!(up["hub"], addr.as_str());
    assert_eq!(up["hub_name"], "hub.test");
    assert_eq!(up["connects"], 1);
    let human = host.ok(&["host", "status"]);
    assert!(human.contains("hub_link"), "{human}");
    assert!(human.contains("connected"), "{human}");

    assert_eq!(
        stop_child(&mut server).code(),
        Some(0),
        "the hub stops cleanly"
    );
    let down = wait_link(&host, "the link to notice the hub is gone", |l| {
        l["state"] != "connected" && l["last_error"].is_string()
    });
    assert!(down["rtt_ms"].is_null());

    let mut server = run_hub(&hub);
    let again = wait_link(&host, "the link to come back", |l| {
        l["state"] == "connected" && l["connects"] == 2 && l["rtt_ms"].is_number()
    });
    assert_eq!(again["failures"], 0);
    stop_child(&mut server);
}

#[test]
fn a_host_with_a_certificate_from_another_ca_never_links_and_says_why() {
    let (hub, addr) = hub_home();
    let (other, _) = hub_home();
    let mut host = host_home(&other, "intruder", &addr);
    let mut server = run_hub(&hub);
    host.spawn_daemon("intruder");
    let refused = wait_link(&host, "a refusal", |l| {
        l["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("certificate"))
            && l["failures"].as_u64().is_some_and(|n| n >= 2)
    });
    assert_ne!(refused["state"], "connected");
    assert_eq!(refused["connects"], 0);
    stop_child(&mut server);
}

#[test]
fn certs_show_lists_names_and_expiry_and_never_a_key() {
    let (hub, addr) = hub_home();
    let host = host_home(&hub, "laptop", &addr);
    let at_hub = hub.json(&["certs", "show"]);
    assert_eq!(at_hub["schema"], "flotilla.certs.v1");
    assert_eq!(at_hub["ca"]["has_key"], true);
    assert_eq!(at_hub["hub"]["name"], "hub.test");
    assert!(at_hub["hub"]["days_left"].as_i64().expect("days") > 360);
    assert!(at_hub["host"].is_null());
    let at_host = host.json(&["certs", "show"]);
    assert_eq!(at_host["ca"]["has_key"], false);
    assert_eq!(at_host["ca"]["fingerprint"], at_hub["ca"]["fingerprint"]);
    assert_eq!(at_host["host"]["name"], "laptop");
    assert!(at_host["host"]["not_after"].is_string());
    let human = host.ok(&["certs", "show"]);
    assert!(
        human.contains("laptop") && human.contains("days left"),
        "{human}"
    );
    assert!(!human.contains("PRIVATE KEY"), "{human}");
    assert!(
        !serde_json::to_string(&at_hub)
            .expect("json")
            .contains("PRIVATE KEY")
    );
}

#[test]
fn hub_init_refuses_to_replace_a_ca_and_issue_needs_one() {
    let (hub, _) = hub_home();
    let stderr = hub.fails(&["hub", "init", "--name", "hub.test"], 6);
    assert!(stderr.contains("refusing to replace"), "{stderr}");
    let empty = TestHome::new();
    let stderr = empty.fails(&["certs", "issue", "--name", "laptop"], 4);
    assert!(stderr.contains("flotilla hub init"), "{stderr}");
    let stderr = empty.fails(&["hub", "run"], 4);
    assert!(stderr.contains("hub init"), "{stderr}");
}
