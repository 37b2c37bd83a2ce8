//! `flotilla lane attach` (issue 9): a person steps into a lane. The real
//! Claude Code runs a lane's turn against the scripted model server, then
//! its own interactive session opens on the same native conversation in a
//! real terminal (tmux); a follow-up asked meanwhile waits for the person
//! to exit, then carries on from the conversation the person extended.
//! `--now` interrupts a running turn; a hold whose attach process dies
//! ends, across a daemon restart too; a fleet's held member gets its next
//! turn when the attach ends; the refusals have their exit codes.

use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::session::{Tmux, claude_state};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);

/// A daemon whose claude lanes answer from `server`, and the environment;
/// `None` when Claude Code is not installed (outside CI).
fn rig(server: &ModelServer) -> Option<(VendorEnv, TestHome)> {
    let env = VendorEnv::new(server);
    env.bin(CliKind::Claude)?;
    claude_state(&env);
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    Some((env, home))
}

/// Lane `r`'s first turn, with `FIRST-PROMPT-MARK`; its result.
fn first_turn(env: &VendorEnv, home: &TestHome) -> Value {
    let workdir = env.workdir().display().to_string();
    let model = default_model(CliKind::Claude);
    let args = [
        "lane",
        "run",
        "--cli",
        "claude",
        "-n",
        "r",
        "-m",
        model,
        "-C",
        &workdir,
        "--no-auto-archive",
        "--prompt",
        "FIRST-PROMPT-MARK",
    ];
    let v = home.json(&args);
    assert_eq!(v["status"], "completed", "{v}");
    v
}

/// `flotilla lane attach ARGS` in a terminal of its own.
fn attach_in_tmux(env: &VendorEnv, home: &TestHome, args: &[&str]) -> Tmux {
    let mut command = vec!["env".to_owned()];
    command.extend(env.env().into_iter().map(|(k, v)| format!("{k}={v}")));
    command.push("TERM=xterm-256color".into());
    command.extend([
        flotilla_tests::flotilla_bin().display().to_string(),
        "--home".into(),
        home.path().display().to_string(),
        "lane".into(),
        "attach".into(),
    ]);
    command.extend(args.iter().map(|a| (*a).to_owned()));
    Tmux::start(env.path(), &env.workdir(), &command)
}

fn held_by(home: &TestHome) -> Option<String> {
    let v = home.json(&["lane", "status", "r"]);
    v["held_by"].as_str().map(str::to_owned)
}

fn screen_shows(tmux: &Tmux, what: &str) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !tmux.capture().contains(what) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what:?} on the terminal:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn request_with(server: &ModelServer, mark: &str) -> Option<String> {
    server
        .model_requests()
        .iter()
        .map(|r| r.body.to_string())
        .find(|b| b.contains(mark))
}

/// The pid of the attach process holding lane `r`.
fn holder_pid(home: &TestHome) -> String {
    let who = held_by(home).expect("held");
    let at = who.find("(pid ").expect("a pid") + 5;
    who[at..].split(')').next().expect("pid").to_owned()
}

