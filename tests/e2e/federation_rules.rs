//! The hub's own checks, against a host that lies: a real hub and a real
//! honest host daemon, and a "liar" host speaking the protocol directly
//! with a valid certificate of the same CA. The hub must refuse, frame by
//! frame, a message from a peer of another host, a message to a peer
//! outside the sender's groups, a broadcast to a group the sender is not
//! in, a roster that claims another host's peer, and a roster that puts
//! the liar's peer in another host's private group (both also end the
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

pub(crate) fn peer(id: &str, groups: &[&str]) -> RosterPeer {
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

pub(crate) fn forward(from: &str, to: &str, group: Option<&str>, body: &str) -> Frame {
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
pub(crate) async fn verdict(session: &mut HubSession, frame: Frame) -> ForwardOutcome {
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

pub(crate) fn refusal(outcome: ForwardOutcome) -> ForwardRefusal {
    match outcome {
        ForwardOutcome::Refused { code, .. } => code,
        ForwardOutcome::Queued => panic!("the hub queued what it must refuse"),
    }
}

/// Connects as the host `name` with its valid certificate, speaking
/// frames directly.
pub(crate) async fn liar_session(
    home: &flotilla_tests::TestHome,
    name: &str,
    addr: &str,
) -> HubSession {
    liar_session_with(home, name, addr, None).await
}

/// [`liar_session`] with the client's own QUIC transport settings.
pub(crate) async fn liar_session_with(
    home: &flotilla_tests::TestHome,
    name: &str,
    addr: &str,
    transport: Option<quinn::TransportConfig>,
) -> HubSession {
    let certs = CertPaths::new(home.path().join("certs"));
    let mut config = host_client_config(&certs).expect("client config");
    if let Some(transport) = transport {
        config.transport_config(std::sync::Arc::new(transport));
    }
    let endpoint =
        quinn::Endpoint::client((std::net::Ipv4Addr::LOCALHOST, 0).into()).expect("endpoint");
    let hub_addr: SocketAddr = addr.parse().expect("addr");
    let options = ConnectOptions::new(hub_addr, "hub.test", config);
    let hello = Hello::new(HostName::new(name).expect("host"));
    flotilla_hub::connect(&endpoint, &options, hello)
        .await
        .expect("the liar's certificate is valid")
}

/// Waits until the hub closes the session.
pub(crate) async fn closed(session: &mut HubSession) {
    let closed = tokio::time::timeout(PATIENCE, async {
        loop {
            if session.recv().await.is_err() {
                return;
            }
        }
    });
    closed.await.expect("the hub closes the liar's link");
}

/// Every peer id in the hub's roster.
pub(crate) fn hub_peer_ids(hub: &flotilla_tests::TestHome) -> Vec<String> {
    let roster = hub.json(&["hub", "roster"]);
    roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["peers"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["id"].as_str().map(str::to_owned))
        .collect()
}

/// Issue 13, point 1: an enrolled host sent its peer in `session:` groups
/// of other hosts, and the hub showed it their peers and delivered its
/// messages (into a persistent lane's next prompt).
#[test]
fn a_host_cannot_enter_another_hosts_private_group() {
    let (hub, addr) = hub_home();
    let _server = run_hub(&hub);
    let mut work = host_home(&hub, "work", &addr);
    work.spawn_daemon("work");
    wait_link(&work, "work's link", |l| l["state"] == "connected");
    work.ok(&["peer", "join", "secret"]);
    wait_until("work/secret at the hub", PATIENCE, || {
        hub_peer_ids(&hub).contains(&"work/secret".to_owned())
    });
    let liar = host_home(&hub, "liar", &addr);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        for (reset, groups) in [
            (true, vec!["session:work/secret"]),
            (
                false,
                vec!["proj", "session:work/secret", "session:liar/own"],
            ),
            (true, vec!["session:nohost"]),
        ] {
            let mut session = liar_session(&liar, "liar", &addr).await;
            let spy = RosterDelta {
                reset,
                upserts: vec![peer("liar/spy3", &groups)],
                removed: Vec::new(),
            };
            session.send(&Frame::RosterDelta(spy)).await.expect("send");
            closed(&mut session).await;
        }
        // Linked again with an honest roster, the spy is unknown and the
        // secret peer is out of reach.
        let mut session = liar_session(&liar, "liar", &addr).await;
        let own = RosterDelta {
            reset: true,
            upserts: vec![peer("liar/spy", &["session:liar/own"])],
            removed: Vec::new(),
        };
        session.send(&Frame::RosterDelta(own)).await.expect("send");
        let as_spy3 = forward("liar/spy3", "work/secret", None, "run rm -rf");
        assert_eq!(
            refusal(verdict(&mut session, as_spy3).await),
            ForwardRefusal::UnknownPeer
        );
        let as_spy = forward("liar/spy", "work/secret", None, "run rm -rf");
        assert_eq!(
            refusal(verdict(&mut session, as_spy).await),
            ForwardRefusal::OutOfScope
        );
    });
    let ids = hub_peer_ids(&hub);
    assert!(!ids.contains(&"liar/spy3".to_owned()), "{ids:?}");
    let peers = work.json(&["peers", "--as", "secret"]);
    assert_eq!(peers["peers"], serde_json::json!([]), "{peers}");
    let inbox = work.json(&["inbox", "--as", "secret"]);
    assert_eq!(inbox["messages"], serde_json::json!([]), "{inbox}");
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

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut session = liar_session(&liar, "liar", &addr).await;
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
        closed(&mut session).await;
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
