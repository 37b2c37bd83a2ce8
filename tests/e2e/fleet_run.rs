//! Fleets (issue 9) at work: a real daemon runs a supervisor and workers
//! as lanes (exec members, where the model is irrelevant: the supervisor
//! is a script that answers with plans), judges each step itself, bounces
//! and blocks, stops a dispatch its budget does not allow, refuses an
//! unlisted pair before anything starts, and continues after `kill -9`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::Value;

/// Dispatches one step with an artifact at the kickoff; says done once a
/// step was accepted.
pub(crate) const SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write report.md",
        "artifacts": [{"path": "report.md", "contains": ["Conclusion"]}]}]}' ;;
esac
"#;

/// Writes the report, after `go` exists when `WAIT_FOR_GO` is in its
/// prompt's directory; logs every prompt it gets.
const WORKER: &str = r#"#!/bin/sh
cat >> prompts.log
echo "---" >> prompts.log
if [ -e wait-for-go ]; then
  i=0
  while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
fi
if [ -e write-it ]; then printf '# Report\n\nConclusion: it holds.\n' > report.md; fi
echo "did my part"
"#;

const TASK: &str = r#"{"goal": "write the report",
  "artifacts": [{"path": "report.md", "min_chars": 10}],
  "checks": [{"run": "grep Conclusion report.md"}]}"#;

struct Fleet {
    home: TestHome,
    dir: PathBuf,
}

impl Fleet {
    fn new(supervisor: &str) -> Self {
        let mut home = TestHome::new();
        home.spawn_daemon("h");
        let dir = home.path().join("work");
        std::fs::create_dir_all(&dir).expect("dir");
        write_executable(&home.path().join("sup.sh"), supervisor);
        write_executable(&home.path().join("work.sh"), WORKER);
        std::fs::write(home.path().join("task.json"), TASK).expect("task");
        Self { home, dir }
    }

    fn file(&self, name: &str) -> String {
        self.home.path().join(name).display().to_string()
    }

    fn start(&self, extra: &[&str]) -> Value {
        let task = self.file("task.json");
        let mut with_task = vec!["--task", &task];
        with_task.extend_from_slice(extra);
        self.start_as("rep", &with_task)
    }

    /// `fleet start NAME` of the exec supervisor and one exec worker.
    fn start_as(&self, name: &str, extra: &[&str]) -> Value {
        let (sup, work) = (self.file("sup.sh"), self.file("work.sh"));
        let dir = self.dir.display().to_string();
        let mut args = vec![
            "fleet",
            "start",
            name,
            "--supervisor",
            "exec",
            "--supervisor-cmd",
            &sup,
            "--workers",
            "1",
            "--worker-cli",
            "exec",
            "--worker-cmd",
            &work,
            "-C",
            &dir,
        ];
        args.extend_from_slice(extra);
        self.home.json(&args)
    }

    fn status(&self) -> Value {
        self.home.json(&["fleet", "status", "rep"])
    }

    fn wait_state(&self, state: &str) -> Value {
        let mut last = Value::Null;
        wait_until(
            &format!("the fleet to be {state}"),
            Duration::from_secs(60),
            || {
                last = self.status();
                last["state"] == state
            },
        );
        last
    }

    fn touch(&self, name: &str) {
        std::fs::write(self.dir.join(name), "").expect("touch");
    }

    fn prompts(&self) -> String {
        std::fs::read_to_string(self.dir.join("prompts.log")).unwrap_or_default()
    }
}

fn member<'a>(v: &'a Value, role: &str) -> &'a Value {
    v["members"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == role))
        .expect("member")
}

fn step<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["step"] == id))
        .unwrap_or_else(|| panic!("no step {id} in {v}"))
}

