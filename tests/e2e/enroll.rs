//! Enrollment, revocation and single use end to end: a real `hub run`, real
//! `hub invite` tokens and `host join` over QUIC on 127.0.0.1, a joined
//! host linking with `flotilla up`, refusals (reused, expired, wrong CA
//! fingerprint), `hub revoke` dropping a live link, and `hub invite`'s check
//! that the hub answers at the token's addresses (or `--no-check`).

use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

use flotilla_actors::federation::enroll::EnrollToken;
use flotilla_tests::federation::{PATIENCE, hub_home_on, wait_link};
use flotilla_tests::{TestHome, free_udp_port, stop_child, wait_until};
use serde_json::Value;

/// A running hub: its home, its process, its main address.
struct Hub {
    home: TestHome,
    process: Child,
    addr: String,
}

impl Drop for Hub {
    fn drop(&mut self) {
        stop_child(&mut self.process);
    }
}

/// `hub init` on two free loopback ports, then `hub run`, waiting until it
/// listens.
fn running_hub() -> Hub {
    let addr = format!("127.0.0.1:{}", free_udp_port());
    let enroll = format!("127.0.0.1:{}", free_udp_port());
    let home = hub_home_on(&addr, &enroll);
    let process = home.spawn(&["hub", "run"], "hub.stderr");
    let log = home.path().join("hub.stderr");
    wait_until("the hub to listen", PATIENCE, || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("hub listening"))
    });
    Hub {
        home,
        process,
        addr,
    }
}

impl Hub {
    fn invite(&self, host: &str, ttl: &str) -> String {
        let out = self.home.run(&["hub", "invite", host, "--ttl", ttl]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "only the token on stdout: {stdout}");
        assert!(lines[0].starts_with("flotilla-enroll-v1:"), "{stdout}");
        lines[0].to_owned()
    }
}

/// Fast reconnects and pings for a joined host.
fn fast_link(host: &TestHome) {
    let path = host.path().join("config.toml");
    let mut text = std::fs::read_to_string(&path).expect("config written by join");
    text.insert_str(
        0,
        "hub_reconnect_min_ms = 20\nhub_reconnect_max_ms = 200\nhub_ping_interval_ms = 100\n\
         hub_connect_timeout_ms = 1000\nhub_startup_retry_ms = [50, 100, 200]\n",
    );
    std::fs::write(&path, text).expect("config");
}

/// A failed `--json` command's error object.
fn error_of(home: &TestHome, args: &[&str], exit: i32) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = home.run(&all);
    assert_eq!(
        out.status.code(),
        Some(exit),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    json["error"].clone()
}

#[test]
fn a_joined_host_links_with_up_and_its_key_never_left_it() {
    let hub = running_hub();
    let token = hub.invite("laptop", "1h");
    let host = TestHome::new();
    let joined = host.json(&["host", "join", &token]);
    assert_eq!(joined["schema"], "flotilla.host-join.v1");
    assert_eq!(joined["host"], "laptop");
    assert_eq!(joined["hub"], hub.addr.as_str());
    assert_eq!(joined["certificate"]["name"], "laptop");
    let at_hub = hub.home.json(&["certs", "show"]);
    assert_eq!(joined["ca_fingerprint"], at_hub["ca"]["fingerprint"]);
    let key = host.path().join("certs/host.key");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key).expect("key").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let key_pem = std::fs::read_to_string(&key).expect("key");
    let hub_files = walk(hub.home.path());
    assert!(!hub_files.iter().any(|text| text.contains(key_pem.trim())));

    fast_link(&host);
    host.ok(&["up"]);
    let up = wait_link(&host, "the joined host to link", |l| {
        l["state"] == "connected" && l["rtt_ms"].is_number()
    });
    assert_eq!(up["hub_name"], "hub.test");
}

/// Every readable file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push(text);
        }
    }
    out
}

#[test]
fn a_token_works_once_and_then_says_to_ask_for_a_new_one() {
    let hub = running_hub();
    let token = hub.invite("laptop", "1h");
    TestHome::new().ok(&["host", "join", &token]);
    let again = TestHome::new();
    let error = error_of(&again, &["host", "join", &token], 6);
    assert_eq!(error["code"], "token_used");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("flotilla hub invite laptop"),
        "{error}"
    );
    assert!(!again.path().join("certs/host.key").exists());
}

