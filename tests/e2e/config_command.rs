//! `flotilla config`: keys read with their defaults, edits that keep the
//! file's comments and private mode, refusals that change nothing, and a
//! value set here that the daemon then applies.

use std::os::unix::fs::PermissionsExt;

use flotilla_tests::TestHome;

#[test]
fn config_set_get_and_show_edit_the_file_safely_and_the_daemon_applies_them() {
    let home = TestHome::new();
    let file = home.path().join("config.toml");
    std::fs::write(&file, "# mine, keep this\nwatchdog_interval_ms = 2000\n").expect("write");
    let out = home.ok(&["config", "set", "max_message_bytes", "10"]);
    assert!(
        out.contains("max_message_bytes = 10 (was 1048576)"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(
        text.starts_with("# mine, keep this\n"),
        "comments kept: {text}"
    );
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "private");

    let stderr = home.fails(&["config", "set", "max_mesage_bytes", "5"], 2);
    assert!(
        stderr.contains("did you mean `max_message_bytes`"),
        "{stderr}"
    );
    let stderr = home.fails(&["config", "set", "lane_stall_secs", "nan"], 2);
    assert!(stderr.contains("lane_stall_secs"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        text,
        "refusals change nothing"
    );

    let got = home.json(&["config", "get", "max_message_bytes"]);
    assert_eq!(got["schema"], "flotilla.config.value.v1");
    assert_eq!(
        (got["value"].as_u64(), got["source"].as_str()),
        (Some(10), Some("file"))
    );
    assert_eq!(
        home.ok(&["config", "get", "watchdog_timeout_ms"]).trim(),
        "5000"
    );
    home.fails(&["config", "get", "hub"], 4);
    let show = home.json(&["config", "show"]);
    let keys = show["keys"].as_array().expect("keys");
    assert!(
        keys.iter()
            .any(|k| k["key"] == "outbox_max_messages" && k["source"] == "default")
    );
    assert!(
        !keys.iter().any(|k| k["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("hub_server."))),
        "no hub here"
    );

    home.ok(&["up", "--name", "h"]);
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    home.fails(&["send", "--as", "a", "--to", "b", "eleven byte"], 2);
    home.ok(&["send", "--as", "a", "--to", "b", "ten bytes!"]);
    home.ok(&["config", "unset", "max_message_bytes"]);
    assert_eq!(
        home.ok(&["config", "get", "max_message_bytes"]).trim(),
        "1048576"
    );
    home.ok(&["down"]);
}

fn pid(home: &TestHome) -> u64 {
    home.json(&["host", "status"])["pid"].as_u64().expect("pid")
}

#[test]
fn up_with_other_settings_is_refused_until_restart_applies_and_save_keeps_them() {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h", "--allow-remote-groups", "a"]);
    let first = pid(&home);
    let same = home.ok(&["up", "--allow-remote-groups", "a"]);
    assert!(same.contains("already running"), "{same}");

    let out = home.run(&["--json", "up", "--allow-remote-groups", "b"]);
    assert_eq!(out.status.code(), Some(6), "settings differ");
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).expect("envelope");
    let message = err["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("allow_remote_groups is a, not b"), "{err}");
    assert!(
        err["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("--restart"),
        "{err}"
    );
    assert_eq!(pid(&home), first, "the running daemon is left alone");

    let up = home.json(&["up", "--restart", "--save", "--allow-remote-groups", "b"]);
    assert_eq!(up["restarted"], true, "{up}");
    let second = pid(&home);
    assert_ne!(second, first, "a new daemon");
    assert_eq!(
        home.ok(&["config", "get", "allow_remote_groups"]).trim(),
        "[\"b\"]"
    );
    home.ok(&["up", "--allow-remote-groups", "b"]);

    // `restart` starts it again as it was started: the name given then.
    let again = home.json(&["restart"]);
    assert_eq!(again["status"]["host"], "h", "{again}");
    assert_ne!(pid(&home), second);
    home.ok(&["down"]);
    let cold = home.json(&["restart"]);
    assert_eq!(
        cold["started"], true,
        "restart starts a stopped daemon: {cold}"
    );
    home.ok(&["down"]);
}
