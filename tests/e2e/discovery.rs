//! mDNS discovery across a real (virtual) LAN: two network namespaces
//! joined by a veth pair, a hub advertising in one, and in the other
//! `flotilla discover` seeing it with its CA fingerprint and a host with
//! `--hub auto` linking to it.
//!
//! Needs root and `ip` (iproute2); elsewhere the tests say so and skip, but
//! in CI (`CI` set) they fail instead. Every namespace is removed by a drop
//! guard, after the processes in it are stopped.

use std::process::Stdio;
use std::time::Duration;

use flotilla_tests::federation::Running;
use flotilla_tests::netns::{HUB_IP, Lan, in_ns, spawn_in};
use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

/// The longest any wait here may take.
const PATIENCE: Duration = Duration::from_secs(30);
/// Where the hub listens, inside its namespace.
const HUB_PORT: u16 = 7700;

/// A hub home (`hub init` on all IPv4 addresses, or on all addresses) and
/// its CA's fingerprint.
fn hub_home(ipv4_only: bool) -> (TestHome, String) {
    let hub = TestHome::new();
    let any = if ipv4_only { "0.0.0.0" } else { "[::]" };
    let listen = format!("{any}:{HUB_PORT}");
    let init = hub.json(&["hub", "init", "--name", "hub.test", "--listen", &listen]);
    let fp = init["ca"]["fingerprint"].as_str().expect("fingerprint");
    (hub, fp.to_owned())
}

