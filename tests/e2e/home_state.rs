//! A home's files under stress (issue 13, §6): a refused second daemon
//! leaves the running one's pid file alone, the store, logs and lane files
//! are private from the moment they exist, a store that vanished is not
//! silently recreated empty, and `doctor` explains a store the daemon
//! cannot open.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_tests::federation::{hub_home, run_hub};
use flotilla_tests::{TestHome, stop_child, wait_until};
use serde_json::Value;

fn pid_in(home: &TestHome) -> Option<String> {
    std::fs::read_to_string(home.path().join("run/daemon.pid"))
        .ok()
        .map(|s| s.trim().to_owned())
}

#[test]
fn issue_13_a_refused_second_daemon_leaves_the_pid_file_alone() {
    let mut home = TestHome::new();
    home.spawn_daemon("one");
    let pid = home.daemon_pid().to_string();
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));

    let stderr = home.fails(&["host", "run", "--name", "two"], 6);
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));

    // A cleaner of runtime directories removed the lock file under the
    // running daemon: a second daemon takes a fresh lock, and the store
    // (which only one process may open) refuses it.
    std::fs::remove_file(home.path().join("run/daemon.lock")).expect("rm lock");
    let second = home.run(&["host", "run", "--name", "two"]);
    assert_eq!(
        pid_in(&home).as_deref(),
        Some(pid.as_str()),
        "the running daemon's pid file is intact"
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("open in another process"), "{stderr}");
    assert_eq!(second.status.code(), Some(6), "{stderr}");
    let status = home.json(&["host", "status"]);
    assert_eq!(status["pid"].to_string(), pid, "the first daemon answers");
    let up = home.json(&["up"]);
    assert_eq!(up["started"], false);
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Files under the home's `state/`, `logs/` and `run/` that group or others
/// may read.
fn open_files(home: &TestHome) -> Vec<String> {
    ["state", "logs", "run"]
        .iter()
        .flat_map(|d| files_under(&home.path().join(d)))
        .filter(|p| mode(p) & 0o077 != 0)
        .map(|p| format!("{} {:o}", p.display(), mode(&p)))
        .collect()
}

#[test]
fn issue_13_the_store_logs_and_lane_files_are_created_private() {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h"]);
    let out = home.ok(&[
        "--json",
        "lane",
        "run",
        "--cli",
        "exec",
        "-n",
        "m",
        "--prompt",
        "hi",
        "--",
        "sh",
        "-c",
        "cat; echo oops >&2",
    ]);
    let out: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(out["status"], "completed", "{out}");
    let turn = home.path().join("state/lanes/m/turn-1");
    for name in [
        "state/host.redb",
        "logs/daemon.stderr",
        "logs/daemon.log",
        "run/daemon.pid",
        "run/control.sock",
    ] {
        assert_eq!(mode(&home.path().join(name)), 0o600, "{name}");
    }
    for name in ["prompt", "stdout", "stderr", "exit"] {
        assert_eq!(mode(&turn.join(name)), 0o600, "turn-1/{name}");
    }
    assert_eq!(open_files(&home), Vec::<String>::new());

    let (hub, _) = hub_home();
    let mut server = run_hub(&hub);
    let store = hub.path().join("state/hub.redb");
    let socket = hub.path().join("run/hub.sock");
    wait_until(
        "the hub's store and control socket",
        std::time::Duration::from_secs(20),
        || store.exists() && socket.exists(),
    );
    assert_eq!(mode(&socket), 0o600, "hub.sock");
    assert_eq!(mode(&store), 0o600, "hub.redb");
    stop_child(&mut server);
    assert_eq!(open_files(&hub), Vec::<String>::new());
}

#[test]
fn issue_13_a_lost_store_is_not_recreated_empty_without_new_store() {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h"]);
    home.ok(&["peer", "join", "p"]);
    home.ok(&["down"]);
    let store = home.path().join("state/host.redb");
    std::fs::remove_file(&store).expect("rm store");

    let stderr = home.fails(&["up"], 6);
    assert!(stderr.contains("host.redb"), "{stderr}");
    assert!(stderr.contains("--new-store"), "{stderr}");
    assert!(!store.exists(), "nothing was created");
    let stderr = home.fails(&["host", "run"], 6);
    assert!(stderr.contains("--new-store"), "{stderr}");
    let out = home.run(&["up", "--json"]);
    let err: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(err["error"]["code"], "store_missing", "{err}");
    assert_eq!(err["error"]["exit"], 6, "{err}");
    assert!(!store.exists(), "nothing was created");

    let up = home.json(&["up", "--new-store"]);
    assert_eq!(up["started"], true);
    let roster = home.json(&["roster"]);
    assert_eq!(roster["peers"], serde_json::json!([]), "a new, empty store");
    home.ok(&["down"]);
    home.ok(&["up"]);
}

#[test]
fn issue_13_doctor_shows_why_a_corrupt_store_cannot_open() {
    let home = TestHome::new();
    let up = home.json(&["up", "--name", "h"]);
    home.ok(&["down"]);
    // `down` returns once the pid file and the socket are gone; the process
    // may still be closing the store's file, which would write over ours.
    let pid = up["status"]["pid"].as_u64().expect("pid");
    wait_until("the daemon to exit", Duration::from_secs(20), || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    });
    let store = home.path().join("state/host.redb");
    std::fs::write(&store, b"this is not a database, whatever it once was").expect("garbage");

    let out = home.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let checks = report["checks"].as_array().expect("checks");
    let check = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {report}"))
            .clone()
    };
    let store_check = check("store");
    assert_eq!(store_check["status"], "fail", "{store_check}");
    let detail = store_check["detail"].as_str().expect("detail");
    assert!(detail.contains("host.redb"), "{detail}");
    assert!(
        detail.contains("Not a redb database"),
        "the store's own error: {detail}"
    );
    let hint = store_check["hint"].as_str().expect("hint");
    assert!(hint.contains("--new-store"), "{hint}");
    let daemon_hint = check("daemon")["hint"].as_str().unwrap_or("").to_owned();
    assert!(daemon_hint.contains("store"), "{daemon_hint}");
}
