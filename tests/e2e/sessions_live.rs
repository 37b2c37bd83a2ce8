//! Live delivery into interactive Codex, Gemini CLI and Qwen Code sessions
//! (issue 8, point 3), each the real CLI in a real terminal (tmux) against
//! the scripted model server.
//!
//! Codex: a message to an idle session starts a turn with it (the relay
//! hands it over with `codex queue`); before the session's first turn it
//! comes with the first prompt. Gemini and Qwen: a message waits for the next hook point, the
//! next prompt (`BeforeAgent`, `UserPromptSubmit`) or the end of a running
//! turn (`AfterAgent`, `Stop`), which then goes on with it. A session
//! killed with SIGKILL leaves, with its relay.

use std::process::Command;
use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::session::{Tmux, session_command};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, process_running, wait_until};
use serde_json::{Value, json};

use crate::sessions::{PATIENCE, roster_peer};

fn carried(server: &ModelServer, mark: &str) -> bool {
    server
        .model_requests()
        .iter()
        .any(|r| r.body.to_string().contains(mark))
}

/// A session of `cli` named `s1` in group `team` next to peer `lead`, its
/// terminal, and its process id once it has joined.
struct Session {
    tmux: Tmux,
    pid: String,
}

fn start_session(
    home: &mut TestHome,
    env: &VendorEnv,
    cli: CliKind,
    model: &str,
    delivery: &str,
) -> Session {
    home.env.extend(env.env());
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    let mut command = session_command(env, home.path(), cli, "s1", "team", &["--model", model]);
    // A session started from a CI job's environment is still interactive
    // (Gemini CLI turns headless under these unless Flotilla removes them).
    command.splice(
        1..1,
        ["CI=true".to_owned(), "GITHUB_ACTIONS=true".to_owned()],
    );
    let tmux = Tmux::start(env.path(), &env.workdir(), &command);
    wait_until("the session peer", PATIENCE, || {
        roster_peer(home, "h/s1").is_some()
    });
    let peer = roster_peer(home, "h/s1").expect("peer");
    assert_eq!(peer["delivery"], delivery, "{peer}");
    let evidence: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("state/sessions/s1.json")).expect("evidence"),
    )
    .expect("json");
    let pid = evidence["pid"].as_u64().expect("pid").to_string();
    Session { tmux, pid }
}

