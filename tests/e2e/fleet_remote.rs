//! Fleet workers on another host (`fleet start --host`, issue 9): a real
//! hub and two real daemons on 127.0.0.1. The fleet runs on `laptop`, its
//! worker is a remote lane on `work`; the daemon judges the worker's step
//! on what `work` holds (bouncing it with the reasons when the artifact is
//! missing there), brings the accepted artifact home, where the task's
//! check runs, and `fleet rm` removes the remote lane. `lane.files`, the
//! op that reads a remote lane's files, never reads outside that lane's
//! directory, and only for the host that placed the lane.

use std::path::PathBuf;
use std::time::Duration;

use flotilla_tests::raw::error_code;
use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::{Value, json};

use crate::fleet_run::SUPERVISOR;
use crate::remote_lanes::{federation_with, lanes_of};

/// Logs its prompts where it works; writes the report from its second
/// turn on (so its first is bounced).
const WORKER: &str = r#"#!/bin/sh
cat >> prompts.log
echo "---" >> prompts.log
if [ -e turned ]; then printf '# Report\n\nConclusion: it holds, from %s.\n' "$PWD" > report.md; fi
touch turned
echo "did my part"
"#;

const TASK: &str = r#"{"goal": "write the report",
  "artifacts": [{"path": "report.md", "min_chars": 10}],
  "checks": [{"run": "grep Conclusion report.md"}]}"#;

struct Remote {
    _hub: TestHome,
    _server: flotilla_tests::federation::Running,
    laptop: TestHome,
    work: TestHome,
    dir: PathBuf,
}

fn federation() -> Remote {
    let (hub, server, laptop, work) =
        federation_with(|_| "allow_remote_lanes = [\"exec\"]\n".into());
    let dir = laptop.path().join("fleet");
    std::fs::create_dir_all(&dir).expect("dir");
    write_executable(&laptop.path().join("sup.sh"), SUPERVISOR);
    write_executable(&laptop.path().join("work.sh"), WORKER);
    std::fs::write(laptop.path().join("task.json"), TASK).expect("task");
    Remote {
        _hub: hub,
        _server: server,
        laptop,
        work,
        dir,
    }
}

impl Remote {
    fn file(&self, name: &str) -> String {
        self.laptop.path().join(name).display().to_string()
    }

    /// `fleet start rep` with its worker on `work`, owned by `lead`.
    fn start(&self) -> Value {
        let (sup, worker, task) = (
            self.file("sup.sh"),
            self.file("work.sh"),
            self.file("task.json"),
        );
        let dir = self.dir.display().to_string();
        self.laptop.json(&[
            "fleet",
            "start",
            "rep",
            "--supervisor",
            "exec",
            "--supervisor-cmd",
            &sup,
            "--workers",
            "1",
            "--worker-cli",
            "exec",
            "--worker-cmd",
            &worker,
            "--host",
            "work",
            "--as",
            "lead",
            "-C",
            &dir,
            "--task",
            &task,
        ])
    }

    fn wait_state(&self, state: &str) -> Value {
        let mut last = Value::Null;
        wait_until(
            &format!("the fleet to be {state}"),
            Duration::from_secs(90),
            || {
                last = self.laptop.json(&["fleet", "status", "rep"]);
                last["state"] == state
            },
        );
        last
    }
}

