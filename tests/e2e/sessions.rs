//! Interactive session peers (issue 8, point 3): `flotilla peer claude`
//! runs the real Claude Code in a real terminal (tmux) against the scripted
//! model server, as a session peer of this host. A message sent to it while
//! it is idle wakes it (its next model request carries the message); when
//! its process is killed with SIGKILL the peer leaves and no hook process
//! is left behind. Names and flags it cannot take are refused before any
//! CLI starts.

use std::process::Command;
use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::session::{Tmux, claude_session_command, claude_state, session_command};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, process_running, wait_until};
use serde_json::{Value, json};

pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// Peer `id` in this host's roster, if it is there.
pub(crate) fn roster_peer(home: &TestHome, id: &str) -> Option<Value> {
    let roster = home.json(&["roster"]);
    roster["peers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["id"] == id)
        .cloned()
}

/// Issue 8, point 3 with Claude Code: live delivery into an idle session,
/// and a session that is killed leaves with its waiter.
#[test]
fn an_idle_claude_session_is_woken_by_a_message_and_leaves_when_killed() {
    let server = ModelServer::start(Script::default().or_else(Reply::text("noted")));
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    claude_state(&env);
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    let command = claude_session_command(&env, home.path(), "s1", "team");
    let tmux = Tmux::start(env.path(), &env.workdir(), &command);
    wait_until("the session peer", PATIENCE, || {
        roster_peer(&home, "h/s1").is_some()
    });
    let peer = roster_peer(&home, "h/s1").expect("peer");
    assert_eq!(peer["kind"], "session", "{peer}");
    assert_eq!(peer["delivery"], "live", "{peer}");
    let waiter = format!("{} hook wait", home.path().display());
    wait_until("the session's waiter", PATIENCE, || {
        process_running(&waiter)
    });

    home.ok(&["send", "--as", "lead", "--to", "s1", "PING-MARK from lead"]);
    let carried = || {
        server
            .model_requests()
            .iter()
            .any(|r| r.body.to_string().contains("PING-MARK"))
    };
    wait_until("the message in the model's next request", PATIENCE, carried);
    let inbox = home.json(&["inbox", "--as", "s1", "--peek"]);
    assert_eq!(
        inbox["messages"],
        json!([]),
        "handed over and acknowledged: {inbox}"
    );

    let evidence: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("state/sessions/s1.json")).expect("evidence"),
    )
    .expect("json");
    let pid = evidence["pid"].as_u64().expect("pid").to_string();
    let killed = Command::new("kill")
        .args(["-9", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until("the session leaves", PATIENCE, || {
        roster_peer(&home, "h/s1").is_none()
    });
    wait_until("no waiter left", PATIENCE, || !process_running(&waiter));
    drop(tmux);
}

/// A message sent while Claude Code runs a tool reaches the model in the
/// request that carries the tool's result, or the one after.
#[test]
fn a_message_during_a_claude_tool_call_joins_the_turn() {
    let sleep = Reply::Shell {
        command: "sleep 4".into(),
    };
    let server = ModelServer::start(
        Script::new([sleep])
            .tools_wait_for_offer()
            .or_else(Reply::text("noted")),
    );
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    claude_state(&env);
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    let model = default_model(CliKind::Claude);
    let args = ["--model", model, "--dangerously-skip-permissions"];
    let command = session_command(&env, home.path(), CliKind::Claude, "s1", "team", &args);
    let tmux = Tmux::start(env.path(), &env.workdir(), &command);
    wait_until("the session peer", PATIENCE, || {
        roster_peer(&home, "h/s1").is_some()
    });
    let deadline = std::time::Instant::now() + PATIENCE;
    while !tmux.capture().contains("bypass permissions on") {
        assert!(
            std::time::Instant::now() < deadline,
            "no prompt:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.send_keys(&["run the check"]);
    wait_until("the typed text", PATIENCE, || {
        tmux.capture().contains("run the check")
    });
    tmux.send_keys(&["Enter"]);
    let asked = |server: &ModelServer| {
        server
            .model_requests()
            .iter()
            .position(|r| r.body.to_string().contains("run the check"))
    };
    wait_until("the turn's first request", PATIENCE, || {
        asked(&server).is_some()
    });
    let first = asked(&server).expect("first");
    home.ok(&["send", "--as", "lead", "--to", "s1", "TOOL-MARK from lead"]);
    wait_until("the message in a later request", PATIENCE, || {
        server
            .model_requests()
            .iter()
            .any(|r| r.body.to_string().contains("TOOL-MARK"))
    });
    let requests = server.model_requests();
    let at = requests
        .iter()
        .position(|r| r.body.to_string().contains("TOOL-MARK"))
        .expect("carried");
    let tool_result = requests[first + 1..]
        .iter()
        .position(|r| r.body.to_string().contains("tool_result"))
        .map(|i| i + first + 1)
        .expect("the tool's result went back");
    assert!(
        at <= tool_result + 1,
        "in the tool's request ({tool_result}) or the next: {at}"
    );
    drop(tmux);
}

/// A session cannot take the name of an existing peer, nor a flag its CLI
/// lacks: refused before anything starts.
#[test]
fn a_session_that_cannot_start_is_refused_before_its_cli_runs() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead"]);
    let taken = home.fails(&["peer", "claude", "-n", "lead"], 6);
    assert!(taken.contains("already registered"), "{taken}");
    let no_resume = home.fails(&["peer", "grok", "-n", "g", "--resume", "x"], 2);
    assert!(no_resume.contains("resume"), "{no_resume}");
    let roster = home.json(&["roster"]);
    let ids: Vec<&str> = roster["peers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids, ["h/lead"], "{roster}");
}

/// The hooks' own contract, through the real binary: `drain` hands every
/// waiting message over once, framed with its verified sender, id and how
/// to reply, as the hook's additional context; `wait` hands one over on
/// stderr with exit 2; both acknowledge only what they wrote out.
#[test]
fn the_session_hooks_hand_each_message_over_once() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&["peer", "join", "s1", "-g", "team"]);
    let sent = home.json(&["send", "--as", "lead", "--to", "s1", "HOOK-MARK one"]);
    let id = sent["id"].as_str().expect("id").to_owned();
    let drained = home.ok(&["hook", "drain", "PostToolUse", "--as", "s1"]);
    let out: Value = serde_json::from_str(drained.trim()).expect("hook JSON");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(context.contains("HOOK-MARK one"), "{context}");
    assert!(
        context.contains("from h/lead") && context.contains(&id),
        "{context}"
    );
    assert!(context.contains("reply"), "{context}");
    let again = home.ok(&["hook", "drain", "PostToolUse", "--as", "s1"]);
    assert!(again.trim().is_empty(), "handed over once: {again}");

    home.ok(&["send", "--as", "lead", "--to", "s1", "HOOK-MARK two"]);
    let waited = home.run(&["hook", "wait", "--as", "s1"]);
    assert_eq!(waited.status.code(), Some(2), "a rewake");
    let stderr = String::from_utf8_lossy(&waited.stderr);
    assert!(stderr.contains("HOOK-MARK two"), "{stderr}");
    let inbox = home.json(&["inbox", "--as", "s1"]);
    assert_eq!(inbox["messages"], json!([]), "{inbox}");

    // A turn's end: nothing waiting lets it end; a waiting message keeps it
    // going, as the reason of a `block` decision.
    let idle = home.ok(&["hook", "stop", "Stop", "--as", "s1"]);
    assert!(idle.trim().is_empty(), "{idle}");
    home.ok(&["send", "--as", "lead", "--to", "s1", "HOOK-MARK three"]);
    let stopped = home.ok(&["hook", "stop", "AfterAgent", "--as", "s1"]);
    let out: Value = serde_json::from_str(stopped.trim()).expect("hook JSON");
    assert_eq!(out["decision"], "block");
    let reason = out["reason"].as_str().expect("reason");
    assert!(
        reason.contains("HOOK-MARK three") && reason.contains("from h/lead"),
        "{reason}"
    );

    // Codex's hooks record the session's thread from their input.
    let input = br#"{"session_id": "01a2-bc", "hook_event_name": "Stop"}"#;
    let recorded = home.run_with_stdin(
        &["hook", "stop", "Stop", "--as", "s1", "--record-thread"],
        input,
    );
    assert_eq!(recorded.status.code(), Some(0));
    let thread = std::fs::read_to_string(home.path().join("run/sessions/s1.codex-thread"))
        .expect("the recorded thread");
    assert_eq!(thread, "01a2-bc");
    // Input that is not a hook's (junk, a forged id) records nothing, and
    // the hook still answers without failing the CLI.
    home.ok(&["send", "--as", "lead", "--to", "s1", "HOOK-MARK four"]);
    for junk in [&b"not json"[..], br#"{"session_id": "../../etc"}"#] {
        let out = home.run_with_stdin(
            &[
                "hook",
                "drain",
                "PostToolUse",
                "--as",
                "s1",
                "--record-thread",
            ],
            junk,
        );
        assert_eq!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stderr).contains("flotilla hook"));
    }
    let thread = std::fs::read_to_string(home.path().join("run/sessions/s1.codex-thread"))
        .expect("the recorded thread");
    assert_eq!(thread, "01a2-bc", "kept");
    let inbox = home.json(&["inbox", "--as", "s1"]);
    assert_eq!(
        inbox["messages"],
        json!([]),
        "handed over all the same: {inbox}"
    );
}

