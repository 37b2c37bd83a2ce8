//! Lanes of plain commands (`--cli exec`) through the real binary: results
//! and exit codes, interrupt and deadline, no leftover process, results
//! handed out once, archive and resume, owners, persistent lanes fed by
//! messages, large prompts kept out of the process list, and daemon restarts
//! during a turn (adopted, or reported lost; never silent).

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

pub(crate) fn daemon() -> TestHome {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home
}

pub(crate) fn code(home: &TestHome, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = home.run(&all);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

/// A sleep duration unique to this test process, so concurrent or earlier
/// runs never match each other's processes.
pub(crate) fn unique(n: u32) -> String {
    format!("{}{n}", 100_000 + std::process::id())
}

/// Whether any process still has `marker` in its command line.
/// Whether a lane's command (not its shim, whose command line names the
/// command before the daemon's go lets it run) with `marker` runs.
pub(crate) fn running_with(marker: &str) -> bool {
    flotilla_tests::process_running_except(marker, Some("lane-shim"))
}

/// Kills lane `name`'s turn (its whole process group) while the daemon is
/// down, as a reboot would, and waits until no process has `marker`.
pub(crate) fn kill_turn_with_daemon(home: &mut TestHome, name: &str, marker: &str) {
    let pid = home.json(&["lane", "status", name])["pid"]
        .as_i64()
        .expect("pid");
    home.kill_daemon();
    std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .status()
        .expect("kill group");
    flotilla_tests::wait_until(
        "the turn's processes to be gone",
        std::time::Duration::from_secs(10),
        || !running_with(marker),
    );
}

#[test]
fn exec_lanes_report_status_and_exit_codes() {
    let home = daemon();
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "ok",
            "--prompt",
            "ping",
            "--",
            "sh",
            "-c",
            "read x; echo got $x",
        ],
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["type"], "turn.completed");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["result"], "got ping");
    assert_eq!(v["lane"], "h/ok");
    for key in [
        "exit",
        "usage",
        "context_used_pct",
        "cost_usd",
        "native_session_id",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "bad",
            "--",
            "sh",
            "-c",
            "echo oops >&2; exit 3",
        ],
    );
    assert_eq!(c, 1);
    assert_eq!(v["status"], "failed");
    assert_eq!(v["exit"], 3);
    assert!(v["error"].as_str().expect("error").contains("oops"));
    let stderr = home.fails(&["lane", "run", "--cli", "nope", "--", "true"], 2);
    assert!(
        stderr.contains("invalid value 'nope' for '--cli <CLI>'"),
        "{stderr}"
    );
    let stderr = home.fails(&["lane", "run", "--cli", "exec", "-n", "empty"], 2);
    assert!(stderr.contains("needs the command after --"), "{stderr}");
}

#[test]
fn interrupt_and_deadline_stop_the_whole_process_group() {
    let home = daemon();
    let (a, b) = (
        format!("sleep {}", unique(2)),
        format!("sleep {}", unique(3)),
    );
    let script = format!("{a} & {b}; wait");
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "slow", "--", "sh", "-c", &script,
    ]);
    wait_until("the lane's processes", Duration::from_secs(10), || {
        running_with(&format!("sleep {}", unique(3)))
    });
    home.ok(&["lane", "interrupt", "slow"]);
    let (c, v) = code(&home, &["lane", "wait", "slow"]);
    assert_eq!((c, v["status"].as_str()), (130, Some("interrupted")), "{v}");
    wait_until("no leftover process", Duration::from_secs(15), || {
        !running_with(&format!("sleep {}", unique(2)))
            && !running_with(&format!("sleep {}", unique(3)))
    });

    let late = unique(4);
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "late",
            "--timeout",
            "1",
            "--",
            "sleep",
            &late,
        ],
    );
    assert_eq!((c, v["status"].as_str()), (124, Some("timed_out")), "{v}");
    wait_until("no leftover process", Duration::from_secs(15), || {
        !running_with(&format!("sleep {}", unique(4)))
    });
}

#[test]
fn results_are_handed_out_once_and_resume_needs_them_collected() {
    let home = daemon();
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "w",
        "--no-auto-archive",
        "--",
        "sh",
        "-c",
        "echo turn",
    ]);
    let (c, _) = code(&home, &["lane", "wait", "w"]);
    assert_eq!(c, 0);
    let stderr = home.fails(&["lane", "wait", "w"], 4);
    assert!(stderr.contains("no result to collect"), "{stderr}");
    home.ok(&["lane", "resume", "w", "--prompt", "again"]);
    wait_until("the second turn to end", Duration::from_secs(10), || {
        home.json(&["lane", "status", "w"])["uncollected"] == Value::Bool(true)
    });
    let stderr = home.fails(&["lane", "resume", "w", "--prompt", "third"], 6);
    assert!(
        stderr.contains("uncollected result") && stderr.contains("flotilla lane wait w"),
        "{stderr}"
    );
    let (_, v) = code(&home, &["lane", "wait", "w"]);
    assert_eq!(v["turn"], 2);
    home.ok(&["lane", "archive", "w"]);
    assert_eq!(home.json(&["lane", "status", "w"])["phase"], "archived");
    let listed = home.json(&["lane", "list"]);
    assert!(listed["lanes"].as_array().expect("lanes").is_empty());
    assert_eq!(
        home.json(&["lane", "list", "--all"])["lanes"]
            .as_array()
            .expect("lanes")
            .len(),
        1
    );
    let events = home.run(&["lane", "events", "w", "--json"]);
    let lines = String::from_utf8_lossy(&events.stdout).lines().count();
    assert!(lines >= 6, "an archived lane keeps its events ({lines})");
    home.ok(&["lane", "resume", "w", "--prompt", "back", "--wait"]);
    assert_eq!(
        home.json(&["lane", "status", "w"])["phase"],
        "idle",
        "resume unarchives"
    );
}

