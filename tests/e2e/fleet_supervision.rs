//! The daemon watches the supervisor (issue 9): a supervisor turn that
//! never answers (here: past its deadline) is no bad plan; the daemon
//! restarts the supervisor in a fresh session that starts with the
//! daemon's skeleton, and the task goes on. Meanwhile `fleet status` shows
//! how long the running member has been quiet. Exec members: the model is
//! irrelevant here.

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::Value;

/// Silent (past the 6 s deadline) at its first turn; then plans, and says
/// done once the step was accepted. Logs every prompt.
const SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
printf '%s\n---\n' "$prompt" >> ../prompts.log
if [ ! -e ../slept ]; then touch ../slept; exec sleep 60; fi
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [{"to": "worker-1", "step": "s1", "prompt": "write r.md",
        "artifacts": [{"path": "r.md"}]}]}' ;;
esac
"#;

#[test]
fn a_supervisor_that_stops_answering_is_restarted_fresh_and_the_task_completes() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let dir = home.path().join("work");
    std::fs::create_dir_all(&dir).expect("dir");
    let (sup, work) = (home.path().join("sup.sh"), home.path().join("work.sh"));
    write_executable(&sup, SUPERVISOR);
    write_executable(&work, "#!/bin/sh\ncat >/dev/null\necho done > r.md\n");
    let task = home.path().join("task.json");
    std::fs::write(
        &task,
        r#"{"goal": "write r.md", "artifacts": [{"path": "r.md"}]}"#,
    )
    .expect("task");
    let path = |p: &std::path::Path| p.display().to_string();
    home.json(&[
        "fleet",
        "start",
        "sv",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &path(&sup),
        "--workers",
        "1",
        "--worker-cli",
        "exec",
        "--worker-cmd",
        &path(&work),
        "-C",
        &path(&dir),
        "--task",
        &path(&task),
        "--turn-timeout",
        "6s",
    ]);
    let mut quiet = Value::Null;
    wait_until(
        "the silent supervisor to show as quiet",
        Duration::from_secs(30),
        || {
            let v = home.json(&["fleet", "status", "sv"]);
            quiet = v["members"][0]["quiet_secs"].clone();
            quiet.as_u64().is_some_and(|q| q >= 1)
        },
    );
    let mut v = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(90), || {
        v = home.json(&["fleet", "status", "sv"]);
        v["state"] != "running"
    });
    assert_eq!(v["state"], "completed", "{v}");
    assert_eq!(
        v["members"][0]["quiet_secs"],
        Value::Null,
        "not running: {v}"
    );
    assert!(
        v["steps"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["step"] != "plan")),
        "a silence is no bad plan: {v}"
    );
    let history = home.json(&["fleet", "history", "sv"]);
    let text = history.to_string();
    assert!(
        text.contains("the supervisor stopped answering (timed_out)"),
        "{text}"
    );
    assert_eq!(history["handoffs"][0]["role"], "supervisor", "{history}");
    assert_eq!(history["handoffs"][0]["note"]["from_member"], false);
    let prompts = std::fs::read_to_string(home.path().join("prompts.log")).expect("prompts");
    let second = prompts.split("---").nth(1).unwrap_or_default();
    assert!(second.contains("## Next"), "the skeleton first: {second}");
    assert!(
        second.contains("write r.md"),
        "then the same turn: {second}"
    );
}
