//! The daemon's lifecycle: up/down, one daemon per home, SIGTERM, restarts,
//! several homes side by side, long paths and unsafe runtime directories.

use flotilla_tests::TestHome;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

#[test]
fn up_is_idempotent_and_down_stops_the_daemon() {
    let home = TestHome::new();
    let first = home.json(&["up", "--name", "alpha"]);
    assert_eq!(first["started"], Value::Bool(true));
    let second = home.json(&["up"]);
    assert_eq!(second["started"], Value::Bool(false));
    assert_eq!(first["status"]["pid"], second["status"]["pid"]);
    let status = home.json(&["host", "status"]);
    assert_eq!(status["schema"], "flotilla.host-status.v1");
    assert_eq!(status["host"], "alpha");
    let names: Vec<&str> = status["actors"]
        .as_array()
        .expect("actors")
        .iter()
        .map(|a| a["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "registry",
            "router",
            "watchdog",
            "lane_supervisor",
            "fleets",
            "control_server"
        ]
    );
    let down = home.json(&["down"]);
    assert_eq!(down["stopped"], Value::Bool(true));
    assert!(!home.socket_path().exists(), "the socket is removed");
    home.fails(&["host", "status"], 3);
    let again = home.json(&["down"]);
    assert_eq!(again["was_running"], Value::Bool(false));
}

#[test]
fn a_second_daemon_on_the_same_home_names_the_holder() {
    let mut home = TestHome::new();
    home.spawn_daemon("one");
    let pid = home.daemon_pid();
    let stderr = home.fails(&["host", "run", "--name", "two"], 6);
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert!(stderr.contains("flotilla down"), "{stderr}");
}

#[test]
fn sigterm_stops_cleanly_and_a_restart_keeps_peers_groups_and_unread_mail() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "proj", "--product", "shell"]);
    home.ok(&["peer", "join", "rev", "-g", "proj"]);
    home.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "rev",
        "--summary",
        "s",
        "kept across restarts",
    ]);
    let status = home.signal_daemon("TERM");
    assert_eq!(status.code(), Some(0), "SIGTERM exits 0");
    assert!(
        !home.socket_path().exists(),
        "the socket is removed on SIGTERM"
    );
    assert!(!home.path().join("run/daemon.pid").exists());
    home.spawn_daemon("h");
    let peers = home.json(&["peers", "--as", "lead"]);
    assert_eq!(peers["peers"][0]["id"], "h/rev");
    assert_eq!(peers["peers"][0]["groups"], serde_json::json!(["proj"]));
    let inbox = home.json(&["inbox", "--as", "rev"]);
    assert_eq!(inbox["messages"][0]["body"], "kept across restarts");
    assert_eq!(inbox["messages"][0]["summary"], "s");
}

#[test]
fn two_homes_run_side_by_side_and_do_not_see_each_other() {
    let a = TestHome::new();
    let b = TestHome::new();
    a.ok(&["up", "--name", "a"]);
    b.ok(&["up", "--name", "b"]);
    a.ok(&["peer", "join", "x", "-g", "shared"]);
    b.ok(&["peer", "join", "y", "-g", "shared"]);
    let roster_a = a.json(&["roster"]);
    let ids: Vec<&str> = roster_a["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .map(|p| p["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["a/x"]);
    let stderr = a.fails(&["send", "--as", "x", "--to", "y", "hi"], 5);
    assert!(stderr.contains("y: no such peer"), "{stderr}");
}

#[test]
fn a_home_too_deep_for_a_socket_path_still_works() {
    let outer = TestHome::new();
    let deep = outer.path().join("d".repeat(60)).join("e".repeat(60));
    let out = std::process::Command::new(flotilla_tests::flotilla_bin())
        .arg("--home")
        .arg(&deep)
        .args(["up", "--json"])
        .output()
        .expect("up");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = |args: &[&str]| {
        std::process::Command::new(flotilla_tests::flotilla_bin())
            .arg("--home")
            .arg(&deep)
            .args(args)
            .output()
            .expect("run")
    };
    assert!(run(&["peer", "join", "p"]).status.success());
    let record = std::fs::read_to_string(deep.join("run/socket-path")).expect("fallback recorded");
    assert!(
        record.len() < 108 && record.starts_with("/tmp/flotilla-"),
        "{record}"
    );
    let doctor = run(&["doctor"]);
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("private fallback"));
    assert!(run(&["down"]).status.success());
    assert!(
        !std::path::Path::new(&record).exists(),
        "fallback socket removed"
    );
}

#[test]
fn an_unsafe_runtime_directory_is_refused_with_the_fix() {
    let home = TestHome::new();
    let run_dir = home.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("mkdir");
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let stderr = home.fails(&["host", "run"], 1);
    assert!(stderr.contains("writable by group or others"), "{stderr}");
    assert!(stderr.contains("chmod 700"), "{stderr}");
}

#[test]
fn a_store_from_a_newer_flotilla_is_refused_and_left_alone() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "p"]);
    home.signal_daemon("TERM");
    let store = home.path().join("state/host.redb");
    bump_schema(&store, 99);
    let digest = |p: &std::path::Path| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::read(p).expect("read").hash(&mut h);
        h.finish()
    };
    let before = digest(&store);
    let stderr = home.fails(&["host", "run"], 1);
    assert!(
        stderr.contains("schema version 99") && stderr.contains("nothing was changed"),
        "{stderr}"
    );
    assert_eq!(before, digest(&store), "the file is untouched");
}

fn bump_schema(path: &std::path::Path, version: u64) {
    // The test plays a newer flotilla: it writes the version key directly.
    let db = redb::Database::open(path).expect("open");
    let txn = db.begin_write().expect("txn");
    {
        let def: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("meta");
        txn.open_table(def)
            .expect("meta")
            .insert("schema_version", version)
            .expect("set");
    }
    txn.commit().expect("commit");
}

#[test]
fn config_errors_name_the_key() {
    let home = TestHome::new();
    std::fs::write(home.path().join("config.toml"), "max_mesage_bytes = 5\n").expect("write");
    let stderr = home.fails(&["host", "run"], 1);
    assert!(stderr.contains("max_mesage_bytes"), "{stderr}");
    let doctor = home.run(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
}