#[test]
fn a_person_steps_into_a_claude_lane_and_the_lane_carries_on_from_there() {
    let script = Script::new([Reply::text("FIRST-ANSWER")]).or_else(Reply::text("noted"));
    let server = ModelServer::start(script);
    let Some((env, home)) = rig(&server) else {
        return;
    };
    let first = first_turn(&env, &home);
    let session = first["native_session_id"].as_str().expect("session");

    // --print: the command, holding nothing.
    let plan = home.json(&["lane", "attach", "r", "--print"]);
    assert_eq!(plan["schema"], "flotilla.lane-attach.v1", "{plan}");
    assert_eq!(plan["held"], false);
    let argv: Vec<&str> = plan["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(argv[0].ends_with("claude"), "{plan}");
    assert!(
        argv.windows(2).any(|w| w == ["--resume", session]),
        "resumes the lane's session: {plan}"
    );
    assert!(
        !argv.iter().any(|a| a.contains("hook")),
        "no delivery: {plan}"
    );
    assert_eq!(plan["cwd"], env.workdir().display().to_string());
    let env_has = |k: &str, v: &str| {
        plan["env"]
            .as_array()
            .expect("env")
            .iter()
            .any(|p| p[0] == k && p[1] == v)
    };
    assert!(env_has("FLOTILLA_PEER", "r"), "the lane's identity: {plan}");
    assert_eq!(held_by(&home), None, "--print holds nothing");

    let tmux = attach_in_tmux(&env, &home, &["r"]);
    wait_until("the hold", PATIENCE, || held_by(&home).is_some());
    screen_shows(&tmux, "FIRST-ANSWER");

    // A follow-up waits for the person, with its number.
    let out = home.run(&["--json", "lane", "resume", "r", "--prompt", "AFTER-MARK"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let reply: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(reply["turn"], 2, "{reply}");
    assert!(stderr.contains("held by lane attach"), "{stderr}");
    // Someone else cannot step in meanwhile.
    let refused = home.fails(&["lane", "attach", "r"], 6);
    assert!(refused.contains("is held by lane attach (pid"), "{refused}");

    tmux.send_keys(&["PERSON-MARK please"]);
    screen_shows(&tmux, "PERSON-MARK please");
    tmux.send_keys(&["Enter"]);
    wait_until("the person's prompt at the model", PATIENCE, || {
        request_with(&server, "PERSON-MARK").is_some()
    });
    assert!(
        request_with(&server, "AFTER-MARK").is_none(),
        "the lane's turn waits while held"
    );
    let view = home.json(&["lane", "status", "r"]);
    assert_eq!(
        (view["phase"].as_str(), view["turns"].as_u64()),
        (Some("idle"), Some(1))
    );
    let person = request_with(&server, "PERSON-MARK").expect("request");
    assert!(
        person.contains("FIRST-PROMPT-MARK"),
        "the lane's conversation"
    );

    // The person leaves Claude Code: Ctrl-C twice (bounded).
    for _ in 0..10 {
        if tmux.capture().contains("carries on") {
            break;
        }
        tmux.send_keys(&["C-c"]);
        std::thread::sleep(Duration::from_millis(500));
    }
    screen_shows(&tmux, "lane r carries on");
    let result = home.json(&["lane", "wait", "r"]);
    assert_eq!(result["status"], "completed", "{result}");
    let after = request_with(&server, "AFTER-MARK").expect("the waiting turn ran");
    assert!(
        after.contains("PERSON-MARK"),
        "the lane carries on from the conversation the person extended"
    );
    assert_eq!(held_by(&home), None);
    drop(tmux);
}

fn slow() -> Reply {
    let text = (0..400)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    Reply::Slow {
        text,
        chunk_delay: Duration::from_millis(150),
    }
}

#[test]
fn attach_now_interrupts_the_turn_and_a_dead_attach_lets_go_even_across_a_restart() {
    let script = Script::new([Reply::text("FIRST-ANSWER"), slow()]).or_else(Reply::text("noted"));
    let server = ModelServer::start(script);
    let Some((env, mut home)) = rig(&server) else {
        return;
    };
    first_turn(&env, &home);
    home.ok(&["lane", "resume", "r", "--prompt", "talk slowly"]);
    server.wait_for_model_requests(2, PATIENCE);

    let tmux = attach_in_tmux(&env, &home, &["r", "--now"]);
    let out = home.run(&["--json", "lane", "wait", "r"]);
    let result: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (out.status.code(), result["status"].as_str()),
        (Some(130), Some("interrupted")),
        "{result}"
    );
    screen_shows(&tmux, "FIRST-ANSWER");
    assert!(held_by(&home).is_some());

    // The daemon restarts while the person works: the hold stays.
    home.kill_daemon();
    home.spawn_daemon("h");
    assert!(held_by(&home).is_some(), "kept while its holder lives");
    home.ok(&["lane", "resume", "r", "--prompt", "AFTER-MARK"]);

    // The attach process dies without releasing: the hold ends, the
    // waiting turn runs.
    let pid = holder_pid(&home);
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until("the hold to end", PATIENCE, || held_by(&home).is_none());
    let result = home.json(&["lane", "wait", "r"]);
    assert_eq!(result["status"], "completed", "{result}");
    assert!(request_with(&server, "AFTER-MARK").is_some());
    drop(tmux);
}

#[test]
fn attach_is_refused_with_a_reason_and_its_exit_code() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let err = home.fails(&["lane", "attach", "nope"], 4);
    assert!(err.contains("no lane named nope"), "{err}");
    home.ok(&[
        "lane", "run", "--cli", "exec", "-n", "x", "--prompt", "hi", "--", "cat",
    ]);
    let err = home.fails(&["lane", "attach", "x"], 2);
    assert!(err.contains("no interactive session that resumes"), "{err}");
    let err = home.fails(&["lane", "attach", "x", "--print"], 2);
    assert!(err.contains("runs exec"), "{err}");
    let err = home.fails(&["lane", "attach", "x", "--host", "far"], 2);
    assert!(err.contains("this host's lanes only"), "{err}");
}

/// A fleet's member held by a person is busy: the daemon's report to the
/// supervisor waits for the attach to end, then the fleet completes.
#[test]
fn a_fleet_member_held_by_a_person_gets_its_next_turn_when_the_attach_ends() {
    const PLAN: &str = r#"{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write report.md",
  "artifacts": [{"path": "report.md", "contains": ["Conclusion"]}]}]}"#;
    const DONE: &str = "```json\n{\"done\": true}\n```";
    let server = ModelServer::start(Script::new([Reply::text(PLAN)]).or_else(Reply::text(DONE)));
    let Some((env, home)) = rig(&server) else {
        return;
    };
    // The worker writes its report once the test says go (bounded: 60 s).
    let go = home.path().join("go");
    let work = home.path().join("work.sh");
    let script = format!(
        "#!/bin/sh\ncat >/dev/null\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\nprintf 'Conclusion: done\\n' > report.md\n",
        go.display()
    );
    flotilla_tests::write_executable(&work, &script);
    let task = home.path().join("task.json");
    std::fs::write(
        &task,
        r#"{"goal": "write the report", "artifacts": [{"path": "report.md"}]}"#,
    )
    .expect("task");
    let dir = env.workdir().display().to_string();
    let (work, task) = (work.display().to_string(), task.display().to_string());
    let model = default_model(CliKind::Claude);
    home.json(&[
        "fleet",
        "start",
        "lead",
        "--supervisor",
        "claude",
        "-m",
        model,
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
    let lane = |name: &str| {
        let out = home.run(&["--json", "lane", "status", name]);
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    wait_until("the worker's turn", PATIENCE, || {
        lane("lead-worker-1")["phase"] == "running"
    });
    wait_until("the supervisor's first turn to end", PATIENCE, || {
        lane("lead-supervisor")["phase"] == "idle"
    });

    let tmux = attach_in_tmux(&env, &home, &["lead-supervisor"]);
    wait_until("the hold", PATIENCE, || {
        lane("lead-supervisor")["held_by"].is_string()
    });
    std::fs::write(&go, "").expect("go");
    let waits = || {
        home.ok(&["lane", "events", "lead-supervisor"])
            .contains("turn 2 waits for the lane's hold to end")
    };
    wait_until("the supervisor's next turn to wait", PATIENCE, waits);
    let fleet = home.json(&["fleet", "status", "lead"]);
    assert_eq!(fleet["state"], "running", "{fleet}");
    assert!(
        request_with(&server, "was accepted").is_none(),
        "the report waits while the member is held"
    );
    assert_eq!(lane("lead-supervisor")["turns"], 1);

    for _ in 0..10 {
        if tmux.capture().contains("carries on") {
            break;
        }
        tmux.send_keys(&["C-c"]);
        std::thread::sleep(Duration::from_millis(500));
    }
    screen_shows(&tmux, "carries on");
    let mut fleet = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(120), || {
        fleet = home.json(&["fleet", "status", "lead"]);
        fleet["state"] != "running"
    });
    assert_eq!(fleet["state"], "completed", "{fleet}");
    assert!(request_with(&server, "was accepted").is_some());
    drop(tmux);
}