/// A waiter for a name that is not a peer here (a session that left, a
/// typo in a hand-written hook) ends at once with a note instead of
/// waiting for a day.
#[test]
fn a_hook_for_an_unknown_peer_ends_at_once() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let mut waiter = home
        .command(&["hook", "wait", "--as", "ghost"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the waiter");
    let mut status = None;
    wait_until("the waiter to end", Duration::from_secs(20), || {
        status = waiter.try_wait().expect("try_wait");
        status.is_some()
    });
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "never fails the hook"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut waiter.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert!(stderr.contains("ghost"), "{stderr}");
    let drained = home.run(&["hook", "drain", "PostToolUse", "--as", "ghost"]);
    assert_eq!(drained.status.code(), Some(0));
    assert!(drained.stdout.is_empty());
}

/// A daemon crash between hand-over and acknowledgement: the hook wrote the
/// message out, the acknowledgement never arrived, so the message is
/// handed over again after the restart, once. The hook's output is larger
/// than a pipe holds, so the hook is caught mid-write (after its fetch,
/// before its acknowledgement) while the daemon is killed.
#[test]
fn a_daemon_crash_before_the_acknowledgement_hands_the_message_over_again_once() {
    use std::io::Read;
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&["peer", "join", "s1", "-g", "team"]);
    let body = format!("CRASH-MARK {}", "x".repeat(256 * 1024));
    let sent = home.run_with_stdin(
        &["send", "--as", "lead", "--to", "s1", "-", "--json"],
        body.as_bytes(),
    );
    assert!(sent.status.success(), "{sent:?}");
    let mut hook = home
        .command(&["hook", "drain", "PostToolUse", "--as", "s1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the hook");
    let mut stdout = hook.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    stdout
        .read_exact(&mut first)
        .expect("the hook's first byte");
    home.kill_daemon();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).expect("the rest");
    let status = hook.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "never fails the CLI's hook");
    assert!(String::from_utf8_lossy(&rest).contains("CRASH-MARK"));

    home.spawn_daemon("h");
    let again = home.ok(&["hook", "drain", "PostToolUse", "--as", "s1"]);
    assert!(again.contains("CRASH-MARK"), "handed over again");
    let once = home.ok(&["hook", "drain", "PostToolUse", "--as", "s1"]);
    assert!(once.trim().is_empty(), "only once: {}", once.len());
}
