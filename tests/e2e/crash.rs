//! Crashes: `kill -9` of the daemon while sends are in flight, and actors
//! made to fail while messages flow. Nothing acknowledged is lost and
//! nothing is stored twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_tests::raw::{RawClient, error_code};
use flotilla_tests::{TestHome, wait_until};
use serde_json::{Value, json};

const SENDERS: usize = 10;

/// Sends `ids` in order from `sender`, over one connection per attempt;
/// returns the ids the daemon acknowledged. With `retry`, transient failures
/// are retried with the same id until `deadline`; without, the first failure
/// ends the run.
fn send_all(
    socket: &std::path::Path,
    sender: &str,
    ids: &[String],
    retry: bool,
    deadline: Instant,
    on_ack: &(dyn Fn(&str) + Sync),
) -> Vec<String> {
    let mut acked = Vec::new();
    let mut client: Option<RawClient> = None;
    for id in ids {
        loop {
            if Instant::now() > deadline {
                return acked;
            }
            let c = match client.as_mut() {
                Some(c) => c,
                None => match RawClient::try_connect(socket) {
                    Some(c) => client.insert(c),
                    None if retry => {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    None => return acked,
                },
            };
            let args =
                json!({"as": sender, "to": ["reader"], "body": format!("body {id}"), "id": id});
            match c.call("send", args) {
                Ok(frame) if frame["ok"] == json!(true) => {
                    on_ack(id);
                    acked.push(id.clone());
                    break;
                }
                Ok(frame) if error_code(&frame) == "unavailable" && retry => continue,
                Ok(frame) => panic!("send {id} refused: {frame}"),
                Err(_) if retry => client = None,
                Err(_) => return acked,
            }
        }
    }
    acked
}

/// Every message in the reader's inbox: id to (sender, seq), panicking on a
/// duplicate id.
fn drain_inbox(home: &TestHome) -> BTreeMap<String, (String, u64)> {
    let mut seen = BTreeMap::new();
    for _ in 0..1000 {
        let v = home.json(&["inbox", "--as", "reader", "--limit", "500"]);
        let messages = v["messages"].as_array().expect("messages");
        if messages.is_empty() {
            return seen;
        }
        for m in messages {
            let id = m["id"].as_str().expect("id").to_owned();
            let entry = (
                m["from"].as_str().expect("from").to_owned(),
                m["seq"].as_u64().expect("seq"),
            );
            assert!(
                seen.insert(id.clone(), entry).is_none(),
                "message {id} delivered twice"
            );
        }
    }
    panic!("inbox never drained");
}

fn setup(home: &mut TestHome) {
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "reader", "-g", "load"]);
    for s in 0..SENDERS {
        home.ok(&["peer", "join", &format!("s{s}"), "-g", "load"]);
    }
}

fn batch(s: usize, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("s{s}-m{i:04}")).collect()
}

