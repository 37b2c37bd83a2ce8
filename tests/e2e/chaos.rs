//! Issue 13, point 9, chaos: a host frozen with SIGSTOP for longer than
//! the hub's grace (its link's idle timeout) is marked offline and its
//! link closed; messages sent to it meanwhile wait at the hub; after
//! SIGCONT it links again and gets each of them once, in order. And
//! `kill -9` of the sending host, then of the receiving one, while a
//! stream of messages crosses: each arrives once, in order.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use flotilla_tests::federation::PATIENCE;
use flotilla_tests::{flotilla_bin, signal, wait_until};

use crate::federation::{bodies, collect, inbox, outbox_states, two_hosts};

#[test]
fn a_host_frozen_past_the_hubs_grace_gets_its_messages_once_when_it_thaws() {
    let (hub, _server, laptop, work) = two_hosts("");
    let frozen = work.daemon_pid();
    signal(frozen, "STOP");
    let work_state = || {
        let roster = hub.json(&["hub", "roster"]);
        roster["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|h| h["host"] == "work")
            .map(|h| h["state"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    // The link's idle timeout is 30 s: past it the hub lets work go.
    let grace = PATIENCE + std::time::Duration::from_secs(30);
    wait_until("the hub to let frozen work go", grace, || {
        work_state() == "offline"
    });
    for i in 1..=3 {
        laptop.ok(&[
            "send",
            "--as",
            "lead",
            "--to",
            "work/builder",
            &format!("f{i}"),
        ]);
    }
    signal(frozen, "CONT");
    let got = collect(&work, "builder", 3);
    assert_eq!(bodies(&got), ["f1", "f2", "f3"]);
    wait_until("work online again", PATIENCE, || work_state() == "online");
    assert!(inbox(&work, "builder").is_empty(), "each once");
}

const STREAM: usize = 60;

/// Sends `c0..c59` from laptop/lead to work/builder in order, each retried
/// with its id until the daemon acknowledges it (a careful client: the
/// daemon may be down for a while); counts acknowledgements in `acked`.
fn stream(home: std::path::PathBuf, acked: Arc<AtomicUsize>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        for i in 0..STREAM {
            let id = format!("c{i}");
            while Instant::now() < deadline {
                let sent = Command::new(flotilla_bin())
                    .arg("--home")
                    .arg(&home)
                    .args([
                        "send",
                        "--as",
                        "lead",
                        "--to",
                        "work/builder",
                        "--id",
                        &id,
                        &id,
                    ])
                    .env_remove("FLOTILLA_HOME")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if sent {
                    acked.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    })
}

#[test]
fn kill_9_of_the_sending_then_the_receiving_host_mid_stream_delivers_each_once_in_order() {
    let (_hub, _server, mut laptop, mut work) = two_hosts("");
    let acked = Arc::new(AtomicUsize::new(0));
    let sender = stream(laptop.path().to_owned(), acked.clone());
    let at = |n: usize| {
        wait_until(&format!("{n} sends acknowledged"), PATIENCE, || {
            acked.load(Ordering::SeqCst) >= n
        })
    };
    at(15);
    laptop.kill_daemon();
    // Read while the sender's daemon is down: nothing more is acknowledged.
    let partial = acked.load(Ordering::SeqCst);
    laptop.spawn_daemon("laptop");
    at(35);
    work.kill_daemon();
    work.spawn_daemon("work");
    sender.join().expect("the sender");
    assert!(
        partial < STREAM,
        "the kills landed mid-stream ({partial} acknowledged)"
    );
    assert_eq!(
        acked.load(Ordering::SeqCst),
        STREAM,
        "every message acknowledged"
    );
    let got = collect(&work, "builder", STREAM);
    let want: Vec<String> = (0..STREAM).map(|i| format!("c{i}")).collect();
    assert_eq!(bodies(&got), want, "each once, in the order sent");
    wait_until("every receipt", PATIENCE, || {
        outbox_states(&laptop, "lead")
            .iter()
            .all(|s| s.ends_with("=delivered"))
    });
    assert!(inbox(&work, "builder").is_empty(), "nothing came twice");
}

#[test]
fn kill_9_of_the_daemon_then_the_turn_ends_while_it_is_down_is_completed_once() {
    let mut home = crate::lanes::daemon();
    let go = home.path().join("go");
    let script = format!(
        "echo before; while [ ! -e '{}' ]; do sleep 0.05; done; echo after",
        go.display()
    );
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "gap", "--", "sh", "-c", &script,
    ]);
    wait_until("the first output", PATIENCE, || {
        let out = home.run(&["lane", "events", "gap"]);
        String::from_utf8_lossy(&out.stdout).contains("message: before")
    });
    home.kill_daemon();
    std::fs::write(&go, "").expect("let the turn end");
    let turn = home.path().join("state/lanes/gap/turn-1");
    wait_until("the turn to end with no daemon", PATIENCE, || {
        std::fs::read_dir(&turn)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("exit"))
    });
    home.spawn_daemon("h");
    let (c, v) = crate::lanes::code(&home, &["lane", "wait", "gap"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["status"], "completed", "{v}");
    assert_eq!(v["result"], "before\nafter", "nothing lost or repeated");
    let events = home.ok(&["--json", "lane", "events", "gap"]);
    let ends = events
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "turn.completed")
        .count();
    assert_eq!(ends, 1, "the turn ends once: {events}");
}
