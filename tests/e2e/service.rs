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
    home.ok(&[
        "hub",
        "init",
        "--name",
        "hub.test",
        "--listen",
        "127.0.0.1:7999",
    ]);
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

/// `flotilla ARGS` in `home` with the user's HOME at `user_home` and no
/// XDG_CONFIG_HOME; an install names the test's binary with `--binary`
/// (it sits in a build directory, which install refuses otherwise).
fn service_command(
    home: &TestHome,
    user_home: &std::path::Path,
    args: &[&str],
) -> std::process::Command {
    let mut cmd = home.command(args);
    if args.iter().any(|a| a.ends_with("install")) {
        cmd.arg("--binary").arg(flotilla_tests::flotilla_bin());
    }
    cmd.env("HOME", user_home).env_remove("XDG_CONFIG_HOME");
    cmd
}

/// Runs `flotilla ARGS` in `home` with the user's HOME at `user_home`
/// (where service files go); it must succeed; returns its JSON.
fn json_with_home(home: &TestHome, user_home: &std::path::Path, args: &[&str]) -> Value {
    let out = service_command(home, user_home, args)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).expect("json")
}

#[test]
fn install_refuses_a_build_directory_binary_and_a_hub_that_was_never_made() {
    let home = TestHome::new();
    let user_home = tempfile::tempdir().expect("home");
    let out = home
        .command(&["host", "install", "--dry-run"])
        .env("HOME", user_home.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("build directory") && stderr.contains("--binary"),
        "{stderr}"
    );
    let out = service_command(&home, user_home.path(), &["hub", "install"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runs no hub") && stderr.contains("hub init"),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn install_enable_runs_the_service_managers_commands_and_the_unit_keeps_path() {
    use std::os::unix::fs::PermissionsExt;
    let home = TestHome::new();
    let user_home = tempfile::tempdir().expect("home");
    // A stand-in systemctl that records how it was called: the test owns no
    // user systemd instance.
    let bin = user_home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let calls = user_home.path().join("calls");
    let fake = bin.join("systemctl");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\n", calls.display()),
    )
    .expect("fake");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = service_command(
        &home,
        user_home.path(),
        &["--json", "host", "install", "--enable"],
    )
    .env("PATH", &path)
    .output()
    .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(reply["enabled"], true);
    let name = reply["name"].as_str().expect("name");
    let called = std::fs::read_to_string(&calls).expect("systemctl ran");
    assert_eq!(
        called,
        format!("--user daemon-reload\n--user enable --now {name}\n")
    );
    let unit = std::fs::read_to_string(reply["path"].as_str().expect("path")).expect("unit");
    assert!(
        unit.contains(&format!("Environment=\"PATH={path}\"")),
        "{unit}"
    );
    assert!(!unit.contains("After=network-online"), "{unit}");
    assert!(
        reply["notes"][0]
            .as_str()
            .unwrap_or_default()
            .contains("enable-linger")
    );
}