/// SIGKILL to the CLI: the peer leaves and no Flotilla process of the
/// session is left.
fn kill_and_see_it_leave(home: &TestHome, session: Session, leftover: &str) {
    let killed = Command::new("kill")
        .args(["-9", &session.pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until("the session leaves", PATIENCE, || {
        roster_peer(home, "h/s1").is_none()
    });
    wait_until("nothing of the session left", PATIENCE, || {
        !process_running(leftover)
    });
    drop(session.tmux);
}

/// Waits for `cond` like [`wait_until`]; on a timeout the panic shows the
/// terminal and the session's relay log.
fn wait_in_session(home: &TestHome, tmux: &Tmux, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = std::fs::read_to_string(home.path().join("logs/session-s1.log")).unwrap_or_default();
    panic!(
        "timed out waiting for {what}\n--- terminal ---\n{}\n--- relay log ---\n{log}",
        tmux.capture()
    );
}

/// Types `text` into the session once its prompt is up, then Enter. With
/// `resubmit` (a CLI whose empty prompt shows `ready` again once a prompt
/// is taken), Enter is pressed again while it does not.
fn type_prompt(tmux: &Tmux, ready: &str, text: &str, resubmit: bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !tmux.capture().contains(ready) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for the CLI's prompt ({ready:?})\n--- terminal ---\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.send_keys(&[text]);
    wait_until("the typed text", PATIENCE, || tmux.capture().contains(text));
    // A TUI under load can take an Enter that follows typed text at once as
    // part of a paste: until the empty prompt is back, Enter again (an
    // Enter on an empty prompt does nothing). Bounded: three tries.
    if !resubmit {
        tmux.send_keys(&["Enter"]);
        return;
    }
    for _ in 0..3 {
        tmux.send_keys(&["Enter"]);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if tmux.capture().contains(ready) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Codex's review of new hooks, answered "trust all" on whichever of its
/// screens is up: under load the TUI can take "2" and Enter as one paste
/// and open the hook list instead, which has a "trust all" key of its own.
/// A key is sent again only if the screen still asks for it 20 s later; a
/// key that a slow TUI then took twice lands in the prompt and is erased.
/// Bounded to 90 s.
fn trust_codex_hooks(home: &TestHome, tmux: &Tmux) {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let mut last: Option<(&str, std::time::Instant)> = None;
    while std::time::Instant::now() < deadline {
        let screen = tmux.capture();
        let key = if screen.contains("t trust all") {
            "t"
        } else if screen.contains("enter details · esc close") {
            "Escape"
        } else if screen.contains("› 2. Trust all and continue") {
            "Enter"
        } else if screen.contains("Trust all and continue") {
            "2"
        } else {
            return erase_a_stray_key(tmux);
        };
        let repeat = last.is_some_and(|(k, at)| k == key && at.elapsed() < Duration::from_secs(20));
        if !repeat {
            tmux.send_keys(&[key]);
            last = Some((key, std::time::Instant::now()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_in_session(home, tmux, "the hooks trusted", || false);
}

/// Once the review is gone: a key the TUI took twice sits in the prompt
/// ("› 2"); it is erased until the empty prompt shows (bounded to 30 s).
fn erase_a_stray_key(tmux: &Tmux) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        let screen = tmux.capture();
        if screen.contains("Ask Codex") {
            return;
        }
        if screen.lines().any(|l| matches!(l.trim(), "› 2" | "› t")) {
            tmux.send_keys(&["BSpace"]);
            std::thread::sleep(Duration::from_millis(500));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Codex: its user trusts Flotilla's hooks once, in Codex's own review; a
/// message before the first turn comes with the first prompt, and one to
/// the idle session after it starts a turn (`codex queue`).
#[test]
fn an_idle_codex_session_is_woken_by_a_message() {
    let server = ModelServer::start(Script::default().or_else(Reply::text("noted")));
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Codex).is_none() {
        return;
    }
    let mut home = TestHome::new();
    // A model Codex announces no newer model for (no question at start).
    let session = start_session(&mut home, &env, CliKind::Codex, "gpt-4.1", "live");
    let relay = format!("{} hook relay", home.path().display());
    wait_until("the session's relay", PATIENCE, || process_running(&relay));
    wait_in_session(&home, &session.tmux, "Codex's review of new hooks", || {
        session.tmux.capture().contains("Trust all and continue")
    });
    trust_codex_hooks(&home, &session.tmux);

    home.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "s1",
        "CODEX-MARK-one from lead",
    ]);
    type_prompt(&session.tmux, "Ask Codex", "hello there", false);
    wait_in_session(
        &home,
        &session.tmux,
        "the message with the first prompt",
        || carried(&server, "CODEX-MARK-one"),
    );
    wait_in_session(&home, &session.tmux, "the first turn's end", || {
        session.tmux.capture().contains("noted")
    });
    home.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "s1",
        "CODEX-MARK-two from lead",
    ]);
    wait_in_session(
        &home,
        &session.tmux,
        "the message waking the idle session",
        || carried(&server, "CODEX-MARK-two"),
    );
    let inbox = home.json(&["inbox", "--as", "s1", "--peek"]);
    assert_eq!(inbox["messages"], json!([]), "acknowledged: {inbox}");
    let framed = server
        .model_requests()
        .iter()
        .any(|r| r.body.to_string().contains("from h/lead (sender verified"));
    assert!(framed, "framed with its verified sender");
    kill_and_see_it_leave(&home, session, &relay);
}

/// Gemini CLI and Qwen Code: a message to an idle session waits for the
/// next prompt and comes with it; one that arrives during a turn keeps the
/// turn going at its end.
fn next_turn_delivery(cli: CliKind, ready: &str) {
    let slow = Reply::Slow {
        text: "working on it now".into(),
        chunk_delay: Duration::from_millis(500),
    };
    let server = ModelServer::start(Script::default().or_else(slow));
    let env = VendorEnv::new(&server);
    if env.bin(cli).is_none() {
        return;
    }
    let mut home = TestHome::new();
    let session = start_session(&mut home, &env, cli, default_model(cli), "next-turn");
    home.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "s1",
        "NEXT-MARK-one from lead",
    ]);
    wait_in_session(&home, &session.tmux, "the CLI's prompt", || {
        session.tmux.capture().contains(ready)
    });
    let inbox = home.json(&["inbox", "--as", "s1", "--peek"]);
    assert_eq!(
        inbox["messages"].as_array().map(Vec::len),
        Some(1),
        "waits: {inbox}"
    );

    type_prompt(&session.tmux, ready, "hello there", true);
    wait_in_session(&home, &session.tmux, "the message with the prompt", || {
        carried(&server, "NEXT-MARK-one")
    });
    // The turn is still streaming its slow answer: a message now is handed
    // over at the turn's end, which goes on with it.
    home.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "s1",
        "NEXT-MARK-two from lead",
    ]);
    wait_in_session(
        &home,
        &session.tmux,
        "the message at the turn's end",
        || carried(&server, "NEXT-MARK-two"),
    );
    let inbox = home.json(&["inbox", "--as", "s1", "--peek"]);
    assert_eq!(inbox["messages"], json!([]), "acknowledged: {inbox}");
    let hook = format!("{} hook", home.path().display());
    kill_and_see_it_leave(&home, session, &hook);
}

#[test]
fn a_gemini_session_gets_messages_at_its_next_hook_point() {
    next_turn_delivery(CliKind::Gemini, "Type your message");
}

#[test]
fn a_qwen_session_gets_messages_at_its_next_hook_point() {
    next_turn_delivery(CliKind::Qwen, "Type your message");
}
