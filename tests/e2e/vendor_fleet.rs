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

/// A daemon with a fleet `lead` (a claude supervisor, an exec worker that
/// writes report.md) started with `extra` flags, ended; `None` without
/// claude.
fn lead(replies: Vec<Reply>, extra: &[&str]) -> Option<(ModelServer, TestHome, Value)> {
    let server = ModelServer::start(Script::new(replies));
    let env = VendorEnv::new(&server);
    env.bin(CliKind::Claude)?;
    let home = start_lead(&env, extra);
    let v = ended(&home);
    Some((server, home, v))
}

/// A daemon in `env` with the fleet `lead` started with `extra` flags.
fn start_lead(env: &VendorEnv, extra: &[&str]) -> TestHome {
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
    let mut args = vec![
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
    ];
    args.extend_from_slice(extra);
    home.json(&args);
    home
}

/// The fleet `lead`'s status once its task ended.
fn ended(home: &TestHome) -> Value {
    let mut v = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(120), || {
        v = home.json(&["fleet", "status", "lead"]);
        v["state"] != "running"
            && !v["paused_reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("usage wall") || r.starts_with("offline:"))
    });
    v
}

const DONE: &str = "```json\n{\"done\": true}\n```";

#[test]
fn a_claude_supervisor_leads_an_exec_worker_to_a_completed_task() {
    let replies = vec![Reply::text(PLAN), Reply::text(DONE)];
    let Some((server, _home, v)) = lead(replies, &[]) else {
        return;
    };
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

/// The supervisor's model requests after the first: the note request,
/// then its successor's first turn.
fn rotated(note: &str) -> Option<(String, String, Value)> {
    let replies = vec![Reply::text(PLAN), Reply::text(note), Reply::text(DONE)];
    let (server, home, v) = lead(replies, &["--rotate-at", "0.0001"])?;
    assert_eq!(v["state"], "completed", "{v}");
    let asked = server.model_requests();
    assert_eq!(asked.len(), 3, "plan, note, done");
    let history = home.json(&["fleet", "history", "lead"]);
    Some((
        asked[1].body.to_string(),
        asked[2].body.to_string(),
        history,
    ))
}

#[test]
fn a_claude_supervisor_past_its_threshold_hands_over_its_note_to_a_fresh_session() {
    let note = "## Done\nNOTE-MARK planned the draft\n## In progress\nnothing\n## Next\nsay done";
    let Some((ask, successor, history)) = rotated(note) else {
        return;
    };
    assert!(ask.contains("handoff note"), "{ask}");
    assert!(
        successor.contains("NOTE-MARK planned the draft"),
        "{successor}"
    );
    assert!(
        successor.contains("your predecessor in this role"),
        "{successor}"
    );
    assert!(
        !successor.contains("You are the supervisor of a fleet"),
        "the successor is a fresh session, not the old conversation: {successor}"
    );
    assert_eq!(history["handoffs"][0]["role"], "supervisor", "{history}");
    assert_eq!(
        history["handoffs"][0]["note"]["from_member"], true,
        "{history}"
    );
}

#[test]
fn a_claude_supervisor_that_writes_no_note_is_succeeded_with_the_daemons_skeleton() {
    let Some((_, successor, history)) = rotated("I would rather keep going.") else {
        return;
    };
    assert!(successor.contains("left no note"), "{successor}");
    assert!(successor.contains("## Next"), "{successor}");
    assert_eq!(
        history["handoffs"][0]["note"]["from_member"], false,
        "{history}"
    );
}

fn too_many() -> Reply {
    Reply::HttpError {
        status: 429,
        message: "WALL-MARK: rate limited".into(),
    }
}

#[test]
fn a_claude_supervisor_at_a_rate_limit_moves_to_the_next_model_of_its_chain() {
    let replies = vec![too_many(), Reply::text(PLAN), Reply::text(DONE)];
    let flags = ["--supervisor-fallback", "claude-fallback-mark"];
    let Some((server, home, v)) = lead(replies, &flags) else {
        return;
    };
    assert_eq!(v["state"], "completed", "{v}");
    let asked = server.model_requests();
    assert_eq!(asked.len(), 3, "the walled turn ran again, then the round");
    assert_eq!(asked[0].body["model"], default_model(CliKind::Claude));
    assert_eq!(
        asked[1].body["model"], "claude-fallback-mark",
        "moved down the chain"
    );
    assert!(
        v["steps"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["step"] != "plan")),
        "a wall is no bounce: {v}"
    );
    let history = home.json(&["fleet", "history", "lead"]).to_string();
    assert!(
        history.contains("moves to the model claude-fallback-mark"),
        "{history}"
    );
}

#[test]
fn a_claude_supervisor_at_a_rate_limit_with_no_chain_pauses_and_the_fleet_resumes_by_itself() {
    let replies = vec![too_many(), Reply::text(PLAN), Reply::text(DONE)];
    let Some((server, home, v)) = lead(replies, &["--wall-wait", "1s"]) else {
        return;
    };
    assert_eq!(v["state"], "completed", "{v}");
    assert_eq!(server.model_requests().len(), 3);
    let history = home.json(&["fleet", "history", "lead"]).to_string();
    assert!(
        history.contains("usage wall: supervisor hit rate_limited"),
        "{history}"
    );
    assert!(
        history.contains("the usage wall should have lifted"),
        "{history}"
    );
}