#[test]
fn a_worker_on_another_host_is_judged_there_and_its_accepted_artifact_comes_home() {
    let f = federation();
    let started = f.start();
    let worker = &started["members"][1];
    assert_eq!(worker["role"], "worker-1", "{started}");
    assert_eq!(worker["host"], "work", "{started}");
    assert!(started["members"][0]["host"].is_null(), "{started}");

    let done = f.wait_state("completed");
    // The worker ran on work, in a directory of work's own.
    assert_eq!(lanes_of(&f.work), ["work/rep-worker-1"]);
    assert!(
        !lanes_of(&f.laptop).iter().any(|l| l.contains("worker")),
        "no worker ran on the laptop"
    );
    let there = f
        .laptop
        .json(&["lane", "status", "rep-worker-1", "--host", "work"]);
    let cwd = PathBuf::from(there["cwd"].as_str().expect("cwd"));
    assert!(cwd.starts_with(f.work.path()), "{there}");
    let log = std::fs::read_to_string(cwd.join("prompts.log")).expect("prompts");
    // Its first turn left nothing there: bounced with the reason, judged on work.
    assert_eq!(log.matches("---").count(), 2, "{log}");
    assert!(
        log.contains("report.md") && log.contains("not accepted"),
        "{log}"
    );
    let step = &done["steps"][0];
    assert_eq!(step["step"], "draft", "{done}");
    assert_eq!(step["bounces"], 1, "{done}");

    // Brought home: the task's check ran on the laptop's copy.
    let home = std::fs::read_to_string(f.dir.join("report.md")).expect("brought home");
    assert!(home.contains(&format!("from {}", cwd.display())), "{home}");
    assert!(
        !f.dir.join("prompts.log").exists(),
        "only the artifacts come home"
    );

    // What the fleet heard of its remote member.
    let worker = &done["members"][1];
    assert_eq!(worker["turns"], 2, "{done}");
    assert_eq!(worker["phase"], "idle", "{done}");

    // Once the fleet saved what it did with them, the results are collected
    // from the remote lane: none waits there.
    wait_until(
        "the remote results to be collected",
        Duration::from_secs(30),
        || {
            f.laptop
                .json(&["lane", "status", "rep-worker-1", "--host", "work"])["uncollected"]
                == false
        },
    );

    // `fleet rm` removes the remote lane too.
    let removed = f.laptop.json(&["fleet", "rm", "rep"]);
    assert!(
        removed["lanes"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("work/rep-worker-1"))),
        "{removed}"
    );
    assert!(lanes_of(&f.work).is_empty());
}

