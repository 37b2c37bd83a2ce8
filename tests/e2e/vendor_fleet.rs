//! A fleet led by a real Claude Code supervisor (against the scripted
//! model server) with an exec worker: the supervisor's plan comes from the
//! model's answer, the daemon judges the worker's step and the whole task,
//! and the supervisor's second turn resumes its own native session with
//! the daemon's report. This run is the evidence of the pair table's
//! `claude` × `exec` × `task` row.

use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::Value;

const PLAN: &str = r#"{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write report.md",
  "artifacts": [{"path": "report.md", "contains": ["Conclusion"]}]}]}"#;

#[test]
fn a_claude_supervisor_leads_an_exec_worker_to_a_completed_task() {
    let server = ModelServer::start(Script::new([
        Reply::text(PLAN),
        Reply::text("```json\n{\"done\": true}\n```"),
    ]));
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    let work = home.path().join("work.sh");
    write_executable(
        &work,
        "#!/bin/sh\ncat >/dev/null\nprintf 'Conclusion: done\\n' > report.md\n",
    );
    let task = home.path().join("task.json");
    std::fs::write(
        &task,
        r#"{"goal": "write the report", "artifacts": [{"path": "report.md"}]}"#,
    )
    .expect("task");
    let dir = env.workdir().display().to_string();
    let (work, task) = (work.display().to_string(), task.display().to_string());
    home.json(&[
        "fleet",
        "start",
        "lead",
        "--supervisor",
        "claude",
        "-m",
        default_model(CliKind::Claude),
        "--workers",
        "1",
        "--worker-cli",
        "exec",
        "--worker-cmd",
        &work,
        "-C",
        &dir,
        "--task",
        &task,
    ]);
    let mut v = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(120), || {
        v = home.json(&["fleet", "status", "lead"]);
        v["state"] != "running"
    });
    assert_eq!(v["state"], "completed", "{v}");
    let supervisor = &v["members"][0];
    assert_eq!(supervisor["cli"], "claude");
    assert_eq!(supervisor["turns"], 2, "{v}");
    assert_eq!(v["spent"]["model_calls"], 3, "{v}");
    let asked = server.model_requests();
    let second = asked.last().expect("a second request").body.to_string();
    assert!(
        second.contains("was accepted"),
        "the report reached the model: {second}"
    );
    assert!(
        second.contains("write the report"),
        "the second turn resumed the first one's conversation: {second}"
    );
}
