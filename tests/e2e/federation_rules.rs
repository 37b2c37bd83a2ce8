//! The hub's own checks, against a host that lies: a real hub and a real
//! honest host daemon, and a "liar" host speaking the protocol directly
//! with a valid certificate of the same CA. The hub must refuse, frame by
//! frame, a message from a peer of another host, a message to a peer
//! outside the sender's groups, a broadcast to a group the sender is not
//! in, and a roster that claims another host's peer (which also ends the
//! liar's link). Only the legitimate message arrives.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use flotilla_actors::federation::{
    Forward, ForwardOutcome, ForwardRefusal, Frame, Hello, RosterDelta, RosterPeer,
};
use flotilla_actors::model::{Message, PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, MessageId, PeerId};
use flotilla_hub::setup::{CertPaths, host_client_config};
use flotilla_hub::{ConnectOptions, HubSession};
use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::wait_until;

fn peer(id: &str, groups: &[&str]) -> RosterPeer {
    RosterPeer {
        record: PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("group"))
                .collect::<BTreeSet<_>>(),
            joined_at: Timestamp(0),
        },
        online: true,
    }
}

fn forward(from: &str, to: &str, group: Option<&str>, body: &str) -> Frame {
    let to = PeerId::parse(to).expect("to");
    Frame::Forward(Forward {
        message: Message {
            id: MessageId::generate(),
            from: PeerId::parse(from).expect("from"),
            to: vec![to.clone()],
            group: group.map(|g| GroupName::new(g).expect("group")),
            summary: None,
            body: body.into(),
            sent_at: Timestamp::now(),
            seq: 1,
            in_reply_to: None,
        },
        to: vec![to],
    })
}

/// Sends a forward and returns the hub's verdict.
async fn verdict(session: &mut HubSession, frame: Frame) -> ForwardOutcome {
    session.send(&frame).await.expect("send");
    let read = async {
        loop {
            if let Frame::Forwarded(f) = session.recv().await.expect("recv") {
                return f.outcome;
            }
        }
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .expect("a verdict in time")
}

fn refusal(outcome: ForwardOutcome) -> ForwardRefusal {
    match outcome {
        ForwardOutcome::Refused { code, .. } => code,
        ForwardOutcome::Queued => panic!("the hub queued what it must refuse"),
    }
}

#[test]
fn the_hub_checks_every_frame_of_a_host_that_lies() {
    let (hub, addr) = hub_home();
    let _server = run_hub(&hub);
    let mut work = host_home(&hub, "work", &addr);
    work.spawn_daemon("work");
    wait_link(&work, "work's link", |l| l["state"] == "connected");
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    work.ok(&["peer", "join", "loner", "-g", "elsewhere"]);
    let liar = host_home(&hub, "liar", &addr);
    let certs = CertPaths::new(liar.path().join("certs"));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let config = host_client_config(&certs).expect("client config");
        let endpoint =
            quinn::Endpoint::client((std::net::Ipv4Addr::LOCALHOST, 0).into()).expect("endpoint");
        let hub_addr: SocketAddr = addr.parse().expect("addr");
        let options = ConnectOptions::new(hub_addr, "hub.test", config);
        let hello = Hello::new(HostName::new("liar").expect("host"));
        let mut session = flotilla_hub::connect(&endpoint, &options, hello)
            .await
            .expect("the liar's certificate is valid");
        let own = RosterDelta {
            reset: true,
            upserts: vec![peer("liar/spy", &["proj"])],
            removed: Vec::new(),
        };
        session
            .send(&Frame::RosterDelta(own))
            .await
            .expect("roster");

        let as_other = forward("work/builder", "work/loner", None, "forged");
        assert_eq!(
            refusal(verdict(&mut session, as_other).await),
            ForwardRefusal::NotOwner
        );
        let out_of_scope = forward("liar/spy", "work/loner", None, "no shared group");
        assert_eq!(
            refusal(verdict(&mut session, out_of_scope).await),
            ForwardRefusal::OutOfScope
        );
        let wrong_group = forward(
            "liar/spy",
            "work/builder",
            Some("elsewhere"),
            "not a member",
        );
        assert_eq!(
            refusal(verdict(&mut session, wrong_group).await),
            ForwardRefusal::OutOfScope
        );
        let fair = forward("liar/spy", "work/builder", None, "legit");
        assert_eq!(verdict(&mut session, fair).await, ForwardOutcome::Queued);

        // Claiming another host's peer ends the link.
        let claim = RosterDelta {
            reset: false,
            upserts: vec![peer("work/builder", &["proj", "spies"])],
            removed: Vec::new(),
        };
        session
            .send(&Frame::RosterDelta(claim))
            .await
            .expect("send");
        let closed = tokio::time::timeout(PATIENCE, async {
            loop {
                if session.recv().await.is_err() {
                    return;
                }
            }
        });
        closed.await.expect("the hub closes the liar's link");
    });

    let mut got = Vec::new();
    wait_until("the legitimate message", PATIENCE, || {
        let reply = work.json(&["inbox", "--as", "builder"]);
        got.extend(reply["messages"].as_array().cloned().unwrap_or_default());
        !got.is_empty()
    });
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["body"], "legit");
    assert!(
        work.json(&["inbox", "--as", "loner"])["messages"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    let roster = hub.json(&["hub", "roster"]);
    let builder = roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["peers"].as_array().cloned().unwrap_or_default())
        .find(|p| p["id"] == "work/builder")
        .expect("builder in the hub's roster");
    let groups: Vec<&str> = builder["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.as_str())
        .collect();
    assert!(
        !groups.contains(&"spies"),
        "the claim changed nothing: {groups:?}"
    );
}
