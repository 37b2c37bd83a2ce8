//! Federation fixtures: a hub home (`hub init` on a free loopback port, or
//! on a given address), host homes holding certificates issued at its CA
//! and set to link fast, and waits on a host's link state.

use std::process::Child;
use std::time::Duration;

use serde_json::Value;

use crate::{TestHome, free_udp_port, wait_until};

/// The longest any wait here may take.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A home that ran `hub init` for `hub.test` on a free loopback port.
pub fn hub_home() -> (TestHome, String) {
    let addr = format!("127.0.0.1:{}", free_udp_port());
    let enroll = format!("127.0.0.1:{}", free_udp_port());
    (hub_home_on(&addr, &enroll), addr)
}

/// A home that ran `hub init` for `hub.test` listening on `addr`, with its
/// enrollment listener on `enroll`.
pub fn hub_home_on(addr: &str, enroll: &str) -> TestHome {
    let hub = TestHome::new();
    let init = hub.json(&[
        "hub",
        "init",
        "--name",
        "hub.test",
        "--listen",
        addr,
        "--enroll-listen",
        enroll,
    ]);
    assert_eq!(init["schema"], "flotilla.hub-init.v1");
    assert_eq!(init["listen"], addr);
    assert_eq!(init["enroll_listen"], enroll);
    assert!(
        init["ca"]["fingerprint"]
            .as_str()
            .expect("fp")
            .starts_with("sha256:")
    );
    hub
}

/// A host home holding `name`'s files issued at `ca`, set to link to `addr`
/// with fast reconnects.
pub fn host_home(ca: &TestHome, name: &str, addr: &str) -> TestHome {
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
         hub_reconnect_max_ms = 200\nhub_ping_interval_ms = 100\nhub_connect_timeout_ms = 1000\n\
         hub_startup_retry_ms = [50, 100, 200]\n"
    ));
    host
}

/// The `hub_link` object of `host status`.
pub fn link(host: &TestHome) -> Value {
    host.json(&["host", "status"])["hub_link"].clone()
}

/// Waits until the host's link satisfies `cond`; returns it.
pub fn wait_link(host: &TestHome, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    wait_until(what, PATIENCE, || cond(&link(host)));
    link(host)
}

/// A process the test started, killed when the test ends, even when it
/// fails half-way (so no hub outlives its test).
#[derive(Debug)]
pub struct Running(pub Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `flotilla hub run` in the hub home.
pub fn run_hub(hub: &TestHome) -> Running {
    Running(hub.spawn(&["hub", "run"], "hub.stderr"))
}
