//! Lanes without surprises (issue 12): a refused start leaves no lane and
//! no burned name; `lane rm` and `lane prune` remove lanes for good (never a
//! running one, never a result or message without `--force`); `events
//! --follow` ends with the turn's own exit code; `--persistent` changes
//! ownership only, so a persistent lane is auto-archived too, and a message
//! wakes it.

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

use crate::lanes::{code, daemon};

fn lane_names(home: &TestHome) -> Vec<String> {
    home.json(&["lane", "list", "--all"])["lanes"]
        .as_array()
        .expect("lanes")
        .iter()
        .map(|l| l["lane"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn error_of(v: &Value) -> (String, String) {
    let e = &v["error"];
    (
        e["message"].as_str().unwrap_or_default().to_owned(),
        e["hint"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn a_refused_start_leaves_no_lane_and_no_burned_name() {
    let mut home = TestHome::new();
    home.write_config("[clis]\nclaude = \"/nonexistent/claude\"\n");
    home.spawn_daemon("h");
    let missing_dir = home.path().join("no-such-dir");
    let missing_dir = missing_dir.to_str().expect("utf-8");
    let refusals: [(&[&str], i32, &str, &str); 4] = [
        (
            &["--cli", "exec", "--", "/no/such/program"],
            4,
            "/no/such/program is not installed",
            "full path",
        ),
        (
            &["--cli", "exec"],
            2,
            "needs the command",
            "--cli exec -- make test",
        ),
        (
            &["--cli", "claude"],
            4,
            "/nonexistent/claude is not installed",
            "[clis]",
        ),
        (
            &["--cli", "exec", "-C", missing_dir, "--", "true"],
            2,
            "does not exist",
            "-C",
        ),
    ];
    for (args, want, message, hint) in refusals {
        let mut all = vec!["lane", "run", "-n", "ghost", "--prompt", "x"];
        all.extend_from_slice(args);
        let (c, v) = code(&home, &all);
        assert_eq!(c, want, "{args:?}: {v}");
        let (m, h) = error_of(&v);
        assert!(m.contains(message), "{args:?}: {m}");
        assert!(h.contains(hint), "{args:?}: {h}");
        assert!(lane_names(&home).is_empty(), "{args:?} left a lane");
    }
    assert!(
        home.json(&["roster"])["peers"]
            .as_array()
            .expect("peers")
            .iter()
            .all(|p| p["id"] != "h/ghost"),
        "no ghost peer"
    );
    let (c, v) = code(
        &home,
        &[
            "lane", "run", "-n", "ghost", "--cli", "exec", "--prompt", "x", "--", "true",
        ],
    );
    assert_eq!(c, 0, "the name is still free: {v}");
}

#[test]
fn lane_rm_and_prune_remove_lanes_for_good_but_never_a_running_one() {
    let home = daemon();
    let exec = |name: &str, verb: &str, cmd: &str| {
        code(
            &home,
            &[
                "lane", verb, "-n", name, "--cli", "exec", "--prompt", "x", "--", "sh", "-c", cmd,
            ],
        )
    };
    assert_eq!(exec("done", "run", "cat").0, 0);
    let (c, v) = code(&home, &["lane", "rm", "done"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["schema"], "flotilla.lane-remove.v1");
    assert_eq!(v["lane"], "h/done");
    assert!(
        !home.path().join("state/lanes/done").exists(),
        "its files went"
    );
    assert_eq!(code(&home, &["lane", "status", "done"]).0, 4);
    let (c, v) = code(&home, &["lane", "rm", "done"]);
    assert_eq!(c, 4, "a lane removed twice is not found: {v}");
    assert!(error_of(&v).1.contains("lane list --all"), "{v}");
    assert_eq!(exec("done", "run", "cat").0, 0, "the name is free again");

    assert_eq!(exec("kept", "start", "cat").0, 0);
    wait_until("kept's turn ends", Duration::from_secs(20), || {
        home.json(&["lane", "status", "kept"])["phase"] == "idle"
    });
    let (c, v) = code(&home, &["lane", "rm", "kept"]);
    assert_eq!(c, 6, "an uncollected result needs --force: {v}");
    let wait = home.flotilla_cmd("lane wait kept");
    assert!(error_of(&v).1.contains(&wait), "{v}");
    assert_eq!(code(&home, &["lane", "rm", "kept", "--force"]).0, 0);

    assert_eq!(exec("busy", "start", "sleep 30").0, 0);
    wait_until("busy runs", Duration::from_secs(20), || {
        home.json(&["lane", "status", "busy"])["phase"] == "running"
    });
    let (c, v) = code(&home, &["lane", "rm", "busy", "--force"]);
    assert_eq!(c, 6, "a running lane is never removed: {v}");
    let archive = home.flotilla_cmd("lane archive busy");
    assert!(error_of(&v).1.contains(&archive), "{v}");
    assert_eq!(home.json(&["lane", "status", "busy"])["phase"], "running");
    home.ok(&["lane", "archive", "busy"]);
    wait_until("busy is archived", Duration::from_secs(30), || {
        home.json(&["lane", "status", "busy"])["phase"] == "archived"
    });
    let v = home.json(&["lane", "prune", "--older-than", "1h"]);
    assert_eq!(v["schema"], "flotilla.lane-prune.v1");
    assert_eq!(v["removed"], serde_json::json!([]), "too recent: {v}");
    let v = home.json(&["lane", "prune"]);
    assert_eq!(v["removed"], serde_json::json!([]), "{v}");
    assert_eq!(
        v["kept"][0]["lane"], "h/busy",
        "its interrupted turn's result waits: {v}"
    );
    assert_eq!(code(&home, &["lane", "wait", "busy"]).0, 130);
    let v = home.json(&["lane", "prune"]);
    assert_eq!(v["removed"], serde_json::json!(["h/busy"]), "{v}");
    assert_eq!(lane_names(&home), ["h/done"], "only the idle lane is left");
}

#[test]
fn events_follow_ends_with_the_turns_exit_code() {
    let home = daemon();
    for (name, cmd, want) in [
        ("good", "cat; sleep 0.5", 0),
        ("bad", "cat; sleep 0.5; exit 3", 1),
    ] {
        home.ok(&[
            "lane", "start", "-n", name, "--cli", "exec", "--prompt", "x", "--", "sh", "-c", cmd,
        ]);
        let out = home.run(&["lane", "events", name, "--follow", "--json"]);
        assert_eq!(out.status.code(), Some(want), "{name}");
        let text = String::from_utf8_lossy(&out.stdout);
        let last: Value = serde_json::from_str(text.lines().last().expect("events")).expect("json");
        assert_eq!(
            last["type"], "turn.completed",
            "{name}: the final event is printed"
        );
        // Following does not collect: the result is still there.
        assert_eq!(home.json(&["lane", "status", name])["uncollected"], true);
    }
}

#[test]
fn a_persistent_lane_is_auto_archived_and_a_message_wakes_it() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane",
        "run",
        "-n",
        "keeper",
        "--persistent",
        "--auto-archive-after",
        "1s",
        "--as",
        "lead",
        "--cli",
        "exec",
        "--prompt",
        "first",
        "--",
        "sh",
        "-c",
        "cat",
    ]);
    wait_until(
        "the persistent lane is archived",
        Duration::from_secs(20),
        || home.json(&["lane", "status", "keeper"])["phase"] == "archived",
    );
    home.ok(&["send", "--as", "lead", "--to", "keeper", "WAKE-MARK"]);
    wait_until("the message's turn ends", Duration::from_secs(20), || {
        let v = home.json(&["lane", "status", "keeper"]);
        v["turns"] == 2 && v["phase"] != "running"
    });
    let (c, v) = code(&home, &["lane", "wait", "keeper"]);
    assert_eq!(c, 0, "{v}");
    assert!(
        v["result"]
            .as_str()
            .unwrap_or_default()
            .contains("WAKE-MARK"),
        "{v}"
    );
    let events = home.ok(&["lane", "events", "keeper"]);
    assert!(
        events.contains("a message woke the archived lane"),
        "{events}"
    );
}

#[test]
fn the_roster_shows_each_lanes_phase_permission_owner_and_context() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    let sleep = format!("sleep {}", crate::lanes::unique(7));
    home.ok(&[
        "lane",
        "start",
        "-n",
        "worker",
        "--as",
        "lead",
        "--permissions",
        "bypass",
        "--cli",
        "exec",
        "--prompt",
        "x",
        "--",
        "sh",
        "-c",
        &sleep,
    ]);
    wait_until("the lane runs", Duration::from_secs(20), || {
        home.json(&["lane", "status", "worker"])["phase"] == "running"
    });
    let roster = home.json(&["roster"]);
    let lanes = roster["lanes"].as_array().expect("lanes");
    assert_eq!(lanes.len(), 1, "{roster}");
    let lane = &lanes[0];
    assert_eq!(lane["id"], "h/worker");
    assert_eq!(lane["phase"], "running");
    assert_eq!(lane["permissions"], "bypass");
    assert_eq!(lane["owner"], "h/lead");
    assert!(
        lane["context_used_pct"].is_null(),
        "exec tells no context: {lane}"
    );
    let table = home.ok(&["roster"]);
    assert!(
        table.contains("running · bypass · ctx - · owner h/lead"),
        "{table}"
    );
    home.ok(&["lane", "archive", "worker"]);
    wait_until("the lane is archived", Duration::from_secs(30), || {
        home.json(&["roster"])["lanes"] == serde_json::json!([])
    });
}

#[test]
fn hints_name_the_home_given_on_the_command_line_but_not_one_from_the_environment() {
    let home = daemon();
    let (c, v) = code(&home, &["lane", "wait", "nosuch"]);
    assert_eq!(c, 4, "{v}");
    let hint = error_of(&v).1;
    assert!(
        hint.contains(&home.flotilla_cmd("lane list --all")),
        "{hint}"
    );
    let out = std::process::Command::new(flotilla_tests::flotilla_bin())
        .args(["--json", "lane", "wait", "nosuch"])
        .env("FLOTILLA_HOME", home.path())
        .output()
        .expect("flotilla");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hint = error_of(&v).1;
    assert!(
        hint.contains("`flotilla lane list --all`"),
        "the same shell has FLOTILLA_HOME: {hint}"
    );
}