#[test]
fn kill_9_with_sends_in_flight_loses_no_acknowledged_message_and_stores_none_twice() {
    let mut home = TestHome::new();
    setup(&mut home);
    let socket = home.socket_path();
    let per_sender = 1000 / SENDERS;
    let total_acked = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(120);
    let threads: Vec<_> = (0..SENDERS)
        .map(|s| {
            let socket = socket.clone();
            let ids = batch(s, per_sender);
            let total = total_acked.clone();
            std::thread::spawn(move || {
                let count = |_: &str| {
                    total.fetch_add(1, Ordering::SeqCst);
                };
                let acked = send_all(&socket, &format!("s{s}"), &ids, false, deadline, &count);
                (ids, acked)
            })
        })
        .collect();
    wait_until(
        "some sends to be acknowledged",
        Duration::from_secs(60),
        || total_acked.load(Ordering::SeqCst) >= 200 || threads.iter().all(|t| t.is_finished()),
    );
    let status = home.signal_daemon("KILL");
    assert_eq!(status.code(), None, "killed by a signal");
    let results: Vec<(Vec<String>, Vec<String>)> = threads
        .into_iter()
        .map(|t| t.join().expect("sender"))
        .collect();
    let acked: usize = results.iter().map(|r| r.1.len()).sum();
    assert!(
        acked < 1000,
        "the kill must land while sends are in flight (all {acked} finished first)"
    );

    // The daemon comes back; every sender retries what it did not see
    // acknowledged, with the same ids, as a careful client does.
    home.spawn_daemon("h");
    let retry_deadline = Instant::now() + Duration::from_secs(120);
    for (s, (ids, done)) in results.iter().enumerate() {
        let rest: Vec<String> = ids
            .iter()
            .filter(|id| !done.contains(id))
            .cloned()
            .collect();
        let retried = send_all(
            &socket,
            &format!("s{s}"),
            &rest,
            true,
            retry_deadline,
            &|_| {},
        );
        assert_eq!(retried.len(), rest.len(), "every retry is accepted");
    }
    let inbox = drain_inbox(&home);
    for (_, done) in &results {
        for id in done {
            assert!(inbox.contains_key(id), "acknowledged message {id} was lost");
        }
    }
    assert_eq!(
        inbox.len(),
        SENDERS * per_sender,
        "each message exactly once"
    );
    // Sequence numbers per sender are distinct and follow the send order.
    for s in 0..SENDERS {
        let sender = format!("h/s{s}");
        let mut by_id: Vec<(&String, u64)> = inbox
            .iter()
            .filter(|(_, v)| v.0 == sender)
            .map(|(k, v)| (k, v.1))
            .collect();
        by_id.sort();
        let seqs: Vec<u64> = by_id.iter().map(|(_, seq)| *seq).collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "order per sender kept for {sender}"
        );
    }
}

#[test]
fn failing_actors_restart_while_messages_flow_and_nothing_acknowledged_is_lost() {
    let mut home = TestHome::new();
    setup(&mut home);
    let socket = home.socket_path();
    let per_sender = 60;
    let deadline = Instant::now() + Duration::from_secs(120);
    let acked_all = Arc::new(Mutex::new(BTreeSet::new()));
    let threads: Vec<_> = (0..SENDERS)
        .map(|s| {
            let socket = socket.clone();
            let acked_all = acked_all.clone();
            std::thread::spawn(move || {
                let record = |id: &str| {
                    acked_all.lock().expect("lock").insert(id.to_owned());
                };
                send_all(
                    &socket,
                    &format!("s{s}"),
                    &batch(s, per_sender),
                    true,
                    deadline,
                    &record,
                );
            })
        })
        .collect();
    let mut control = home.raw();
    let mut failures = 0;
    for actor in ["router", "registry", "router", "registry", "router"] {
        let before = acked_all.lock().expect("lock").len();
        wait_until("more messages to flow", Duration::from_secs(60), || {
            acked_all.lock().expect("lock").len() > before
                || threads.iter().all(|t| t.is_finished())
        });
        let frame = control
            .call("debug.fail", json!({"actor": actor}))
            .expect("debug.fail");
        if frame["ok"] == json!(true) {
            failures += 1;
        }
    }
    for t in threads {
        t.join().expect("sender");
    }
    assert!(failures >= 3, "the hooks fired");
    let acked = acked_all.lock().expect("lock").clone();
    assert_eq!(
        acked.len(),
        SENDERS * per_sender,
        "every send was eventually acknowledged"
    );
    let status: Value = home.json(&["host", "status"]);
    for name in ["router", "registry"] {
        let actor = status["actors"]
            .as_array()
            .expect("actors")
            .iter()
            .find(|a| a["name"] == name)
            .expect("actor");
        assert!(
            actor["restarts"].as_u64().expect("restarts") >= 1,
            "{name} was restarted: {actor}"
        );
    }
    wait_until("all actors running", Duration::from_secs(30), || {
        home.json(&["host", "status"])["actors"]
            .as_array()
            .expect("a")
            .iter()
            .all(|a| a["state"] == "running")
    });
    let inbox = drain_inbox(&home);
    assert_eq!(inbox.len(), acked.len(), "each message exactly once");
    assert!(acked.iter().all(|id| inbox.contains_key(id)));
}
