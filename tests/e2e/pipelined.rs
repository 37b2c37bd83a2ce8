//! The control protocol's pipelined mode and `flotilla send --batch`
//! (issue 11): answers by id in any order, a sequential client unaffected,
//! and a pipelined stream of 10,000 sends that survives `kill -9` of the
//! daemon, and of the hub and the sending daemon across hosts, with
//! nothing acknowledged lost, nothing stored twice and each sender's order
//! kept.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use flotilla_tests::federation::{host_home, hub_home, run_hub, wait_link};
use flotilla_tests::raw::RawClient;
use flotilla_tests::{TestHome, signal_child, wait_until};
use serde_json::{Value, json};

const STREAM: usize = 10_000;

#[test]
fn pipelined_requests_are_answered_by_id_in_any_order_and_sequential_clients_are_unaffected() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    for peer in ["a", "b", "idle"] {
        home.ok(&["peer", "join", peer, "-g", "t"]);
    }
    let stream = UnixStream::connect(home.socket_path()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    // A long poll first: it is answered only when a message comes for
    // `idle`, which is sent after every send behind it was answered.
    let wait = json!({"v": 1, "id": "wait", "op": "inbox.fetch", "pipeline": true,
        "args": {"as": "idle", "wait_ms": 60000}});
    let mut lines = format!("{wait}\n");
    for i in 0..200 {
        let send = json!({"v": 1, "id": i, "op": "send", "pipeline": true,
            "args": {"as": "a", "to": ["b"], "body": format!("p{i:03}")}});
        lines.push_str(&format!("{send}\n"));
    }
    writer.write_all(lines.as_bytes()).expect("write");
    // Meanwhile a client of the old kind is answered in order, as before.
    let mut old = RawClient::connect(&home.socket_path());
    let status = old.call("host.status", json!({})).expect("status");
    assert_eq!(status["ok"], json!(true), "{status}");

    let mut reader = BufReader::new(stream);
    let mut order = Vec::new();
    let mut read_answer = || {
        let mut line = String::new();
        reader.read_line(&mut line).expect("answer");
        let frame: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(frame["ok"], json!(true), "{frame}");
        frame
    };
    for _ in 0..200 {
        order.push(read_answer()["id"].clone());
    }
    assert!(!order.contains(&json!("wait")), "the long poll still waits");
    home.ok(&["send", "--as", "a", "--to", "idle", "wake up"]);
    let woken = read_answer();
    assert_eq!(woken["id"], json!("wait"), "{woken}");
    order.push(woken["id"].clone());
    let ids: BTreeSet<String> = order.iter().map(Value::to_string).collect();
    assert_eq!(ids.len(), 201, "every request answered once");
    let inbox = home.json(&["inbox", "--as", "b", "--limit", "1000"]);
    let bodies: Vec<&str> = inbox["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["body"].as_str())
        .collect();
    let sent: Vec<String> = (0..200).map(|i| format!("p{i:03}")).collect();
    assert_eq!(bodies, sent, "stored in the order sent");
}

/// Writes STREAM lines for `send --batch` to `to` (bodies `m00000`...).
fn batch_file(home: &TestHome, to: &str) -> std::path::PathBuf {
    let path = home.path().join("batch.jsonl");
    let mut text = String::new();
    for i in 0..STREAM {
        text.push_str(&format!(
            "{}\n",
            json!({"to": [to], "body": format!("m{i:05}")})
        ));
    }
    std::fs::write(&path, text).expect("batch");
    path
}

/// `send --as a --batch --json` from `file`, in the background.
fn start_batch(home: &TestHome, file: &std::path::Path) -> Child {
    home.command(&["send", "--as", "a", "--batch", "--json"])
        .stdin(std::fs::File::open(file).expect("file"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("batch")
}

/// Waits for the batch to end; every line was answered `ok`, once.
fn finish_batch(batch: Child) {
    let out = batch.wait_with_output().expect("batch");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let refused: Vec<&Value> = answers.iter().filter(|a| a["ok"] != json!(true)).collect();
    let first = refused.first();
    let count = refused.len();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{count} refused, first {first:?}; {stderr}"
    );
    assert_eq!(answers.len(), STREAM, "{stderr}");
    assert!(answers.iter().all(|a| a["ok"] == json!(true)));
}

/// How many messages `peer` of `home` has, without taking them.
fn waiting(home: &TestHome, peer: &str) -> u64 {
    let v = home.json(&["inbox", "--as", peer, "--peek", "--limit", "1"]);
    v["messages"].as_array().map_or(0, Vec::len) as u64 + v["remaining"].as_u64().unwrap_or(0)
}

/// Takes every message of `peer`: each body once, in the order sent.
fn assert_all_once_in_order(home: &TestHome, peer: &str) {
    let mut bodies = Vec::new();
    let mut seen = BTreeMap::new();
    for _ in 0..100 {
        let v = home.json(&["inbox", "--as", peer, "--limit", "1000"]);
        let messages = v["messages"].as_array().expect("messages");
        if messages.is_empty() {
            break;
        }
        for m in messages {
            let id = m["id"].as_str().expect("id").to_owned();
            assert!(seen.insert(id.clone(), ()).is_none(), "{id} stored twice");
            bodies.push(m["body"].as_str().expect("body").to_owned());
        }
    }
    let sent: Vec<String> = (0..STREAM).map(|i| format!("m{i:05}")).collect();
    assert_eq!(bodies.len(), STREAM, "nothing lost, nothing twice");
    assert!(bodies == sent, "the sender's order kept");
}

#[test]
fn a_daemon_killed_during_a_pipelined_stream_of_10000_sends_loses_and_repeats_nothing() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a", "-g", "t"]);
    home.ok(&["peer", "join", "b", "-g", "t"]);
    let file = batch_file(&home, "b");
    let batch = start_batch(&home, &file);
    wait_until(
        "the stream to be under way",
        Duration::from_secs(60),
        || waiting(&home, "b") >= 500,
    );
    home.kill_daemon();
    let stored = waiting_after_restart(&mut home);
    assert!(
        stored < STREAM as u64,
        "the kill landed mid-stream ({stored} stored)"
    );
    finish_batch(batch);
    assert_all_once_in_order(&home, "b");
}

/// Starts the daemon again; how many messages b had at that moment.
fn waiting_after_restart(home: &mut TestHome) -> u64 {
    home.spawn_daemon("h");
    waiting(home, "b")
}

#[test]
fn the_hub_and_the_sending_daemon_killed_during_a_pipelined_stream_lose_and_repeat_nothing() {
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut work = host_home(&hub, "work", &addr);
    laptop.spawn_daemon("laptop");
    work.spawn_daemon("work");
    for home in [&laptop, &work] {
        wait_link(home, "the link to be up", |l| l["state"] == "connected");
    }
    laptop.ok(&["peer", "join", "a", "-g", "t"]);
    work.ok(&["peer", "join", "b", "-g", "t"]);
    wait_until("a to see work/b", Duration::from_secs(30), || {
        laptop.ok(&["peers", "--as", "a"]).contains("work/b")
    });
    let file = batch_file(&laptop, "work/b");
    let batch = start_batch(&laptop, &file);
    wait_until("the stream to reach work", Duration::from_secs(60), || {
        waiting(&work, "b") >= 300
    });
    signal_child(&mut server, "KILL");
    let _server = run_hub(&hub);
    let before = waiting(&work, "b");
    assert!(
        before < STREAM as u64,
        "the hub died mid-stream ({before} arrived)"
    );
    wait_until(
        "the stream to go on through the new hub",
        Duration::from_secs(60),
        || waiting(&work, "b") > before + 300 || waiting(&work, "b") == STREAM as u64,
    );
    laptop.kill_daemon();
    laptop.spawn_daemon("laptop");
    finish_batch(batch);
    wait_until(
        "every message to reach work/b",
        Duration::from_secs(120),
        || waiting(&work, "b") >= STREAM as u64,
    );
    assert_all_once_in_order(&work, "b");
}

#[test]
fn a_client_that_stops_sending_still_gets_its_answers() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a", "-g", "t"]);
    home.ok(&["peer", "join", "b", "-g", "t"]);
    let mut stream = UnixStream::connect(home.socket_path()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut lines = String::new();
    for i in 0..50 {
        let send = json!({"v": 1, "id": i, "op": "send", "pipeline": true,
            "args": {"as": "a", "to": ["b"], "body": format!("h{i}")}});
        lines.push_str(&format!("{send}\n"));
    }
    stream.write_all(lines.as_bytes()).expect("write");
    stream
        .shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    let answers: Vec<Value> = BufReader::new(stream)
        .lines()
        .map(|l| serde_json::from_str(&l.expect("line")).expect("json"))
        .collect();
    // The connection ends as soon as the last answer is out (well before
    // the read timeout, and before the 30 s grace for requests in flight).
    assert_eq!(answers.len(), 50, "every request answered, then the end");
    assert!(answers.iter().all(|a| a["ok"] == json!(true)));
}
