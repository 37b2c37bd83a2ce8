//! Issue 13, point 7, the hub's side of receipts: a forward repeated by its
//! sender's host (it never got the hub's answer) is answered as the first
//! one was and is delivered once, whether the message still waits in a
//! full queue or was delivered already. Two hosts speak frames directly
//! with valid certificates ("liars" of the hub's tests): the sender, and a
//! recipient that acknowledges deliveries only when the test says so.

use flotilla_actors::federation::{
    Delivered, Forward, ForwardOutcome, Frame, ReceiptState, RosterDelta,
};
use flotilla_hub::HubSession;
use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub};
use flotilla_tests::wait_until;

use crate::federation_rules::{forward, hub_peer_ids, liar_session, peer, verdict};

/// A hub with `extra` in its `[hub_server]`, running, and a sender
/// (`laptop/lead`) and recipient (`work/builder`) linked to it, both in
/// `proj`; `run` gets the two sessions.
fn with_two_liars(extra: &str, run: impl AsyncFnOnce(HubSession, HubSession)) {
    let (hub, addr) = hub_home();
    with_two_liars_at(hub, &addr, extra, run);
}

/// [`with_two_liars`] with a hub home made (and its environment set) by
/// the caller.
fn with_two_liars_at(
    hub: flotilla_tests::TestHome,
    addr: &str,
    extra: &str,
    run: impl AsyncFnOnce(HubSession, HubSession),
) {
    let addr = addr.to_owned();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    let config = config.replace("[hub_server]\n", &format!("[hub_server]\n{extra}"));
    assert!(config.contains(extra), "{config}");
    hub.write_config(&config);
    let _server = run_hub(&hub);
    let (laptop, work) = (
        host_home(&hub, "laptop", &addr),
        host_home(&hub, "work", &addr),
    );
    // Two workers: QUIC's connections keep moving while the test waits
    // on the hub's roster.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let sender = link_with_peer(&laptop, &addr, "laptop/lead").await;
        let recipient = link_with_peer(&work, &addr, "work/builder").await;
        wait_until("both peers at the hub", PATIENCE, || {
            let ids = hub_peer_ids(&hub);
            ids.contains(&"laptop/lead".to_owned()) && ids.contains(&"work/builder".to_owned())
        });
        run(sender, recipient).await;
    });
}

/// Links as the host of `peer` (in `proj`) and reports that peer.
pub(crate) async fn link_with_peer(
    home: &flotilla_tests::TestHome,
    addr: &str,
    peer_id: &str,
) -> HubSession {
    let host = peer_id.split('/').next().unwrap_or(peer_id);
    let mut session = liar_session(home, host, addr).await;
    let roster = RosterDelta {
        reset: true,
        upserts: vec![peer(peer_id, &["proj"])],
        removed: Vec::new(),
    };
    session
        .send(&Frame::RosterDelta(roster))
        .await
        .expect("roster");
    session
}