#[test]
fn the_owner_gets_each_terminal_status_and_its_leaving_stops_the_lane() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "proj"]);
    home.ok(&[
        "lane", "run", "--cli", "exec", "-n", "child", "--as", "lead", "-g", "extra", "--", "true",
    ]);
    let inbox = home.json(&["inbox", "--as", "lead"]);
    let m = &inbox["messages"][0];
    assert_eq!(m["from"], "h/child");
    assert!(
        m["summary"]
            .as_str()
            .expect("summary")
            .contains("completed")
    );
    assert!(
        m["body"]
            .as_str()
            .expect("body")
            .contains("flotilla lane wait child")
    );
    let peers = home.json(&["peers", "--as", "lead"]);
    assert_eq!(
        peers["peers"][0]["id"], "h/child",
        "a lane is a peer its owner can see"
    );
    assert_eq!(peers["peers"][0]["kind"], "lane");
    let orphan = unique(5);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "orphan", "--as", "lead", "--", "sleep", &orphan,
    ]);
    wait_until("the orphan's process", Duration::from_secs(10), || {
        running_with(&format!("sleep {}", unique(5)))
    });
    home.ok(&["peer", "leave", "lead", "--force"]);
    wait_until("the orphan to be archived", Duration::from_secs(20), || {
        home.json(&["lane", "status", "orphan"])["phase"] == "archived"
    });
    assert_eq!(
        home.json(&["lane", "status", "orphan"])["last_status"],
        "interrupted"
    );
    wait_until("no leftover process", Duration::from_secs(15), || {
        !running_with(&format!("sleep {}", unique(5)))
    });
}

#[test]
fn a_message_to_an_idle_persistent_lane_starts_a_turn() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "proj"]);
    home.ok(&[
        "lane",
        "run",
        "--cli",
        "exec",
        "-n",
        "echoer",
        "--persistent",
        "--as",
        "lead",
        "--prompt",
        "first",
        "--",
        "sh",
        "-c",
        "cat",
    ]);
    home.ok(&["inbox", "--as", "lead"]);
    home.ok(&["send", "--as", "lead", "--to", "echoer", "second task"]);
    wait_until(
        "the message's turn to finish",
        Duration::from_secs(20),
        || {
            let v = home.json(&["lane", "status", "echoer"]);
            v["turns"] == 2 && v["phase"] == "idle"
        },
    );
    let inbox = home.json(&["inbox", "--as", "lead", "--wait", "10"]);
    let body = inbox["messages"][0]["body"].as_str().expect("body");
    assert!(body.contains("second task"), "{body}");
}

#[test]
fn a_large_prompt_arrives_whole_and_stays_out_of_the_process_list() {
    let home = daemon();
    let marker = "PROMPT-MARKER-77";
    let prompt = format!("{marker}{}", "x".repeat(600 * 1024));
    let out = home.run_with_stdin(
        &[
            "lane",
            "start",
            "--cli",
            "exec",
            "-n",
            "big",
            "-",
            "--",
            "sh",
            "-c",
            &format!("wc -c; sleep {}", unique(6)),
        ],
        prompt.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_until("the lane's process", Duration::from_secs(10), || {
        running_with(&format!("sleep {}", unique(6)))
    });
    assert!(
        !running_with(marker),
        "the prompt must not appear in any command line"
    );
    home.ok(&["lane", "interrupt", "big"]);
    let (_, v) = code(&home, &["lane", "wait", "big"]);
    assert_eq!(
        v["result"].as_str().map(str::trim),
        Some(prompt.len().to_string().as_str())
    );
}

#[test]
fn a_finished_lane_archives_itself_after_its_grace_period() {
    let home = daemon();
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "brief",
        "--auto-archive-after",
        "1",
        "--",
        "true",
    ]);
    wait_until(
        "the lane to archive itself",
        Duration::from_secs(20),
        || home.json(&["lane", "status", "brief"])["phase"] == "archived",
    );
    let (c, v) = code(&home, &["lane", "wait", "brief"]);
    assert_eq!(
        (c, v["status"].as_str()),
        (0, Some("completed")),
        "an archived lane's result can still be collected"
    );
}

#[test]
fn env_and_inherited_groups_reach_the_lane() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "proj"]);
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "envy",
            "--as",
            "lead",
            "--inherit-groups",
            "--env",
            "FLOTILLA_TEST_VALUE=42",
            "--",
            "sh",
            "-c",
            "echo value=$FLOTILLA_TEST_VALUE",
        ],
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], "value=42");
    let roster = home.json(&["roster"]);
    let lane = roster["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .find(|p| p["id"] == "h/envy")
        .expect("lane peer");
    let groups: Vec<&str> = lane["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g.as_str().expect("g"))
        .collect();
    assert_eq!(groups, ["session:h/envy", "proj", "session:h/lead"]);
    let stderr = home.fails(
        &[
            "lane", "run", "--cli", "exec", "-n", "bad-env", "--env", "NOEQUALS", "--", "true",
        ],
        2,
    );
    assert!(stderr.contains("is not K=V"), "{stderr}");
}
