//! `doctor` and `host install|uninstall` through the real binary.

use flotilla_tests::TestHome;
use serde_json::Value;

#[test]
fn doctor_fails_without_a_daemon_and_passes_with_one() {
    let home = TestHome::new();
    let out = home.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["schema"], "flotilla.doctor.v1");
    let daemon = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "daemon")
        .expect("daemon check");
    assert_eq!(daemon["status"], "fail");
    assert!(
        daemon["hint"]
            .as_str()
            .expect("hint")
            .contains("flotilla up")
    );
    home.ok(&["up"]);
    let report = home.json(&["doctor"]);
    assert_eq!(report["ok"], Value::Bool(true), "{report}");
    let store = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "store")
        .expect("store");
    assert!(
        store["detail"]
            .as_str()
            .expect("detail")
            .contains("consistent")
    );
}

#[test]
fn host_install_writes_and_uninstall_removes_the_unit() {
    let home = TestHome::new();
    let user_home = tempfile::tempdir().expect("home");
    let run = |args: &[&str]| json_with_home(&home, user_home.path(), args);
    let dry = run(&["host", "install", "--dry-run", "--json"]);
    let path = std::path::PathBuf::from(dry["path"].as_str().expect("path"));
    assert!(!path.exists(), "a dry run writes nothing");
    assert!(
        dry["contents"]
            .as_str()
            .expect("contents")
            .contains("host\" \"run\"")
            || cfg!(target_os = "macos")
    );
    run(&["host", "install", "--json"]);
    let text = std::fs::read_to_string(&path).expect("unit written");
    assert!(text.contains(&home.path().display().to_string()));
    let removed = run(&["host", "uninstall", "--json"]);
    assert_eq!(removed["existed"], Value::Bool(true));
    assert!(!path.exists());
}

#[test]
fn hub_install_writes_a_unit_that_runs_the_hub_next_to_the_host_one() {
    let home = TestHome::new();
    let user_home = tempfile::tempdir().expect("home");
    let run = |args: &[&str]| json_with_home(&home, user_home.path(), args);
    let hub = run(&["hub", "install", "--json"]);
    let host = run(&["host", "install", "--dry-run", "--json"]);
    assert_ne!(
        hub["path"], host["path"],
        "a hub and a host of one home coexist"
    );
    let path = std::path::PathBuf::from(hub["path"].as_str().expect("path"));
    let text = std::fs::read_to_string(&path).expect("unit written");
    assert!(text.contains("hub") && text.contains(&home.path().display().to_string()));
    assert!(!text.contains("{{"), "{text}");
    let removed = run(&["hub", "uninstall", "--json"]);
    assert_eq!(removed["existed"], Value::Bool(true));
    assert!(!path.exists());
}

/// Runs `flotilla ARGS` in `home` with the user's HOME at `user_home`
/// (where service files go); it must succeed; returns its JSON.
fn json_with_home(home: &TestHome, user_home: &std::path::Path, args: &[&str]) -> Value {
    let out = home
        .command(args)
        .env("HOME", user_home)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).expect("json")
}