/// The next delivery the recipient gets, skipping other frames.
pub(crate) async fn next_delivery(
    session: &mut HubSession,
) -> flotilla_actors::federation::Deliver {
    let read = async {
        loop {
            if let Frame::Deliver(d) = session.recv().await.expect("recv") {
                return d;
            }
        }
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .expect("a delivery in time")
}

/// Waits for the sender's receipt of `id`, skipping other frames.
async fn receipt_of(session: &mut HubSession, id: &str) -> ReceiptState {
    let read = async {
        loop {
            if let Frame::Receipt(r) = session.recv().await.expect("recv")
                && r.id.as_str() == id
            {
                return r.state;
            }
        }
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .expect("a receipt in time")
}

/// Takes the next delivery and acknowledges it; its body.
async fn take(session: &mut HubSession) -> String {
    let d = next_delivery(session).await;
    let done = Delivered {
        seq: d.seq,
        id: d.message.id.clone(),
        gone: Vec::new(),
    };
    session.send(&Frame::Delivered(done)).await.expect("ack");
    d.message.body
}

fn id_of(frame: &Frame) -> String {
    match frame {
        Frame::Forward(Forward { message, .. }) => message.id.to_string(),
        _ => unreachable!("a forward"),
    }
}

/// Issue 13, point 7: the quota was checked before the repeat, so a
/// forward repeated while its message waited in a full queue was refused
/// `quota_exceeded`: the sender marked it dropped, the recipient got it.
#[test]
fn issue_13_a_repeat_into_a_full_queue_is_answered_queued_not_over_quota() {
    with_two_liars(
        "queue_max_messages = 1\n",
        async |mut sender, mut recipient| {
            let first = forward("laptop/lead", "work/builder", None, "first");
            let id = id_of(&first);
            assert_eq!(
                verdict(&mut sender, first.clone()).await,
                ForwardOutcome::Queued
            );
            // The queue holds one message, unacknowledged: it is full.
            assert_eq!(
                verdict(&mut sender, first).await,
                ForwardOutcome::Queued,
                "a repeat of a queued message is not over the quota"
            );
            assert_eq!(take(&mut recipient).await, "first");
            assert_eq!(receipt_of(&mut sender, &id).await, ReceiptState::Delivered);
            let next = forward("laptop/lead", "work/builder", None, "next");
            assert_eq!(verdict(&mut sender, next).await, ForwardOutcome::Queued);
            assert_eq!(take(&mut recipient).await, "next", "the first came once");
        },
    );
}

/// Issue 13, point 7: the hub forgot an id once delivered, so a forward
/// repeated after that was queued and delivered again.
#[test]
fn issue_13_a_repeat_after_the_delivery_is_answered_queued_and_not_delivered_again() {
    with_two_liars("", async |mut sender, mut recipient| {
        let first = forward("laptop/lead", "work/builder", None, "first");
        let id = id_of(&first);
        assert_eq!(
            verdict(&mut sender, first.clone()).await,
            ForwardOutcome::Queued
        );
        assert_eq!(take(&mut recipient).await, "first");
        assert_eq!(receipt_of(&mut sender, &id).await, ReceiptState::Delivered);
        assert_eq!(
            verdict(&mut sender, first).await,
            ForwardOutcome::Queued,
            "the same answer as the first time"
        );
        let next = forward("laptop/lead", "work/builder", None, "next");
        assert_eq!(verdict(&mut sender, next).await, ForwardOutcome::Queued);
        assert_eq!(
            take(&mut recipient).await,
            "next",
            "the repeat is not delivered a second time"
        );
    });
}

/// Issue 11: the hub numbers a forward's delivery and pushes it to its
/// host at once; the queue writer stores it meanwhile, and only the
/// sender's verdict waits for that. Here the writer is held (a test hook):
/// the recipient still gets the message, the sender's answer comes once
/// the writer goes on, and the delivery then leaves the queue with its
/// receipt as any other.
#[test]
fn issue_11_a_delivery_leaves_the_hub_before_its_queue_write() {
    let (mut hub, addr) = hub_home();
    let gate = hub.path().join("writer-gate");
    let hook = (
        "FLOTILLA_TEST_HUB_WRITER_GATE".to_owned(),
        gate.display().to_string(),
    );
    hub.env.push(hook);
    with_two_liars_at(hub, &addr, "", async |mut sender, mut recipient| {
        let first = forward("laptop/lead", "work/builder", None, "first");
        let id = id_of(&first);
        sender.send(&first).await.expect("send");
        let delivery = next_delivery(&mut recipient).await;
        assert_eq!(
            delivery.message.body, "first",
            "delivered while the writer waits"
        );
        std::fs::write(&gate, "open").expect("open the gate");
        let outcome = async {
            loop {
                if let Frame::Forwarded(f) = sender.recv().await.expect("recv") {
                    return f.outcome;
                }
            }
        };
        let outcome = tokio::time::timeout(PATIENCE, outcome)
            .await
            .expect("a verdict in time");
        assert_eq!(outcome, ForwardOutcome::Queued);
        let done = Delivered {
            seq: delivery.seq,
            id: delivery.message.id.clone(),
            gone: Vec::new(),
        };
        recipient.send(&Frame::Delivered(done)).await.expect("ack");
        assert_eq!(receipt_of(&mut sender, &id).await, ReceiptState::Delivered);
    });
}

/// A failed sync of the hub's write-ahead log (`FLOTILLA_TEST_SYNC_FAIL`, a
/// test hook) does not stop the hub: the group commits durably in redb
/// instead, the sender's verdict comes once that has succeeded, the
/// delivery and its receipt go on, and the hub's log says so. (A group
/// may commit durably anyway, at least one a second does, so forwards go
/// until one has met the failing sync, ten at most.) Once the disk syncs
/// again, the next group is logged as before.
#[test]
fn a_failed_sync_at_the_hub_commits_durably_instead_and_answers() {
    let (mut hub, addr) = hub_home();
    let fail = hub.path().join("fail-sync");
    std::fs::write(&fail, "").expect("arm the hook");
    let hook = (
        "FLOTILLA_TEST_SYNC_FAIL".to_owned(),
        fail.display().to_string(),
    );
    hub.env.push(hook);
    let hub_dir = hub.path().to_owned();
    let warned = move || {
        hub_log(&hub_dir)
            .matches("could not be synced; the store commits durably instead")
            .count()
    };
    with_two_liars_at(hub, &addr, "", async |mut sender, mut recipient| {
        for n in 0..10 {
            relay(&mut sender, &mut recipient, &format!("while failing {n}")).await;
            if warned() > 0 {
                break;
            }
        }
        let failed = warned();
        assert!(failed > 0, "a forward met the failing sync");
        std::fs::remove_file(&fail).expect("disarm");
        relay(&mut sender, &mut recipient, "after").await;
        assert_eq!(warned(), failed, "the sync works again");
    });
}

/// Forwards `body` from `sender` to `recipient`, which gets it and
/// acknowledges it: the verdict is `queued`, the receipt `delivered`.
async fn relay(sender: &mut HubSession, recipient: &mut HubSession, body: &str) {
    let frame = forward("laptop/lead", "work/builder", None, body);
    let id = id_of(&frame);
    assert_eq!(verdict(sender, frame).await, ForwardOutcome::Queued);
    let delivery = next_delivery(recipient).await;
    assert_eq!(delivery.message.body, body);
    let done = Delivered {
        seq: delivery.seq,
        id: delivery.message.id.clone(),
        gone: Vec::new(),
    };
    recipient.send(&Frame::Delivered(done)).await.expect("ack");
    assert_eq!(receipt_of(sender, &id).await, ReceiptState::Delivered);
}

/// What the hub logged: its stderr and its log file.
fn hub_log(home: &std::path::Path) -> String {
    ["hub.stderr", "logs/hub.log"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(home.join(f)).ok())
        .collect()
}