#[test]
fn an_expired_token_is_refused() {
    let hub = running_hub();
    let token = hub.invite("laptop", "1s");
    let invited = SystemTime::now();
    // Expiry is to the second: the token is surely expired 2 s after it was made.
    wait_until("the token to expire", PATIENCE, || {
        invited
            .elapsed()
            .is_ok_and(|e| e >= Duration::from_millis(2100))
    });
    let error = error_of(&TestHome::new(), &["host", "join", &token], 5);
    assert_eq!(error["code"], "token_expired");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("expired")
    );
}

#[test]
fn a_wrong_ca_fingerprint_aborts_before_sending_and_the_token_stays_usable() {
    let hub = running_hub();
    let token = hub.invite("laptop", "1h");
    let mut tampered = EnrollToken::parse(&token).expect("token");
    tampered.ca_fingerprint = format!("sha256:{}", "00".repeat(32));
    let host = TestHome::new();
    let error = error_of(&host, &["host", "join", &tampered.encode()], 5);
    assert_eq!(error["code"], "ca_mismatch");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("nothing was sent"),
        "{error}"
    );
    assert!(!host.path().join("config.toml").exists());
    // The hub never saw the secret: the real token still enrolls.
    host.ok(&["host", "join", &token]);
}

#[test]
fn revoking_a_host_drops_its_link_and_a_new_enrollment_lets_it_back() {
    let hub = running_hub();
    let host = TestHome::new();
    host.ok(&["host", "join", &hub.invite("laptop", "1h")]);
    fast_link(&host);
    host.ok(&["up"]);
    wait_link(&host, "the link to be up", |l| l["state"] == "connected");

    let revoked = hub.home.json(&["hub", "revoke", "laptop"]);
    assert_eq!(revoked["schema"], "flotilla.hub-revoke.v1");
    assert_eq!(revoked["revoked"].as_array().expect("list").len(), 1);
    let at = Instant::now();
    let down = wait_link(&host, "the revoked link to drop and be refused", |l| {
        l["state"] != "connected"
            && l["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("refused this host's certificate"))
    });
    assert!(
        at.elapsed() < Duration::from_secs(5),
        "dropped in {:?}",
        at.elapsed()
    );
    assert_eq!(down["connects"], 1);

    host.ok(&["host", "join", &hub.invite("laptop", "1h")]);
    wait_link(&host, "the re-enrolled host to link again", |l| {
        l["state"] == "connected" && l["connects"] == 2
    });
    let error = error_of(&hub.home, &["hub", "revoke", "nobody"], 4);
    assert_eq!(error["code"], "not_enrolled");
}

#[test]
fn invite_checks_that_a_running_hub_answers_at_the_tokens_addresses() {
    let hub = running_hub();
    let made = hub.home.json(&["hub", "invite", "laptop"]);
    let checked = made["reachability"].as_array().expect("reachability");
    assert_eq!(checked.len(), 1, "{made}");
    assert_eq!(checked[0]["addr"], hub.addr.as_str());
    assert_eq!(checked[0]["enroll_addr"], made["enroll_addrs"][0]);
    assert_eq!(checked[0]["reachable"], true, "{made}");
    assert!(checked[0].get("error").is_none(), "{made}");

    let out = hub.home.run(&["hub", "invite", "laptop"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("reachable: the hub answered at"),
        "{stderr}"
    );
    assert!(stderr.contains("loopback address"), "{stderr}");
    // The probe used no token: the one it made still enrolls.
    let token = made["token"].as_str().expect("token");
    TestHome::new().ok(&["host", "join", token]);
}

#[test]
fn invite_without_a_running_hub_still_prints_its_token_and_warns() {
    let addr = format!("127.0.0.1:{}", free_udp_port());
    let home = hub_home_on(&addr, &format!("127.0.0.1:{}", free_udp_port()));
    let made = home.json(&["hub", "invite", "laptop"]);
    assert!(made["token"].as_str().is_some(), "{made}");
    let checked = &made["reachability"][0];
    assert_eq!(checked["addr"], addr.as_str());
    assert_eq!(checked["reachable"], false, "{made}");
    let error = checked["error"].as_str().expect("a reason");
    assert!(error.contains("flotilla hub run"), "{error}");

    let out = home.run(&["hub", "invite", "laptop"]);
    assert_eq!(out.status.code(), Some(0), "a warning, not a failure");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "only the token: {stdout}");
    assert!(stdout.starts_with("flotilla-enroll-v1:"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("not reachable: the hub at {addr}")),
        "{stderr}"
    );
    assert!(stderr.contains("flotilla hub install"), "{stderr}");

    let unchecked = home.json(&["hub", "invite", "laptop", "--no-check"]);
    assert!(unchecked.get("reachability").is_none(), "{unchecked}");
    let out = home.run(&["hub", "invite", "laptop", "--no-check"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("reachable"), "{stderr}");
}