#[test]
fn a_claude_supervisor_at_a_wall_whose_reset_it_reports_resumes_at_that_reset() {
    let wall = Reply::HttpError {
        status: 429,
        message: "WALL-MARK: rate limited, try again in 1 seconds".into(),
    };
    let replies = vec![wall, Reply::text(PLAN), Reply::text(DONE)];
    // The fleet's own wall wait is ten minutes: only the reported reset
    // lets the task complete within the test's patience.
    let Some((server, home, v)) = lead(replies, &["--wall-wait", "10m"]) else {
        return;
    };
    assert_eq!(v["state"], "completed", "{v}");
    assert_eq!(server.model_requests().len(), 3);
    let history = home.json(&["fleet", "history", "lead"]).to_string();
    assert!(
        history.contains("at the reset its CLI reported"),
        "{history}"
    );
}

#[test]
fn a_claude_supervisor_whose_endpoint_is_down_waits_for_it_and_spends_no_bounce() {
    let gone = ModelServer::start(Script::default());
    let addr = gone.addr();
    let env = VendorEnv::new(&gone);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    drop(gone);
    let home = start_lead(&env, &[]);
    let mut v = Value::Null;
    wait_until(
        "the fleet to wait for the network",
        Duration::from_secs(120),
        || {
            v = home.json(&["fleet", "status", "lead"]);
            v["paused_reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("offline: supervisor's model endpoint"))
        },
    );
    assert_eq!(v["task_state"], "running", "waiting, not blocked: {v}");
    let server = ModelServer::start_at(
        addr,
        Script::new(vec![Reply::text(PLAN), Reply::text(DONE)]),
    );
    let v = ended(&home);
    assert_eq!(v["state"], "completed", "{v}");
    assert_eq!(
        server.model_requests().len(),
        2,
        "the failed turn ran once more, then the round"
    );
    assert!(
        v["steps"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["step"] != "plan")),
        "the failure offline is no bounce: {v}"
    );
    let history = home.json(&["fleet", "history", "lead"]).to_string();
    assert!(history.contains("answers again"), "{history}");
}

/// Plans one step without artifacts; done once it was accepted.
const STEP_SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [{"to": "worker-1", "step": "think", "prompt": "think it through"}]}' ;;
esac
"#;

/// Rotation that acts mid-turn: a real Claude Code worker's first model
/// call reports its context as it starts streaming (slowly); past
/// `--rotate-now-at` the daemon interrupts the turn, the worker hands over
/// its note, and a fresh session runs the same step again, which is then
/// accepted without a bounce. A successor's first turn is never cut.
#[test]
fn a_claude_worker_past_the_ceiling_mid_turn_is_cut_short_and_its_successor_runs_the_step_again() {
    let note = "## Done\nnothing yet\n## In progress\nCUT-MARK thinking\n## Next\nfinish";
    let replies = vec![
        Reply::Slow {
            text: "this answer is never finished because the turn is cut short".into(),
            chunk_delay: Duration::from_secs(2),
        },
        Reply::text(note),
        Reply::text("thought it through"),
    ];
    let server = ModelServer::start(Script::new(replies));
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    let sup = home.path().join("sup.sh");
    write_executable(&sup, STEP_SUPERVISOR);
    let task = home.path().join("task.json");
    std::fs::write(&task, r#"{"goal": "think it through"}"#).expect("task");
    let dir = env.workdir().display().to_string();
    let (sup, task) = (sup.display().to_string(), task.display().to_string());
    // Claude reports 0.0055% as a call starts and 0.0011% at its end: only
    // the figure mid-turn reaches the ceiling.
    home.json(&[
        "fleet",
        "start",
        "lead",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &sup,
        "--workers",
        "1",
        "--worker-cli",
        "claude",
        "-m",
        default_model(CliKind::Claude),
        "--rotate-at",
        "0.005",
        "--rotate-now-at",
        "0.005",
        "-C",
        &dir,
        "--task",
        &task,
    ]);
    let v = ended(&home);
    assert_eq!(v["state"], "completed", "{v}");
    assert_eq!(
        v["steps"][0]["bounces"], 0,
        "the cut turn is no bounce: {v}"
    );
    let history = home.json(&["fleet", "history", "lead"]);
    let said = history["decisions"].to_string();
    assert!(said.contains("mid-turn (cut at 0%)"), "{said}");
    assert!(said.contains("cut short for its context"), "{said}");
    assert_eq!(history["handoffs"][0]["role"], "worker-1", "{history}");
    assert_eq!(
        history["handoffs"][0]["note"]["from_member"], true,
        "{history}"
    );
    let asked = server.model_requests();
    assert_eq!(
        asked.len(),
        3,
        "the cut call, the note, the successor's call"
    );
    let successor = asked[2].body.to_string();
    assert!(successor.contains("CUT-MARK thinking"), "{successor}");
    assert!(
        successor.contains("Step think"),
        "the same step again: {successor}"
    );
    assert!(
        !successor.contains("this answer is never finished"),
        "a fresh session: {successor}"
    );
}