fn history(f: &Fleet) -> String {
    f.home.json(&["fleet", "history", "rep"])["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .filter_map(|d| d["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_fleet_completes_when_the_daemon_accepts_its_steps_and_its_task() {
    let f = Fleet::new(SUPERVISOR);
    f.touch("write-it");
    let started = f.start(&[]);
    assert_eq!(started["schema"], "flotilla.fleet.v1");
    assert_eq!(started["group"], "fleet-rep");
    let v = f.wait_state("completed");
    assert_eq!(v["task_state"], "completed");
    let draft = step(&v, "draft");
    assert_eq!(
        draft["evidence"]["artifacts"][0]["path"], "report.md",
        "{v}"
    );
    let fin = step(&v, "final");
    assert_eq!(fin["evidence"]["checks"][0]["exit"], 0, "{v}");
    assert!(
        fin["evidence"]["checks"][0]["tail"]
            .as_str()
            .is_some_and(|t| t.contains("Conclusion")),
        "{v}"
    );
    assert_eq!(v["spent"]["model_calls"], 3, "{v}");
    assert_eq!(v["spent"]["rounds"], 2, "{v}");
    assert_eq!(member(&v, "supervisor")["turns"], 2);
    assert_eq!(member(&v, "worker-1")["turns"], 1);
    assert_eq!(member(&v, "worker-1")["lane"], "rep-worker-1");
    let said = history(&f);
    assert!(said.contains("dispatch draft to worker-1"), "{said}");
    assert!(said.contains("the task is completed"), "{said}");
    let lanes = f.home.json(&["lane", "list"]);
    assert_eq!(lanes["lanes"].as_array().map(Vec::len), Some(2), "{lanes}");
    // The supervisor's lane owns the worker's: the worker's result is in
    // its inbox; the supervisor's own owner is the operator.
    let worker = f.home.json(&["lane", "status", "rep-worker-1"]);
    assert_eq!(worker["owner"], "h/rep-supervisor", "{worker}");
    let supervisor = f.home.json(&["lane", "status", "rep-supervisor"]);
    assert_eq!(supervisor["owner"], "h/operator", "{supervisor}");
    let told = f.home.json(&["inbox", "--as", "rep-supervisor", "--peek"]);
    assert!(
        told["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["from"] == "h/rep-worker-1")),
        "{told}"
    );
    let busy = f.home.run(&["fleet", "task", "rep", &f.file("task.json")]);
    assert!(
        busy.status.success(),
        "a finished fleet takes its next task"
    );
}

#[test]
fn a_missing_artifact_bounces_three_times_with_its_reason_and_blocks() {
    let f = Fleet::new(SUPERVISOR);
    f.home.ok(&["peer", "join", "lead"]);
    f.start(&["--as", "lead"]);
    let v = f.wait_state("blocked");
    assert_eq!(v["task_state"], "blocked");
    let draft = step(&v, "draft");
    assert_eq!(draft["bounces"], 3, "{v}");
    assert_eq!(draft["last_reasons"][0]["kind"], "missing", "{v}");
    assert_eq!(member(&v, "worker-1")["turns"], 3);
    let prompts = f.prompts();
    assert!(prompts.contains("bounce 1 of 3"), "{prompts}");
    assert!(prompts.contains("bounce 2 of 3"), "{prompts}");
    assert!(prompts.contains("report.md does not exist"), "{prompts}");
    assert!(history(&f).contains("bounced 3 times"), "{}", history(&f));
    let told = |times: usize| {
        wait_until("the owner to be told", Duration::from_secs(30), || {
            let inbox = f.home.json(&["inbox", "--as", "lead", "--peek"]);
            let ends = inbox["messages"].as_array().map_or(0, |m| {
                m.iter()
                    .filter(|m| {
                        m["from"] == "h/rep-supervisor"
                            && m["summary"] == "fleet rep: the task is blocked"
                            && m["body"]
                                .as_str()
                                .is_some_and(|b| b.contains("report.md does not exist"))
                    })
                    .count()
            });
            ends == times
        })
    };
    told(1);
    f.home.json(&["fleet", "task", "rep", &f.file("task.json")]);
    f.wait_state("blocked");
    told(2);
    let stderr = f.home.fails(&["fleet", "stop", "nope"], 4);
    assert!(stderr.contains("no fleet named nope"), "{stderr}");
    let again = f.home.fails(
        &[
            "fleet",
            "start",
            "rep",
            "--supervisor",
            "exec",
            "--supervisor-cmd",
            "true",
            "--workers",
            "1",
            "--worker-cli",
            "exec",
            "--worker-cmd",
            "true",
        ],
        6,
    );
    assert!(again.contains("fleet rm rep"), "{again}");
    let removed = f.home.json(&["fleet", "rm", "rep"]);
    assert_eq!(
        removed["lanes"],
        serde_json::json!(["rep-supervisor", "rep-worker-1"])
    );
    assert_eq!(
        f.home.json(&["lane", "list", "--all"])["lanes"],
        Value::Array(vec![])
    );
    f.home.fails(&["fleet", "status", "rep"], 4);
}

#[test]
fn a_budget_of_two_calls_stops_the_third_dispatch_and_a_new_card_resumes() {
    let f = Fleet::new(SUPERVISOR);
    f.touch("write-it");
    let card = f.home.path().join("budget.toml");
    std::fs::write(&card, "model_calls = 2\n").expect("card");
    f.start(&["--budget", &card.display().to_string()]);
    let v = f.wait_state("paused");
    assert_eq!(v["task_state"], "out_of_budget", "{v}");
    let reason = v["paused_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("allows 2 model calls"), "{reason}");
    assert_eq!(v["spent"]["model_calls"], 2);
    assert_eq!(
        member(&v, "supervisor")["turns"],
        1,
        "the third call never ran"
    );
    std::fs::write(&card, "model_calls = 10\n").expect("card");
    f.home.json(&[
        "fleet",
        "resume",
        "rep",
        "--budget",
        &card.display().to_string(),
    ]);
    let v = f.wait_state("completed");
    assert_eq!(v["budget"]["model_calls"], 10);
}

#[test]
fn an_unlisted_pair_and_a_supervisor_adding_a_command_are_refused() {
    let f = Fleet::new(SUPERVISOR);
    let dir = f.dir.display().to_string();
    let stderr = f.home.fails(
        &[
            "fleet",
            "start",
            "odd",
            "--supervisor",
            "gemini",
            "--workers",
            "1",
            "--worker-cli",
            "pi",
            "-C",
            &dir,
        ],
        5,
    );
    assert!(
        stderr.contains("does not list a gemini supervisor with pi workers"),
        "{stderr}"
    );
    let lanes = f.home.json(&["lane", "list", "--all"]);
    assert_eq!(lanes["lanes"], Value::Array(vec![]), "nothing started");
    assert!(
        f.home.json(&["fleet", "list"])["fleets"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );

    write_executable(
        &f.home.path().join("sup.sh"),
        "#!/bin/sh\ncat >/dev/null\necho '{\"dispatch\": [{\"to\": \"worker-1\", \"step\": \"a\", \"prompt\": \"p\", \"run\": \"touch pwned\"}]}'\n",
    );
    f.start(&[]);
    let v = f.wait_state("blocked");
    let plan = step(&v, "plan");
    assert_eq!(plan["bounces"], 3, "{v}");
    let why = plan["last_reasons"][0]["why"].as_str().unwrap_or_default();
    assert!(why.contains("never a command"), "{why}");
    assert_eq!(member(&v, "worker-1")["turns"], 0, "no worker ran");
    assert!(!Path::new(&f.dir).join("pwned").exists());
}

#[test]
fn a_fleet_continues_after_kill_9_of_its_daemon_without_accepting_a_step_twice() {
    let mut f = Fleet::new(SUPERVISOR);
    f.touch("write-it");
    f.touch("wait-for-go");
    f.start(&[]);
    // The worker's process runs (it logged its prompt): a daemon killed
    // before that point loses the turn, which then runs again (also no
    // step accepted twice, but not what this test is about).
    let log = f.dir.join("prompts.log");
    wait_until(
        "the worker's process to run",
        Duration::from_secs(60),
        || std::fs::read_to_string(&log).is_ok_and(|t| t.contains("---")),
    );
    f.home.kill_daemon();
    f.home.spawn_daemon("h");
    f.touch("go");
    let v = f.wait_state("completed");
    assert_eq!(
        member(&v, "worker-1")["turns"],
        1,
        "the turn was adopted: {v}"
    );
    let said = history(&f);
    assert_eq!(
        said.matches("step draft of worker-1 accepted").count(),
        1,
        "{said}"
    );
    assert_eq!(v["spent"]["model_calls"], 3, "{v}");
}

/// Answers a service request badly twice (a value not allowed, then a
/// missing field), then well; every later request well at once.
const SERVICE_WORKER: &str = r#"#!/bin/sh
cat >> prompts.log
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
case $n in
  1) echo '{"verdict": "maybe"}' ;;
  2) echo '{"other": 1}' ;;
  *) echo '{"verdict": "ok", "n": '$n'}' ;;
esac
"#;

#[test]
fn a_service_request_goes_to_its_worker_and_its_reply_is_checked_bounced_then_passed() {
    let f = Fleet::new(SUPERVISOR);
    write_executable(&f.home.path().join("work.sh"), SERVICE_WORKER);
    f.start_as("svc", &["--lifecycle", "service"]);
    let request = br#"{"body": {"review": "diff"},
        "reply": {"required": ["verdict"], "allowed": {"verdict": ["ok", "bad"]}}}"#;
    let out = f.home.run_with_stdin(
        &["--json", "fleet", "request", "svc", "--to", "worker-1", "-"],
        request,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["schema"], "flotilla.fleet-request.v1");
    assert_eq!(
        (v["passed"].clone(), v["bounces"].clone()),
        (Value::Bool(true), 2.into())
    );
    assert_eq!(v["reply"]["verdict"], "ok", "{v}");
    let prompts = f.prompts();
    assert!(
        prompts.contains("\"maybe\""),
        "the first bounce names the value: {prompts}"
    );
    assert!(
        prompts.contains("lacks the required field \"verdict\""),
        "{prompts}"
    );
    let status = f.home.json(&["fleet", "status", "svc"]);
    assert_eq!(
        member(&status, "supervisor")["turns"],
        0,
        "the supervisor was skipped"
    );
    let again = f.home.run_with_stdin(
        &["fleet", "request", "svc", "--to", "worker-1", "-"],
        request,
    );
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stdout).contains("\"n\": 4"));
    let stderr = String::from_utf8_lossy(
        &f.home
            .run_with_stdin(
                &["fleet", "request", "svc", "--to", "worker-9", "-"],
                request,
            )
            .stderr,
    )
    .into_owned();
    assert!(stderr.contains("not a member of this fleet"), "{stderr}");
}

