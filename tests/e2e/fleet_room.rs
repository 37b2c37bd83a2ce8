//! `flotilla fleet watch` (issue 9): the control room, a real tmux session
//! on a private server, made by `--no-attach` for a real daemon's exec
//! fleet, its panes following the members live, and attached from a real
//! terminal (a pane of another tmux server); and the plain follow, which
//! interleaves the members' events with the daemon's decisions.

use std::time::Duration;

use flotilla_tests::session::PrivateTmux;
use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::Value;

/// Dispatches to both workers at the kickoff; says done once both
/// steps were accepted.
const SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [
        {"to": "worker-1", "step": "one", "prompt": "write one.md", "artifacts": [{"path": "one.md"}]},
        {"to": "worker-2", "step": "two", "prompt": "write two.md", "artifacts": [{"path": "two.md"}]}]}' ;;
esac
"#;

/// Writes the file its prompt names (one.md or two.md) once `go` exists (bounded: 60 s).
const WORKER: &str = r##"#!/bin/sh
prompt=$(cat)
i=0
while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
case "$prompt" in *one.md*) file=one.md ;; *) file=two.md ;; esac
echo "# $file" > "$file"
echo "wrote $file"
"##;

fn start_fleet(home: &TestHome) -> std::path::PathBuf {
    let dir = home.path().join("work");
    std::fs::create_dir_all(&dir).expect("dir");
    let (sup, work) = (home.path().join("sup.sh"), home.path().join("work.sh"));
    write_executable(&sup, SUPERVISOR);
    write_executable(&work, WORKER);
    let task = home.path().join("task.json");
    std::fs::write(&task, r#"{"goal": "write one and two"}"#).expect("task");
    let (sup, work) = (sup.display().to_string(), work.display().to_string());
    let (task, d) = (task.display().to_string(), dir.display().to_string());
    home.json(&[
        "fleet",
        "start",
        "rep",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &sup,
        "--workers",
        "2",
        "--worker-cli",
        "exec",
        "--worker-cmd",
        &work,
        "-C",
        &d,
        "--task",
        &task,
    ]);
    dir
}

/// What the pane titled `role` has shown, its scrolled-off history
/// included, wrapped lines joined.
fn capture(tmux: &PrivateTmux, role: &str) -> String {
    let panes = tmux.run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_title}"]);
    let Some(id) = panes
        .lines()
        .find_map(|l| l.strip_suffix(&format!(" {role}")))
    else {
        return String::new();
    };
    tmux.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", id])
}

