//! Routing through the hub end to end: a real hub and three real host
//! daemons on 127.0.0.1, each with its own home and certificate. Peers on
//! different hosts see and message each other only within their groups;
//! a message for a host that is offline waits at the hub, across a
//! `kill -9` of the hub, and arrives in order when the host returns; the
//! operator's roster at the hub and `roster --all` on a host show what each
//! may see.

use flotilla_tests::federation::{PATIENCE, Running, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::{TestHome, signal_child, stop_child, wait_until};
use serde_json::Value;

/// Starts `host`'s daemon as `name` and waits for its link.
pub(crate) fn start(host: &mut TestHome, name: &str) {
    host.spawn_daemon(name);
    wait_link(host, "the link to be up", |l| l["state"] == "connected");
}

fn visible(host: &TestHome, viewer: &str) -> Vec<String> {
    let peers = host.json(&["peers", "--as", viewer]);
    peers["peers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn wait_visible(host: &TestHome, viewer: &str, peer: &str) {
    wait_until(&format!("{viewer} to see {peer}"), PATIENCE, || {
        visible(host, viewer).iter().any(|p| p == peer)
    });
}

pub(crate) fn inbox(host: &TestHome, reader: &str) -> Vec<Value> {
    let reply = host.json(&["inbox", "--as", reader]);
    reply["messages"].as_array().cloned().unwrap_or_default()
}

pub(crate) fn bodies(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["body"].as_str().map(str::to_owned))
        .collect()
}

/// Waits until `reader` has received `n` messages in all; returns them.
pub(crate) fn collect(host: &TestHome, reader: &str, n: usize) -> Vec<Value> {
    let mut got = Vec::new();
    wait_until(
        &format!("{reader} to receive {n} message(s)"),
        PATIENCE,
        || {
            got.extend(inbox(host, reader));
            got.len() >= n
        },
    );
    got
}

pub(crate) fn outbox_states(host: &TestHome, sender: &str) -> Vec<String> {
    let reply = host.json(&["outbox", "--as", sender, "--limit", "1000"]);
    let mut out = Vec::new();
    for m in reply["messages"].as_array().into_iter().flatten() {
        for r in m["recipients"].as_array().into_iter().flatten() {
            out.push(format!(
                "{}={}",
                r["peer"].as_str().unwrap_or("?"),
                r["state"].as_str().unwrap_or("?")
            ));
        }
    }
    out
}

#[test]
fn peers_on_three_hosts_reach_each_other_only_within_their_groups() {
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut work = host_home(&hub, "work", &addr);
    let mut mac = host_home(&hub, "mac", &addr);
    start(&mut laptop, "laptop");
    start(&mut work, "work");
    start(&mut mac, "mac");
    laptop.ok(&["peer", "join", "lead", "-g", "proj"]);
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    mac.ok(&["peer", "join", "other", "-g", "solo"]);
    mac.ok(&["peer", "join", "tester", "-g", "proj"]);

    wait_visible(&laptop, "lead", "work/builder");
    wait_visible(&laptop, "lead", "mac/tester");
    assert!(!visible(&laptop, "lead").contains(&"mac/other".to_owned()));
    assert!(visible(&mac, "other").is_empty(), "solo sees nobody");

    // The same commands as on one host; names resolve across hosts.
    let sent = laptop.json(&["send", "--as", "lead", "--to", "builder", "hello builder"]);
    assert_eq!(sent["recipients"][0], "work/builder");
    let got = collect(&work, "builder", 1);
    assert_eq!(got[0]["from"], "laptop/lead");
    assert_eq!(got[0]["body"], "hello builder");
    let id = got[0]["id"].as_str().expect("id").to_owned();
    work.ok(&["reply", "--as", "builder", "--to-message", &id, "on it"]);
    assert_eq!(bodies(&collect(&laptop, "lead", 1)), ["on it"]);
    wait_until("the outbox to show the delivery", PATIENCE, || {
        outbox_states(&laptop, "lead") == ["work/builder=delivered"]
    });

    // Outside the groups: refused whole, nothing sent (exit 5).
    let refused = laptop.fails(&["send", "--as", "lead", "--to", "mac/other", "psst"], 5);
    assert!(refused.contains("mac/other"), "{refused}");
    let refused = laptop.fails(
        &[
            "send",
            "--as",
            "lead",
            "--to",
            "builder",
            "--to",
            "mac/other",
            "x",
        ],
        5,
    );
    assert!(refused.contains("nothing was sent"), "{refused}");
    assert!(inbox(&work, "builder").is_empty(), "all or nothing");

    // A broadcast reaches the group's members on every host, and no one else.
    laptop.ok(&["broadcast", "--as", "lead", "-g", "proj", "standup"]);
    assert_eq!(bodies(&collect(&work, "builder", 1)), ["standup"]);
    assert_eq!(bodies(&collect(&mac, "tester", 1)), ["standup"]);
    assert!(inbox(&mac, "other").is_empty());

    // Leaving a group is seen across the federation.
    work.ok(&["peer", "leave", "builder", "--force"]);
    wait_until("builder to vanish from lead's view", PATIENCE, || {
        !visible(&laptop, "lead").contains(&"work/builder".to_owned())
    });

    // What a host may see, and the operator's view at the hub.
    let all = laptop.json(&["roster", "--all"]);
    let ids: Vec<&str> = all["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"mac/tester") && !ids.contains(&"mac/other"),
        "{ids:?}"
    );
    let local = laptop.json(&["roster"]);
    assert_eq!(local["peers"].as_array().map(Vec::len), Some(1));
    let roster = hub.json(&["hub", "roster"]);
    assert_eq!(roster["schema"], "flotilla.hub-roster.v1");
    let hosts = roster["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 3);
    assert!(hosts.iter().all(|h| h["state"] == "online"), "{roster}");
    assert!(hosts.iter().all(|h| h["rtt_ms"].is_number()), "{roster}");
    // The human form: a table of hosts, then one of every peer.
    let table = hub.ok(&["hub", "roster"]);
    let host_rows = table
        .lines()
        .filter(|l| l.contains(" online ") && l.contains(" ms "))
        .count();
    assert_eq!(host_rows, 3, "{table}");
    assert!(
        table.contains("HOST") && table.contains("PEER") && table.contains("mac/tester"),
        "{table}"
    );
    stop_child(&mut server);
}

/// A hub (with `hub_server_extra` in its `[hub_server]`), `laptop` with
/// `lead` and `work` with `builder`, both in `proj`, once lead sees builder.
pub(crate) fn two_hosts(hub_server_extra: &str) -> (TestHome, Running, TestHome, TestHome) {
    two_hosts_with(hub_server_extra, "")
}

/// [`two_hosts`], with `laptop_extra` (top-level keys) in laptop's config.
pub(crate) fn two_hosts_with(
    hub_server_extra: &str,
    laptop_extra: &str,
) -> (TestHome, Running, TestHome, TestHome) {
    let (hub, addr) = hub_home();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    // [hub_server] is the last table `hub init` writes.
    hub.write_config(&format!("{config}{hub_server_extra}"));
    let server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut work = host_home(&hub, "work", &addr);
    let config = std::fs::read_to_string(laptop.path().join("config.toml")).expect("config");
    laptop.write_config(&format!("{laptop_extra}{config}"));
    start(&mut laptop, "laptop");
    start(&mut work, "work");
    laptop.ok(&["peer", "join", "lead", "-g", "proj"]);
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    wait_visible(&laptop, "lead", "work/builder");
    (hub, server, laptop, work)
}

/// [`two_hosts`], then `work` goes down; returns once laptop knows it is
/// offline.
fn offline_work(hub_server_extra: &str) -> (TestHome, Running, TestHome, TestHome) {
    let (hub, server, laptop, work) = two_hosts(hub_server_extra);
    work.ok(&["down"]);
    wait_until("the hub to mark work offline", PATIENCE, || {
        let roster = laptop.json(&["roster", "--all"]);
        roster["peers"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["id"] == "work/builder" && p["state"] == "offline")
    });
    (hub, server, laptop, work)
}

#[test]
fn messages_for_an_offline_host_wait_at_the_hub_through_a_kill_and_arrive_in_order() {
    let (hub, server, laptop, mut work) = offline_work("");
    let mut server = server;
    for i in 1..=5 {
        laptop.ok(&[
            "send",
            "--as",
            "lead",
            "--to",
            "work/builder",
            &format!("m{i}"),
        ]);
    }
    wait_until("the hub to hold all five", PATIENCE, || {
        outbox_states(&laptop, "lead")
            .iter()
            .filter(|s| s.ends_with("=queued"))
            .count()
            == 5
    });
    let roster = hub.json(&["hub", "roster"]);
    let work_view = roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["host"] == "work")
        .cloned()
        .expect("work in the roster");
    assert_eq!(work_view["state"], "offline");
    assert_eq!(work_view["queued"]["messages"], 5);

    // Acknowledged means on the hub's disk: a kill -9 loses nothing.
    signal_child(&mut server, "KILL");
    let mut server = run_hub(&hub);
    work.spawn_daemon("work");
    let got = collect(&work, "builder", 5);
    assert_eq!(bodies(&got), ["m1", "m2", "m3", "m4", "m5"]);
    let seqs: Vec<u64> = got.iter().filter_map(|m| m["seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    wait_until("the outbox to show five deliveries", PATIENCE, || {
        outbox_states(&laptop, "lead")
            .iter()
            .filter(|s| s.ends_with("=delivered"))
            .count()
            == 5
    });
    // Nothing is delivered twice, even after the hub's restart.
    assert!(inbox(&work, "builder").is_empty());
    stop_child(&mut server);
}

#[test]
fn a_full_queue_at_the_hub_is_an_error_the_sender_sees_at_once() {
    let (_hub, server, laptop, _work) = offline_work("queue_max_messages = 2\n");
    let mut server = server;
    for i in 1..=2 {
        let sent = laptop.json(&[
            "send",
            "--as",
            "lead",
            "--to",
            "work/builder",
            &format!("m{i}"),
        ]);
        assert_eq!(sent["remote"][0]["state"], "queued", "{sent}");
    }
    let refused = laptop.fails(&["send", "--as", "lead", "--to", "work/builder", "m3"], 5);
    assert!(refused.contains("full"), "{refused}");
    assert!(refused.contains("queue_max_messages"), "{refused}");
    // The hint names the sender, with this home, not a placeholder.
    let outbox = laptop.flotilla_cmd("outbox --as lead");
    assert!(refused.contains(&outbox), "{refused}");
    let states = outbox_states(&laptop, "lead");
    assert_eq!(
        states.iter().filter(|s| s.ends_with("=dropped")).count(),
        1,
        "{states:?}"
    );
    stop_child(&mut server);
}

#[test]
fn a_kill_of_the_hub_during_a_stream_loses_nothing_acknowledged() {
    let (hub, mut server, laptop, work) = two_hosts("");
    const COUNT: usize = 60;
    let sender = std::thread::scope(|scope| {
        let stream = scope.spawn(|| {
            // Every send is acknowledged (on laptop's disk) whatever the hub
            // does; a killed hub only delays the rest.
            for i in 1..=COUNT {
                laptop.ok(&[
                    "send",
                    "--as",
                    "lead",
                    "--to",
                    "work/builder",
                    &format!("s{i}"),
                ]);
            }
        });
        wait_until("the stream to be under way", PATIENCE, || {
            outbox_states(&laptop, "lead").len() >= COUNT / 4
        });
        signal_child(&mut server, "KILL");
        stream.join().is_ok()
    });
    assert!(sender, "every send was acknowledged");
    let _server = run_hub(&hub);
    let got = collect(&work, "builder", COUNT);
    let expected: Vec<String> = (1..=COUNT).map(|i| format!("s{i}")).collect();
    assert_eq!(bodies(&got), expected, "all of them, once, in order");
    wait_until("every recipient state to be delivered", PATIENCE, || {
        outbox_states(&laptop, "lead")
            .iter()
            .filter(|s| s.ends_with("=delivered"))
            .count()
            == COUNT
    });
}
