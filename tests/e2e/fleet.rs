//! Fleets (issue 9), the daemon's acceptance: `fleet check` judges a
//! task's definition of done in a directory through the running daemon,
//! artifacts first, then the author's checks, and names every shortfall.

use std::path::Path;

use flotilla_tests::TestHome;
use serde_json::Value;

use crate::lanes::code;

const REPORT: &str = r#"{"goal": "write the report",
    "artifacts": [{"path": "worker-1/report.md", "min_chars": 40, "contains": ["Conclusion"]}],
    "checks": [{"run": "grep -q Conclusion report.md && echo \"checked in $(pwd) ${FLEET_MARK:-by the daemon}\"", "cwd": "worker-1"}]}"#;

fn daemon_with_task(task: &str) -> (TestHome, String, String) {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let file = home.path().join("task.json");
    std::fs::write(&file, task).expect("task");
    let dir = home.path().join("work");
    std::fs::create_dir_all(dir.join("worker-1")).expect("work dir");
    let file = file.display().to_string();
    let dir = dir.display().to_string();
    (home, file, dir)
}

fn check(home: &TestHome, file: &str, dir: &str) -> (i32, Value) {
    let mut cmd = home.command(&["--json", "fleet", "check", file, "-C", dir]);
    // The CLI's environment is not the check's: the daemon runs it.
    let out = cmd
        .env("FLEET_MARK", "by the CLI")
        .output()
        .expect("fleet check");
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn a_task_is_accepted_only_once_its_artifact_holds_and_its_check_passes() {
    let (home, file, dir) = daemon_with_task(REPORT);
    let (c, v) = check(&home, &file, &dir);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["schema"], "flotilla.fleet-check.v1");
    assert_eq!(v["accepted"], false);
    let kinds: Vec<&str> = v["shortfalls"]
        .as_array()
        .expect("shortfalls")
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["missing", "check_failed"], "{v}");

    let report = Path::new(&dir).join("worker-1/report.md");
    std::fs::write(&report, "Too short. Conclusion").expect("report");
    let (c, v) = check(&home, &file, &dir);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["shortfalls"][0]["kind"], "too_short", "{v}");
    assert_eq!(v["shortfalls"].as_array().map(Vec::len), Some(1), "{v}");

    std::fs::write(&report, "A long enough report, with its Conclusion.").expect("report");
    let (c, v) = check(&home, &file, &dir);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["accepted"], true);
    assert_eq!(v["evidence"]["artifacts"][0]["chars"], 42);
    let tail = v["evidence"]["checks"][0]["tail"]
        .as_str()
        .unwrap_or_default();
    assert!(tail.contains("/work/worker-1 by the daemon"), "{v}");
}

#[test]
fn a_failing_check_is_reported_with_its_output_in_plain_text_too() {
    let task =
        r#"{"goal": "g", "checks": [{"run": "echo 'test parse ... FAILED' >&2; exit 101"}]}"#;
    let (home, file, dir) = daemon_with_task(task);
    let out = home.run(&["fleet", "check", &file, "-C", &dir]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("not accepted in"), "{text}");
    assert!(text.contains("exited 101"), "{text}");
    assert!(text.contains("test parse ... FAILED"), "{text}");
}

#[test]
fn a_bad_task_is_refused_before_anything_runs() {
    let climbs = r#"{"goal": "g", "artifacts": [{"path": "../../etc/passwd"}],
        "checks": [{"run": "touch ran"}]}"#;
    let (home, file, dir) = daemon_with_task(climbs);
    let (c, v) = code(&home, &["fleet", "check", &file, "-C", &dir]);
    assert_eq!(c, 2, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("../../etc/passwd") && message.contains("task.json"),
        "{v}"
    );
    assert!(!Path::new(&dir).join("ran").exists(), "no check ran");
    let out = home.run_with_stdin(
        &["--json", "fleet", "check", "-"],
        br#"{"goal": "g", "check": []}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("check")),
        "{v}"
    );
    let (c, v) = code(&home, &["fleet", "check", &file, "--timeout", "0"]);
    assert_eq!(c, 2, "{v}");
    let (c, v) = code(&home, &["fleet", "check", "no-such-task.json"]);
    assert_eq!(c, 2, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no-such-task.json"), "{v}");
    let good = home.path().join("good.json");
    std::fs::write(&good, r#"{"goal": "g", "checks": [{"run": "touch ran"}]}"#).expect("task");
    let good = good.display().to_string();
    let gone = format!("{dir}/no-such-dir");
    let (c, v) = code(&home, &["fleet", "check", &good, "-C", &gone]);
    assert_eq!(c, 2, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("no-such-dir") && message.contains("directory"),
        "{v}"
    );
    assert!(!Path::new(&dir).join("ran").exists(), "no check ran");
}

#[test]
fn the_daemon_refuses_a_task_the_cli_would_not_send() {
    use flotilla_tests::raw::{RawClient, error_code};
    let (home, _file, dir) = daemon_with_task("{}");
    let mut raw = RawClient::connect(&home.socket_path());
    let task = serde_json::json!({"goal": "g", "artifacts": [{"path": "/etc/passwd"}],
        "checks": [{"run": "touch ran"}]});
    let refused = raw
        .call(
            "fleet.check",
            serde_json::json!({"task": task, "dir": dir, "timeout_ms": 1000}),
        )
        .expect("an answer");
    assert_eq!(error_code(&refused), "bad_request", "{refused}");
    let relative = serde_json::json!({"goal": "g", "checks": [{"run": "touch ran"}]});
    let refused = raw
        .call(
            "fleet.check",
            serde_json::json!({"task": relative, "dir": "work", "timeout_ms": 1000}),
        )
        .expect("an answer");
    assert_eq!(error_code(&refused), "bad_request", "{refused}");
    assert!(!Path::new(&dir).join("ran").exists(), "no check ran");
}