/// Waits (at most `timeout`) until the pane titled `role` has shown
/// `needle`; on timeout, panics with what every pane holds.
fn wait_for_pane(tmux: &PrivateTmux, role: &str, needle: &str, timeout: Duration) {
    let deadline = std::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    while std::time::Instant::now() < deadline {
        if capture(tmux, role).contains(needle) {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
    let panes: String = ["supervisor", "decisions", "worker-1", "worker-2"]
        .iter()
        .map(|r| format!("--- {r}:\n{}\n", capture(tmux, r)))
        .collect();
    panic!(
        "timed out after {timeout:?} waiting for {role}'s pane to show {needle:?}; the panes:\n{panes}"
    );
}

fn no_attach(home: &TestHome, tmux: &PrivateTmux) -> Value {
    let out = tmux
        .apply(&mut home.command(&["--json", "fleet", "watch", "rep", "--no-attach"]))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("fleet watch");
    assert!(
        out.status.success(),
        "fleet watch --no-attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn the_control_room_is_a_tmux_session_whose_panes_follow_the_members() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let tmux = PrivateTmux::new(home.path());
    let dir = start_fleet(&home);

    let room = no_attach(&home, &tmux);
    assert_eq!(room["schema"], "flotilla.fleet-room.v1");
    assert_eq!(room["session"], "flotilla-fleet-rep");
    assert_eq!(room["created"], true);
    let socket = room["socket"].as_str().expect("socket");
    assert!(
        socket.starts_with(&tmux.dir().display().to_string()),
        "the private server: {socket}"
    );

    // Every pane, where the plan put it, running the follow of its role
    // with this home.
    let home_arg = format!("--home {}", home.path().display());
    let listed = tmux.run(&[
        "list-panes",
        "-a",
        "-F",
        "#{pane_title}|#{window_name}|#{pane_left}|#{pane_top}|#{pane_start_command}",
    ]);
    let panes: Vec<Vec<&str>> = listed.lines().map(|l| l.split('|').collect()).collect();
    let roles: Vec<&str> = panes.iter().map(|p| p[0]).collect();
    assert_eq!(
        roles,
        ["supervisor", "decisions", "worker-1", "worker-2"],
        "{listed}"
    );
    for p in &panes {
        assert_eq!(p[1], "control", "{listed}");
        assert!(
            p[4].contains(&home_arg) && p[4].contains(&format!("fleet watch rep --only {}", p[0])),
            "{listed}"
        );
    }
    let at = |role: &str| -> (u32, u32) {
        let p = panes.iter().find(|p| p[0] == role).expect("pane");
        (p[2].parse().expect("left"), p[3].parse().expect("top"))
    };
    assert_eq!(at("supervisor"), (0, at("supervisor").1));
    assert_eq!(at("decisions").0, 0, "{listed}");
    assert!(at("decisions").1 > at("supervisor").1, "{listed}");
    assert!(
        at("worker-1").0 > 0 && at("worker-2").0 == at("worker-1").0,
        "{listed}"
    );
    assert!(at("worker-2").1 > at("worker-1").1, "{listed}");

    // Live: the supervisor's plan, the dispatches, a worker's turn.
    wait_for_pane(&tmux, "supervisor", "write one.md", Duration::from_secs(30));
    wait_for_pane(
        &tmux,
        "decisions",
        "dispatch two to worker-2",
        Duration::from_secs(30),
    );
    wait_for_pane(&tmux, "worker-2", "turn.started", Duration::from_secs(30));

    // A second call finds the session.
    assert_eq!(no_attach(&home, &tmux)["created"], false);

    std::fs::write(dir.join("go"), "").expect("go");
    wait_for_pane(
        &tmux,
        "decisions",
        "the task is completed",
        Duration::from_secs(60),
    );
    wait_for_pane(&tmux, "worker-1", "wrote one.md", Duration::from_secs(30));

    // The plain follow (stdout is no terminal): everything, interleaved
    // in time order, each line named by its source; exit 0, completed.
    let plain = home.ok(&["fleet", "watch", "rep"]);
    for who in ["fleet ", "supervisor ", "worker-1 ", "worker-2 "] {
        assert!(
            plain.lines().any(|l| l.starts_with(who)),
            "no line from {who}in:\n{plain}"
        );
    }
    let lines: Vec<&str> = plain.lines().collect();
    let first_worker = lines.iter().position(|l| l.starts_with("worker-"));
    let last_supervisor = lines.iter().rposition(|l| l.starts_with("supervisor "));
    assert!(
        first_worker < last_supervisor,
        "the members' lines are interleaved, not one after the other:\n{plain}"
    );
    let only = home.ok(&["fleet", "watch", "rep", "--only", "worker-1"]);
    assert!(
        only.contains("wrote one.md") && !only.contains("wrote two.md"),
        "{only}"
    );
    // The JSON follow: one line per decision and per member event.
    let json = home.ok(&["--json", "fleet", "watch", "rep", "--only", "worker-1"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        lines
            .iter()
            .all(|l| l["schema"] == "flotilla.fleet-member-event.v1" && l["role"] == "worker-1"),
        "{json}"
    );
    assert!(
        lines.iter().any(|l| l["type"] == "turn.completed"),
        "{json}"
    );
    let all = home.ok(&["--json", "fleet", "watch", "rep"]);
    for schema in [
        "flotilla.fleet-decision.v1",
        "flotilla.fleet-member-event.v1",
    ] {
        assert!(all.contains(schema), "no {schema} line in:\n{all}");
    }
    let err = home.fails(&["fleet", "watch", "rep", "--only", "worker-9"], 2);
    assert!(
        err.contains("worker-9") && err.contains("worker-2"),
        "{err}"
    );
}

#[test]
fn without_tmux_the_control_room_is_refused_with_what_to_do() {
    let home = TestHome::new();
    let out = home
        .command(&["fleet", "watch", "rep", "--no-attach"])
        .env("PATH", home.path())
        .output()
        .expect("fleet watch");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tmux is not installed") && err.contains("--plain"),
        "{err}"
    );
}

#[test]
fn in_a_terminal_fleet_watch_attaches_to_the_control_room_and_exits_with_tmux() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let dir = start_fleet(&home);
    let inner = PrivateTmux::new(home.path());
    let outer = PrivateTmux::new(&home.path().join("o"));
    // A real terminal: a pane of another tmux server, outside it (no TMUX).
    let watch = format!(
        "env -u TMUX TMUX_TMPDIR={} {} --home {} fleet watch rep; echo EXITED $?; sleep 60",
        inner.dir().display(),
        flotilla_tests::flotilla_bin().display(),
        home.path().display()
    );
    outer.run(&[
        "new-session",
        "-d",
        "-s",
        "o",
        "-x",
        "160",
        "-y",
        "40",
        &watch,
    ]);
    let screen = || outer.run(&["capture-pane", "-p", "-J", "-t", "o"]);
    wait_until(
        "the terminal shows the control room",
        Duration::from_secs(30),
        || {
            let s = screen();
            s.contains("supervisor") && s.contains("decisions") && s.contains("worker-2")
        },
    );
    let clients = inner.run(&["list-clients", "-F", "#{client_session}"]);
    assert_eq!(clients.trim(), "flotilla-fleet-rep", "{clients}");
    inner.run(&["detach-client", "-s", "flotilla-fleet-rep"]);
    wait_until(
        "fleet watch exits with tmux's 0",
        Duration::from_secs(30),
        || screen().contains("EXITED 0"),
    );
    std::fs::write(dir.join("go"), "").expect("go");
}
