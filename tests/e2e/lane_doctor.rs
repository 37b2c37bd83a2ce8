//! CLI versions (issue 12): a CLI older than the oldest supported version
//! is refused at a lane's start with the reason, runs with `--force`, and
//! `lane doctor` says so; the doctor also says which CLI takes its prompt
//! as an argument (visible in the process list).

use flotilla_tests::TestHome;

use crate::lanes::code;

/// A `claude` that prints `version` and answers one turn in stream-json.
fn fake_claude(home: &TestHome, version: &str) -> std::path::PathBuf {
    let fake = home.path().join("old-claude");
    let script = format!(
        r#"#!/bin/sh
case "$1" in --version) echo '{version} (Claude Code)'; exit 0;; --help) echo '--output-format'; exit 0;; esac
cat >/dev/null
echo '{{"type":"result","subtype":"success","is_error":false,"result":"ran","session_id":"s"}}'
"#
    );
    flotilla_tests::write_executable(&fake, &script);
    fake
}

#[test]
fn a_cli_below_the_floor_is_refused_unless_forced_and_the_doctor_says_why() {
    let mut home = TestHome::new();
    let fake = fake_claude(&home, "1.0.3");
    home.write_config(&format!("[clis]\nclaude = \"{}\"\n", fake.display()));
    home.spawn_daemon("h");
    let (c, v) = code(
        &home,
        &[
            "lane", "run", "--cli", "claude", "-n", "old", "--prompt", "hi",
        ],
    );
    assert_eq!(c, 5, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1.0.3") && message.contains("2.1.197"),
        "{v}"
    );
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("--force"),
        "{v}"
    );
    let lanes = home.json(&["lane", "list", "--all"]);
    assert_eq!(lanes["lanes"], serde_json::json!([]), "no lane was made");

    let out = home.run(&[
        "lane", "run", "--cli", "claude", "-n", "old", "--force", "--prompt", "hi",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ran");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("started anyway (--force)"),
        "{out:?}"
    );

    let doctor = home.json(&["lane", "doctor"]);
    let clis = doctor["clis"].as_array().expect("clis");
    let claude = clis.iter().find(|c| c["cli"] == "claude").expect("claude");
    assert_eq!(claude["status"], "too_old", "{claude}");
    assert_eq!(claude["prompt_via"], "stdin");
    let grok = clis.iter().find(|c| c["cli"] == "grok").expect("grok");
    assert_eq!(grok["prompt_via"], "argument", "{grok}");
    let human = home.ok(&["lane", "doctor", "--cli", "grok"]);
    assert!(human.contains("shows in the process list"), "{human}");
}