/// A host home holding `name`'s certificate, issued by `ca`'s CA.
fn host_home(ca: &TestHome, name: &str) -> TestHome {
    let host = TestHome::new();
    let out = ca.path().join("issued-for-test").join(name);
    ca.json(&[
        "certs",
        "issue",
        "--name",
        name,
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let certs = host.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs dir");
    for file in ["host.pem", "host.key", "ca.pem"] {
        std::fs::copy(out.join(file), certs.join(file)).expect("copy");
    }
    host
}

/// `discover --json` in `ns`, run until `hub.test` shows (the hub may still
/// be starting); returns that hub's entry and the whole document.
fn discover_hub(ns: &str, home: &TestHome) -> (Value, Value) {
    let mut found = None;
    wait_until("discover to see hub.test", PATIENCE, || {
        let args = ["discover", "--timeout", "2s", "--json"];
        let out = in_ns(ns, &home.command(&args))
            .stdin(Stdio::null())
            .output()
            .expect("run discover");
        assert!(
            out.status.success(),
            "discover: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
        let hub = doc["hubs"]
            .as_array()
            .and_then(|hubs| hubs.iter().find(|h| h["name"] == "hub.test").cloned());
        found = hub.map(|hub| (hub, doc));
        found.is_some()
    });
    found.expect("found")
}

#[test]
fn discover_sees_the_hub_in_another_namespace_with_its_ca_fingerprint() {
    let Some(lan) = Lan::new(true) else { return };
    let (hub, fp) = hub_home(true);
    let host = host_home(&hub, "laptop");
    let _server = Running(spawn_in(&lan.hub_ns, &hub, &["hub", "run"], "hub.stderr"));
    let (seen, doc) = discover_hub(&lan.host_ns, &host);
    assert_eq!(doc["schema"], "flotilla.discover.v1");
    assert_eq!(doc["ca_fingerprint"], fp.as_str());
    assert_eq!(seen["ca_fingerprint"], fp.as_str());
    assert_eq!(seen["matches_ca"], true);
    assert_eq!(seen["port"], HUB_PORT);
    assert_eq!(seen["version"], "1");
    let addrs = seen["addrs"].as_array().expect("addrs");
    assert_eq!(
        addrs[0],
        format!("{HUB_IP}:{HUB_PORT}").as_str(),
        "{addrs:?}"
    );
    for addr in addrs.iter().filter_map(Value::as_str) {
        if addr.starts_with("[fe80:") {
            assert!(addr.contains('%'), "link-local keeps its scope: {addr}");
        }
    }
    let human = in_ns(
        &lan.host_ns,
        &host.command(&["discover", "--timeout", "2s"]),
    )
    .stdin(Stdio::null())
    .output()
    .expect("run discover");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("hub.test") && text.contains("yes"), "{text}");
    let stranger = TestHome::new();
    let (seen, _) = discover_hub(&lan.host_ns, &stranger);
    assert!(seen["matches_ca"].is_null(), "no CA here to match: {seen}");
}

#[test]
fn a_host_with_hub_auto_links_to_the_hub_of_its_ca() {
    let Some(lan) = Lan::new(true) else { return };
    let (hub, _) = hub_home(true);
    let (host, _server) = auto_host(&lan, &hub);
    assert_eq!(host_link(&host)["hub"], "auto");
}

#[test]
fn a_host_with_hub_auto_links_over_ipv6_link_local() {
    let Some(lan) = Lan::new(false) else { return };
    let (hub, _) = hub_home(false);
    let (host, _server) = auto_host(&lan, &hub);
    let log = std::fs::read_to_string(host.path().join("daemon-test.stderr")).expect("log");
    assert!(log.contains("addr=[fe80:") && log.contains('%'), "{log}");
}

fn host_link(host: &TestHome) -> Value {
    host.json(&["host", "status"])["hub_link"].clone()
}

/// Runs `hub`'s hub in the hub namespace and a host `laptop` of its CA with
/// `--hub auto` in the other; returns both once the host is linked.
fn auto_host(lan: &Lan, hub: &TestHome) -> (TestHome, Running) {
    let mut host = host_home(hub, "laptop");
    host.write_config(
        "hub_reconnect_min_ms = 50\nhub_reconnect_max_ms = 500\n\
         hub_ping_interval_ms = 100\nhub_connect_timeout_ms = 2000\n\
         hub_startup_retry_ms = [50, 100, 200]\n",
    );
    let server = Running(spawn_in(&lan.hub_ns, hub, &["hub", "run"], "hub.stderr"));
    let args = ["host", "run", "--name", "laptop", "--hub", "auto"];
    host.daemon = Some(spawn_in(&lan.host_ns, &host, &args, "daemon-test.stderr"));
    host.wait_answering();
    wait_until("the auto link to be up", PATIENCE, || {
        host_link(&host)["state"] == "connected"
    });
    let link = host_link(&host);
    assert_eq!(link["connects"], 1);
    assert_eq!(link["hub_name"], "hub.test", "the advertised name: {link}");
    assert!(
        link["dialled"]
            .as_str()
            .is_some_and(|d| d.ends_with("(hub.test)")),
        "{link}"
    );
    let log = std::fs::read_to_string(host.path().join("daemon-test.stderr")).expect("log");
    assert!(
        log.contains("found the hub over mDNS") && log.contains("hub.test"),
        "{log}"
    );
    (host, server)
}

#[test]
fn a_host_that_opts_in_is_listed_by_discover_with_its_ca() {
    let Some(lan) = Lan::new(true) else { return };
    let (hub, fp) = hub_home(true);
    let mut office = host_home(&hub, "office");
    office.write_config("advertise = true\n");
    flotilla_tests::netns::spawn_daemon_in(&lan.hub_ns, &mut office, "office");
    let looker = host_home(&hub, "laptop");
    let mut seen = Value::Null;
    wait_until("discover to list the host office", PATIENCE, || {
        let args = ["discover", "--timeout", "2s", "--json"];
        let out = in_ns(&lan.host_ns, &looker.command(&args))
            .stdin(Stdio::null())
            .output()
            .expect("run discover");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        seen = doc["hosts"]
            .as_array()
            .and_then(|hosts| hosts.iter().find(|h| h["name"] == "office").cloned())
            .unwrap_or(Value::Null);
        !seen.is_null()
    });
    assert_eq!(seen["ca_fingerprint"], fp.as_str());
    assert_eq!(seen["matches_ca"], true);
    office.ok(&["down"]);
}
