//! Issue 13, point 7: what the hub holds for an offline host, against a
//! real hub. How long a message waits is measured on the hub's running
//! clock: the TTL was measured on the wall clock, so the hub's own downtime
//! counted against it (and a clock step forward expired whole queues); a
//! hub stopped for longer than its TTL with a message queued still
//! delivers it after its restart. And the deliveries pushed to a host that
//! comes back are bounded in bytes, not only in count: a queue of large
//! messages no longer overflows the link's outbound bound and cuts the
//! link of a host that reads.

use std::time::{Duration, Instant};

use flotilla_actors::federation::{Delivered, ForwardOutcome, Frame, RosterDelta};
use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub};
use flotilla_tests::{TestHome, stop_child, wait_until};

use crate::federation_rules::{forward, hub_peer_ids, liar_session_with, peer, verdict};
use crate::hub_receipts::{link_with_peer, next_delivery};

/// The state of `host` in the hub's roster.
fn state_of(hub: &flotilla_tests::TestHome, host: &str) -> String {
    let roster = hub.json(&["hub", "roster"]);
    roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["host"] == host)
        .and_then(|h| h["state"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A hub home with `setting` (`KEY = VALUE`) in its `[hub_server]`.
fn hub_with(setting: &str) -> (TestHome, String) {
    let (hub, addr) = hub_home();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    let config = config.replace("[hub_server]\n", &format!("[hub_server]\n{setting}\n"));
    assert!(config.contains(setting), "{config}");
    hub.write_config(&config);
    (hub, addr)
}

/// A hub with `setting` holding `body` from laptop/lead for work/builder
/// (work offline), then stopped; returns the hub, its address, the two
/// host homes and the runtime the links ran on.
fn queued_for_offline_work_then_stopped(
    setting: &str,
    body: &str,
) -> (
    TestHome,
    String,
    TestHome,
    TestHome,
    tokio::runtime::Runtime,
) {
    let (hub, addr) = hub_with(setting);
    let mut server = run_hub(&hub);
    let (laptop, work) = (
        host_home(&hub, "laptop", &addr),
        host_home(&hub, "work", &addr),
    );
    // Two workers: QUIC's connections keep moving while the test waits.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let recipient = link_with_peer(&work, &addr, "work/builder").await;
        let mut sender = link_with_peer(&laptop, &addr, "laptop/lead").await;
        wait_until("both peers at the hub", PATIENCE, || {
            let ids = hub_peer_ids(&hub);
            ids.contains(&"laptop/lead".to_owned()) && ids.contains(&"work/builder".to_owned())
        });
        drop(recipient);
        wait_until("work offline at the hub", PATIENCE, || {
            state_of(&hub, "work") == "offline"
        });
        let queued = forward("laptop/lead", "work/builder", None, body);
        assert_eq!(verdict(&mut sender, queued).await, ForwardOutcome::Queued);
    });
    stop_child(&mut server);
    (hub, addr, laptop, work, runtime)
}

#[test]
fn issue_13_the_hubs_downtime_does_not_count_against_the_ttl() {
    let ttl = Duration::from_secs(2);
    let (hub, addr, _laptop, work, runtime) =
        queued_for_offline_work_then_stopped("queue_ttl_secs = 2", "waits");
    // The hub is down for longer than its TTL (the wall clock moves on).
    let stopped = Instant::now();
    wait_until("the hub down past its TTL", PATIENCE, || {
        stopped.elapsed() > ttl + Duration::from_secs(1)
    });
    let _server = run_hub(&hub);
    runtime.block_on(async {
        let mut recipient = link_with_peer(&work, &addr, "work/builder").await;
        let got = next_delivery(&mut recipient).await;
        assert_eq!(got.message.body, "waits", "still queued after the restart");
    });
}

/// Issue 13, point 3: the hub's delivery window counted messages only, so
/// a host coming back to a queue of large messages was pushed more than
/// its link's outbound bound at once, and the hub cut its link as one that
/// does not read, again at every link.
#[test]
fn issue_13_a_queue_of_large_messages_is_delivered_within_the_links_byte_bound() {
    let (hub, addr) = hub_with("link_queue_bytes = 1048576");
    let _server = run_hub(&hub);
    let (laptop, work) = (
        host_home(&hub, "laptop", &addr),
        host_home(&hub, "work", &addr),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let bodies: Vec<String> = (0..8)
        .map(|n| format!("{n}{}", "x".repeat(300 * 1024)))
        .collect();
    runtime.block_on(async {
        let recipient = link_with_peer(&work, &addr, "work/builder").await;
        let mut sender = link_with_peer(&laptop, &addr, "laptop/lead").await;
        wait_until("both peers at the hub", PATIENCE, || {
            let ids = hub_peer_ids(&hub);
            ids.contains(&"laptop/lead".to_owned()) && ids.contains(&"work/builder".to_owned())
        });
        drop(recipient);
        wait_until("work offline at the hub", PATIENCE, || {
            state_of(&hub, "work") == "offline"
        });
        // 2.4 MiB for work, more than twice its link's bound.
        for body in &bodies {
            let message = forward("laptop/lead", "work/builder", None, body);
            assert_eq!(verdict(&mut sender, message).await, ForwardOutcome::Queued);
        }
        // Work reads, through small QUIC windows, and acknowledges each.
        let mut transport = quinn::TransportConfig::default();
        transport.stream_receive_window(quinn::VarInt::from_u32(64 * 1024));
        transport.receive_window(quinn::VarInt::from_u32(128 * 1024));
        let mut recipient = liar_session_with(&work, "work", &addr, Some(transport)).await;
        let roster = RosterDelta {
            reset: true,
            upserts: vec![peer("work/builder", &["proj"])],
            removed: Vec::new(),
        };
        recipient
            .send(&Frame::RosterDelta(roster))
            .await
            .expect("roster");
        for body in &bodies {
            let got = next_delivery(&mut recipient).await;
            assert_eq!(&got.message.body[..1], &body[..1], "in order");
            let done = Delivered {
                seq: got.seq,
                id: got.message.id.clone(),
                gone: Vec::new(),
            };
            recipient.send(&Frame::Delivered(done)).await.expect("ack");
        }
    });
    let log = std::fs::read_to_string(hub.path().join("logs/hub.log")).unwrap_or_default();
    assert!(!log.contains("does not read"), "work's link was not cut");
}

/// Issue 13, point 3: the hub kept the roster and queue of a host that
/// never came back forever. With `forget_hosts_after_secs`, a hub that
/// starts (or sweeps) after that long forgets it, and says so in its log.
#[test]
fn issue_13_a_host_away_past_the_retention_is_forgotten() {
    let (hub, _addr, _laptop, _work, _runtime) =
        queued_for_offline_work_then_stopped("forget_hosts_after_secs = 2", "never taken");
    let stopped = Instant::now();
    wait_until("work away past the retention", PATIENCE, || {
        stopped.elapsed() > Duration::from_secs(3)
    });
    let _server = run_hub(&hub);
    wait_until("the hub to answer", PATIENCE, || {
        hub.run(&["hub", "roster", "--json"]).status.success()
    });
    wait_until("the hub to forget work", PATIENCE, || {
        state_of(&hub, "work").is_empty()
    });
    assert!(!hub_peer_ids(&hub).contains(&"work/builder".to_owned()));
    let log = std::fs::read_to_string(hub.path().join("logs/hub.log")).unwrap_or_default();
    assert!(
        log.contains("forgot a host") && log.contains("work"),
        "the operator reads it in the hub's log"
    );
}