#[test]
fn a_fleet_whose_host_refuses_its_workers_does_not_start() {
    let (_hub, _server, laptop, _work) = federation_with(|_| String::new());
    write_executable(&laptop.path().join("sup.sh"), SUPERVISOR);
    let sup = laptop.path().join("sup.sh").display().to_string();
    let dir = laptop.path().display().to_string();
    let stderr = laptop.fails(
        &[
            "fleet",
            "start",
            "rep",
            "--supervisor",
            "exec",
            "--supervisor-cmd",
            &sup,
            "--workers",
            "1",
            "--worker-cli",
            "exec",
            "--worker-cmd",
            "true",
            "--host",
            "work",
            "--as",
            "lead",
            "-C",
            &dir,
        ],
        5,
    );
    assert!(stderr.contains("work refused"), "{stderr}");
    assert!(
        laptop.json(&["fleet", "list"])["fleets"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
}

/// `lane.files` through `remote.call`, as `laptop`'s `lead`.
fn files(laptop: &TestHome, lane: &str, paths: &[&str]) -> Value {
    let args = json!({"host": "work", "as": "lead", "op": "lane.files",
        "args": {"name": lane, "paths": paths}});
    laptop.raw().call("remote.call", args).expect("call")
}

#[test]
fn lane_files_reads_nothing_outside_the_lanes_directory_nor_for_another_host() {
    let f = federation();
    f.laptop.ok(&[
        "lane",
        "run",
        "--host",
        "work",
        "--as",
        "lead",
        "--cli",
        "exec",
        "-n",
        "box",
        "--prompt",
        "x",
        "--",
        "sh",
        "-c",
        "echo inside > inside.txt; ln -s /etc/hostname out.txt; mkdir -p d; echo done",
    ]);
    let answer = files(
        &f.laptop,
        "box",
        &["inside.txt", "out.txt", "nothing.txt", "d"],
    );
    let got = &answer["result"]["files"];
    assert_eq!(got[0]["state"], "text", "{answer}");
    assert_eq!(got[0]["text"], "inside\n", "{answer}");
    assert_eq!(
        got[1]["state"], "unreadable",
        "a symlink out is never followed: {answer}"
    );
    assert!(got[1]["text"].is_null(), "{answer}");
    assert_eq!(got[2]["state"], "missing", "{answer}");
    assert_eq!(got[3]["state"], "unreadable", "{answer}");

    for bad in ["../x", "/etc/hostname", "d/../../x", ""] {
        let answer = files(&f.laptop, "box", &[bad]);
        assert_eq!(error_code(&answer), "bad_request", "{bad:?}: {answer}");
    }

    // A lane work placed itself is not laptop's to read.
    let own = f.work.path().join("own");
    std::fs::create_dir_all(&own).expect("dir");
    let own = own.display().to_string();
    f.work.ok(&[
        "lane",
        "run",
        "--cli",
        "exec",
        "-n",
        "own",
        "-C",
        &own,
        "--prompt",
        "x",
        "--",
        "sh",
        "-c",
        "echo secret > s.txt",
    ]);
    let answer = files(&f.laptop, "own", &["s.txt"]);
    assert_eq!(error_code(&answer), "forbidden", "{answer}");
    assert!(!answer.to_string().contains("secret"), "{answer}");

    // `lane rm --host` removes the lane it placed (what `fleet rm` uses).
    f.laptop
        .ok(&["lane", "rm", "box", "--host", "work", "--force"]);
    assert_eq!(lanes_of(&f.work), ["work/own"]);
}

#[test]
fn after_kill_9_of_the_fleets_daemon_the_remote_workers_turn_is_adopted_not_run_again() {
    let mut f = federation();
    let go = f.laptop.path().join("go");
    let waiter = format!(
        "#!/bin/sh\ncat >> prompts.log\necho --- >> prompts.log\ni=0\n\
         while [ ! -e {go} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n\
         printf '# Report\\n\\nConclusion: it holds.\\n' > report.md\necho done\n",
        go = go.display()
    );
    write_executable(&f.laptop.path().join("work.sh"), &waiter);
    f.start();
    wait_until("the worker to run on work", Duration::from_secs(60), || {
        let status = f
            .laptop
            .command(&["--json", "lane", "status", "rep-worker-1", "--host", "work"])
            .output()
            .expect("status");
        serde_json::from_slice::<Value>(&status.stdout).is_ok_and(|v| v["phase"] == "running")
    });
    f.laptop.kill_daemon();
    f.laptop.spawn_daemon("laptop");
    std::fs::write(&go, "").expect("go");
    let done = f.wait_state("completed");
    assert_eq!(
        done["members"][1]["turns"], 1,
        "the turn was adopted: {done}"
    );
    let there = f
        .laptop
        .json(&["lane", "status", "rep-worker-1", "--host", "work"]);
    assert_eq!(there["turns"], 1, "it ran once on work: {there}");
    assert!(f.dir.join("report.md").exists(), "brought home");
}

#[test]
fn a_remote_worker_whose_host_is_down_at_its_turn_waits_for_it_and_spends_no_bounce() {
    let mut f = federation();
    let release = f.laptop.path().join("release");
    let supervisor = format!(
        "#!/bin/sh\nprompt=$(cat)\ni=0\n\
         while [ ! -e {release} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n{}",
        SUPERVISOR.trim_start_matches("#!/bin/sh\nprompt=$(cat)\n"),
        release = release.display()
    );
    write_executable(&f.laptop.path().join("sup.sh"), &supervisor);
    write_executable(
        &f.laptop.path().join("work.sh"),
        "#!/bin/sh\ncat >/dev/null\nprintf '# Report\\n\\nConclusion: yes.\\n' > report.md\n",
    );
    f.start();
    // work goes away before the supervisor's plan reaches its worker.
    f.work.kill_daemon();
    std::fs::write(&release, "").expect("release");
    let log = f.laptop.path().join("daemon-test.stderr");
    wait_until(
        "the worker's turn to wait for work",
        Duration::from_secs(90),
        || std::fs::read_to_string(&log).is_ok_and(|t| t.contains("turn waits for its host")),
    );
    f.work.spawn_daemon("work");
    let done = f.wait_state("completed");
    let draft = done["steps"][0].clone();
    assert_eq!(draft["step"], "draft", "{done}");
    assert_eq!(
        draft["bounces"], 0,
        "no attempt was spent while work was down: {done}"
    );
    assert_eq!(done["members"][1]["turns"], 1, "{done}");
}
