//! Network namespaces for end-to-end tests: a real (virtual) LAN of two
//! namespaces joined by a veth pair, `flotilla` run inside either of them,
//! and the wire between them cut and mended.
//!
//! Needs root and `ip` (iproute2): [`Lan::new`] says so and returns `None`
//! elsewhere, but fails in CI ([`in_ci`]). Lifecycle: a [`Lan`] deletes its
//! namespaces (and so its veth pair) on drop, and a [`Cut`] brings the wire
//! back up on drop, even when the test fails half-way. Declare the `Lan`
//! before the processes run in it, so they are stopped first.
//! Unix sockets are files, not network: commands run outside a namespace
//! still reach a daemon or hub running inside one.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::TestHome;

/// The address of the hub's end of the wire, in [`Lan::hub_ns`].
pub const HUB_IP: &str = "10.77.0.1";
/// The address of the host's end of the wire, in [`Lan::host_ns`].
pub const HOST_IP: &str = "10.77.0.2";

/// Whether this run is CI's (`CI` set and not `false` or `0`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Runs `ip ARGS`, which must succeed.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `ip ARGS` from a drop guard: a failure is reported, never a panic.
fn ip_quietly(args: &[&str]) {
    match Command::new("ip").args(args).stderr(Stdio::null()).status() {
        Ok(status) if status.success() => {}
        other => eprintln!("cleanup: ip {args:?} failed: {other:?}"),
    }
}

/// Names no other test process or run uses: `fl<pid>x<n>` (short enough
/// for an interface name, at most 15 bytes, with one more letter).
pub fn unique_prefix() -> String {
    static RUN: AtomicU32 = AtomicU32::new(0);
    format!(
        "fl{}x{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether network namespaces can be made here; says why not when they
/// cannot, and fails in CI.
fn can_make_namespaces() -> bool {
    let root = rustix::process::geteuid().is_root();
    let has_ip = Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if root && has_ip {
        return true;
    }
    let why = format!(
        "network namespaces need root and `ip` (root: {root}, ip: {has_ip}); \
         install iproute2 and run as root"
    );
    assert!(!in_ci(), "{why}");
    eprintln!("SKIPPED: {why}");
    false
}

/// Two namespaces, `hub_ns` ([`HUB_IP`]/24) and `host_ns` ([`HOST_IP`]/24),
/// joined by a veth pair with multicast on; removed on drop. Without IPv4
/// the pair has only its IPv6 link-local addresses.
#[derive(Debug)]
pub struct Lan {
    /// The namespace of the hub's end.
    pub hub_ns: String,
    /// The namespace of the host's end.
    pub host_ns: String,
    /// The veth end in `hub_ns`.
    hub_dev: String,
    /// The veth end in `host_ns`.
    host_dev: String,
}

impl Lan {
    /// A new LAN, or `None` (after saying why) where namespaces cannot be
    /// made; in CI that is a failure.
    pub fn new(ipv4: bool) -> Option<Self> {
        if !can_make_namespaces() {
            return None;
        }
        let prefix = unique_prefix();
        let lan = Self {
            hub_ns: format!("{prefix}a"),
            host_ns: format!("{prefix}b"),
            hub_dev: format!("{prefix}a"),
            host_dev: format!("{prefix}b"),
        };
        ip(&["netns", "add", &lan.hub_ns]);
        ip(&["netns", "add", &lan.host_ns]);
        let (a, b) = (&lan.hub_dev, &lan.host_dev);
        ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
        for (dev, ns, addr) in [(a, &lan.hub_ns, HUB_IP), (b, &lan.host_ns, HOST_IP)] {
            ip(&["link", "set", dev, "netns", ns]);
            if ipv4 {
                let addr = format!("{addr}/24");
                ip(&["-n", ns, "addr", "add", &addr, "dev", dev]);
            }
            ip(&["-n", ns, "link", "set", "dev", dev, "multicast", "on"]);
            ip(&["-n", ns, "link", "set", "dev", dev, "up"]);
            ip(&["-n", ns, "link", "set", "dev", "lo", "up"]);
        }
        Some(lan)
    }

    /// Takes both ends of the wire down (as a pulled cable would, for
    /// either side); they come back up when the returned guard is mended
    /// or dropped.
    pub fn cut(&self) -> Cut<'_> {
        self.set_ends("down", ip);
        Cut { lan: self }
    }

    /// Sets both veth ends `down` or `up` with `run`.
    fn set_ends(&self, state: &str, run: fn(&[&str])) {
        for (ns, dev) in [
            (&self.hub_ns, &self.hub_dev),
            (&self.host_ns, &self.host_dev),
        ] {
            run(&["-n", ns, "link", "set", "dev", dev, state]);
        }
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        for ns in [&self.hub_ns, &self.host_ns] {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The wire of a [`Lan`], cut; mended (both ends up) on drop.
#[derive(Debug)]
pub struct Cut<'a> {
    /// The LAN whose wire is down.
    lan: &'a Lan,
}

impl Cut<'_> {
    /// Brings both ends back up now.
    pub fn mend(self) {
        self.lan.set_ends("up", ip);
        std::mem::forget(self);
    }
}

impl Drop for Cut<'_> {
    fn drop(&mut self) {
        self.lan.set_ends("up", ip_quietly);
    }
}

/// `cmd`, run inside the namespace `ns` (`ip netns exec` execs it, so the
/// child's pid is the command's).
pub fn in_ns(ns: &str, cmd: &Command) -> Command {
    let mut wrapped = Command::new("ip");
    wrapped
        .args(["netns", "exec", ns])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

/// Starts `flotilla ARGS` of `home` inside `ns`, its stderr in `HOME/LOG`.
pub fn spawn_in(ns: &str, home: &TestHome, args: &[&str], log: &str) -> Child {
    let log = std::fs::File::create(home.path().join(log)).expect("log");
    in_ns(ns, &home.command(args))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn flotilla in a namespace")
}

/// Starts `home`'s daemon as host `name` inside `ns` (in the foreground,
/// owned by `home`) and waits until it answers.
pub fn spawn_daemon_in(ns: &str, home: &mut TestHome, name: &str) {
    let args = ["host", "run", "--name", name];
    home.daemon = Some(spawn_in(ns, home, &args, "daemon-test.stderr"));
    home.wait_answering();
}