/// Picks without naming the step's domain first, then as the matrix asks.
const ROUTED_SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
n=$(cat sup-count 2>/dev/null || echo 0); n=$((n+1)); echo $n > sup-count
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *"name the step's domain"*) echo '{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write report.md", "domain": "docs", "task_type": "write"}]}' ;;
  *"Routing:"*) echo '{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write report.md"}]}' ;;
  *) echo '{"done": true}' ;;
esac
"#;

#[test]
fn with_a_capability_matrix_an_unsupported_pick_is_refused_with_the_reason() {
    let f = Fleet::new(ROUTED_SUPERVISOR);
    f.touch("write-it");
    f.home.write_config(
        "[[fleet_matrix]]\ndomain = \"docs\"\ntask = \"write\"\ncli = \"exec\"\nevidence = \"tests/e2e/fleet_run.rs\"\n",
    );
    f.home.ok(&["down"]);
    f.home.ok(&["up", "--name", "h"]);
    f.start(&[]);
    let v = f.wait_state("completed");
    let plan = step(&v, "plan");
    assert_eq!(plan["bounces"], 1, "{v}");
    let why = plan["last_reasons"][0]["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("worker-1 may not take step \"draft\""),
        "{why}"
    );
    assert!(why.contains("name the step's domain and task"), "{why}");
    assert_eq!(
        step(&v, "draft")["evidence"]["artifacts"],
        Value::Array(vec![]),
        "{v}"
    );
    f.home.write_config(
        "[[fleet_matrix]]\ndomain = \"docs\"\ntask = \"write\"\ncli = \"exec\"\nevidence = \"\"\n",
    );
    let out = f.home.run(&["config", "show"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("needs its evidence"),
        "{stderr}"
    );
}

