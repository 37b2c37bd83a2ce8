//! The hub and the host link end to end: `hub init`, `certs issue` and
//! `certs show`, a real `hub run` and a host daemon linking to it over QUIC
//! on 127.0.0.1, the link surviving a hub restart, and a host whose
//! certificate comes from another CA never linking and saying why.

use flotilla_tests::federation::{host_home, hub_home, run_hub, wait_link};
use flotilla_tests::{TestHome, stop_child};

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
    let stderr = hub.fails(&["hub", "roster"], 3);
    assert!(stderr.contains("flotilla hub run"), "{stderr}");
}
