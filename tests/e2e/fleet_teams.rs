//! Teams of teams (issue 9): a worker of one fleet starts its own fleet,
//! with the command from inside its lane or with the MCP `fleet` tool,
//! and leads it. The daemon records the tie, so each fleet's status shows
//! its parent and its sub-fleets; each has its own budget, task and state.
//! Exec members: the model is irrelevant here.

use std::path::Path;
use std::time::Duration;

use flotilla_tests::{TestHome, flotilla_bin, mcp, wait_until, write_executable};
use serde_json::{Value, json};

/// Dispatches one step whose artifact is `ARTIFACT`; done once accepted.
const SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [{"to": "worker-1", "step": "s1", "prompt": "do it",
        "artifacts": [{"path": "ARTIFACT"}]}]}' ;;
esac
"#;

fn supervisor(home: &TestHome, name: &str, artifact: &str) -> String {
    let path = home.path().join(name);
    write_executable(&path, &SUPERVISOR.replace("ARTIFACT", artifact));
    path.display().to_string()
}

fn script(home: &TestHome, name: &str, body: &str) -> String {
    let path = home.path().join(name);
    write_executable(&path, &format!("#!/bin/sh\ncat >/dev/null\n{body}\n"));
    path.display().to_string()
}

fn task(home: &TestHome, name: &str, artifact: &str) -> String {
    let path = home.path().join(name);
    let task = json!({"goal": format!("make {artifact}"), "artifacts": [{"path": artifact}]});
    std::fs::write(&path, task.to_string()).expect("task");
    path.display().to_string()
}

fn dir(home: &TestHome, name: &str) -> String {
    let dir = home.path().join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    dir.display().to_string()
}

fn ended(home: &TestHome, name: &str) -> Value {
    let mut v = Value::Null;
    wait_until(
        &format!("fleet {name} to end"),
        Duration::from_secs(60),
        || {
            v = home.json(&["fleet", "status", name]);
            v["state"] != "running" && v["state"] != "idle"
        },
    );
    v
}

/// A daemon whose fleet `top` has a worker that starts the fleet `sub`
/// (its command, as the lane) and waits for it to complete.
fn top_with_a_sub_team() -> TestHome {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let bin = flotilla_bin();
    let sub_dir = dir(&home, "sub");
    let budget = home.path().join("sub-budget.toml");
    std::fs::write(&budget, "model_calls = 9\n").expect("budget");
    let lead = format!(
        "{bin} --json fleet start sub --supervisor exec --supervisor-cmd {sup} --workers 1 \
         --worker-cli exec --worker-cmd {work} -C {sub_dir} --task {task} --budget {budget} \
         > started.json || exit 1\n\
         i=0; while [ $i -lt 300 ]; do {bin} --json fleet status sub > sub.json; \
         grep -q '\"state\": *\"completed\"' sub.json && exit 0; sleep 0.1; i=$((i+1)); done; exit 1",
        bin = bin.display(),
        sup = supervisor(&home, "sub-sup.sh", "out.md"),
        work = script(&home, "sub-work.sh", "echo done > out.md"),
        task = task(&home, "sub-task.json", "out.md"),
        budget = budget.display(),
    );
    let top_dir = dir(&home, "top");
    home.json(&[
        "fleet",
        "start",
        "top",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &supervisor(&home, "top-sup.sh", "sub.json"),
        "--workers",
        "1",
        "--worker-cli",
        "exec",
        "--worker-cmd",
        &script(&home, "top-work.sh", &lead),
        "-C",
        &top_dir,
        "--task",
        &task(&home, "top-task.json", "sub.json"),
    ]);
    home
}

#[test]
fn a_worker_that_starts_a_fleet_leads_it_and_status_shows_the_tree() {
    let home = top_with_a_sub_team();
    let top = ended(&home, "top");
    assert_eq!(top["state"], "completed", "{top}");
    let sub = ended(&home, "sub");
    assert_eq!(sub["state"], "completed", "{sub}");
    assert_eq!(
        sub["parent"],
        json!({"fleet": "top", "role": "worker-1"}),
        "{sub}"
    );
    assert_eq!(
        top["children"],
        json!([{"name": "sub", "role": "worker-1", "state": "completed"}]),
        "{top}"
    );
    assert_eq!(top["parent"], Value::Null);
    // Its own budget and its own count of calls.
    assert_eq!(sub["budget"]["model_calls"], 9, "{sub}");
    assert_eq!(top["budget"]["model_calls"], Value::Null, "{top}");
    let started = std::fs::read_to_string(home.path().join("top/started.json")).expect("started");
    assert!(started.contains("\"parent\""), "{started}");
    // The sub-team's owner is the worker's lane: its end reached it.
    let members = &sub["members"];
    assert_eq!(members[0]["lane"], "sub-supervisor", "{sub}");
    let text = home.ok(&["fleet", "status", "top"]);
    assert!(
        text.contains("└─ sub (completed), led by worker-1"),
        "{text}"
    );
    let text = home.ok(&["fleet", "status", "sub"]);
    assert!(text.contains("led by worker-1 of fleet top"), "{text}");
    // Stopped on its own: stopping the sub-team leaves the top as it is.
    home.json(&["fleet", "stop", "sub"]);
    assert_eq!(home.json(&["fleet", "status", "top"])["state"], "completed");
}

#[test]
fn the_fleet_tool_starts_a_sub_team_led_by_the_servers_peer_and_refuses_without_one() {
    let home = top_with_a_sub_team();
    ended(&home, "top");
    let spec = json!({
        "supervisor": {"cli": "exec", "command": supervisor(&home, "t-sup.sh", "t.md")},
        "workers": [{"cli": "exec", "command": script(&home, "t-work.sh", "echo t > t.md")}],
        "dir": dir(&home, "tool"),
        "budget": {"rounds": 5},
    });
    let task = json!({"goal": "make t.md", "artifacts": [{"path": "t.md"}]});
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let anonymous = mcp::connect(&home, None).await;
        let refused = mcp::error(
            &anonymous,
            "fleet",
            json!({"action": "start", "name": "t", "spec": spec.clone(), "task": task.clone()}),
        )
        .await;
        assert_eq!(refused["exit"], 2, "{refused}");
        let listed = mcp::ok(&anonymous, "fleet", json!({"action": "list"})).await;
        assert_eq!(listed["schema"], "flotilla.fleets.v1");
        anonymous.cancel().await.ok();

        let worker = mcp::connect(&home, Some("top-worker-1")).await;
        let bad = mcp::error(
            &worker,
            "fleet",
            json!({"action": "start", "name": "t", "spec": {"as": "operator"}}),
        )
        .await;
        assert!(
            bad["message"].as_str().is_some_and(|m| m.contains("as")),
            "{bad}"
        );
        let started = mcp::ok(
            &worker,
            "fleet",
            json!({"action": "start", "name": "t", "spec": spec, "task": task}),
        )
        .await;
        assert_eq!(
            started["parent"],
            json!({"fleet": "top", "role": "worker-1"})
        );
        worker.cancel().await.ok();
    });
    let t = ended(&home, "t");
    assert_eq!(t["state"], "completed", "{t}");
    assert_eq!(t["budget"]["rounds"], 5);
    let top = home.json(&["fleet", "status", "top"]);
    let names: Vec<&str> = top["children"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["sub", "t"], "{top}");
    assert!(Path::new(&home.path().join("tool/t.md")).exists());
}