#[test]
/// The daemon dies just after a member's turn began, before the fleet
/// recorded it: the turn (its shim given its go once its pid was on disk
/// with the turn) runs on, is adopted by the restarted daemon, and its end
/// reaches the fleet: not run twice, no bounce. (Before the pid and the
/// turn shared a commit, the shim had no go yet at this point and the turn
/// was lost, then run again; the run's unit tests keep that path.)
fn a_crash_as_a_turn_starts_is_adopted_and_its_end_reaches_the_fleet_without_a_bounce() {
    let mut f = Fleet::new(SUPERVISOR);
    f.touch("write-it");
    f.home.signal_daemon("TERM");
    f.home
        .env
        .push(("FLOTILLA_TEST_CRASH_AT".into(), "fleet.turn-started".into()));
    f.home.spawn_daemon("h");
    let _ = f.home.run(&[
        "--json",
        "fleet",
        "start",
        "rep",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &f.file("sup.sh"),
        "--workers",
        "1",
        "--worker-cli",
        "exec",
        "--worker-cmd",
        &f.file("work.sh"),
        "-C",
        &f.dir.display().to_string(),
        "--task",
        &f.file("task.json"),
    ]);
    wait_until(
        "the daemon to crash at its point",
        Duration::from_secs(30),
        || !f.home.run(&["host", "status"]).status.success(),
    );
    f.home.env.retain(|(k, _)| k != "FLOTILLA_TEST_CRASH_AT");
    f.home.spawn_daemon("h");
    let v = f.wait_state("completed");
    let said = history(&f);
    assert!(
        !said.contains("was lost while the daemon was down"),
        "the turn was adopted, not lost: {said}"
    );
    assert!(!said.contains("bounced"), "no bounce: {said}");
    assert_eq!(
        member(&v, "supervisor")["turns"],
        2,
        "the adopted turn's end reached the fleet, which ran nothing twice: {v}"
    );
    assert_eq!(
        said.matches("step draft of worker-1 accepted").count(),
        1,
        "{said}"
    );
}

#[test]
fn bad_input_to_fleet_start_is_named_with_exit_2_and_starts_nothing() {
    let f = Fleet::new(SUPERVISOR);
    let dir = f.dir.display().to_string();
    let base = [
        "fleet",
        "start",
        "bad",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        "true",
        "--workers",
        "1",
        "--worker-cli",
        "exec",
        "-C",
        &dir,
    ];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [base, extra].concat()
    }
    let no_cmd = f.home.fails(&base, 2);
    assert!(
        no_cmd.contains("worker-1 runs exec and needs its command (--worker-cmd)"),
        "{no_cmd}"
    );
    let rotate = f.home.fails(
        &with(&base, &["--worker-cmd", "true", "--rotate-at", "0"]),
        2,
    );
    assert!(
        rotate.contains("--rotate-at must be a percentage"),
        "{rotate}"
    );
    let card = f.home.path().join("card.toml");
    std::fs::write(&card, "model_calls = 3\nwall_hours = -1\n").expect("card");
    let budget = f.home.fails(
        &with(
            &base,
            &[
                "--worker-cmd",
                "true",
                "--budget",
                &card.display().to_string(),
            ],
        ),
        2,
    );
    assert!(
        budget.contains("the budget card") && budget.contains("positive"),
        "{budget}"
    );
    let file = f.home.path().join("fleet.toml");
    std::fs::write(&file, "supervisor = \"exec\"\nworkerz = 2\n").expect("file");
    let fleet_file = f.home.fails(
        &[
            "fleet",
            "start",
            "bad",
            "--file",
            &file.display().to_string(),
        ],
        2,
    );
    assert!(
        fleet_file.contains("workerz") && fleet_file.contains(&file.display().to_string()),
        "{fleet_file}"
    );
    assert!(
        f.home.json(&["fleet", "list"])["fleets"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    assert_eq!(
        f.home.json(&["lane", "list", "--all"])["lanes"],
        Value::Array(vec![])
    );
}
