//! Tests of the hub's roster and routing rules.

use super::*;
use crate::grants::SessionGrants;
use flotilla_actors::federation::{Forward, RosterPeer};
use flotilla_actors::model::{Message, PeerKind};
use flotilla_actors::names::MessageId;

pub(super) fn host(s: &str) -> HostName {
    HostName::new(s).expect("host")
}

pub(super) fn peer(id: &str, groups: &[&str]) -> RosterPeer {
    RosterPeer {
        record: PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("group"))
                .collect(),
            joined_at: Timestamp(0),
        },
        online: true,
    }
}

fn reset(peers: Vec<RosterPeer>) -> RosterDelta {
    RosterDelta {
        reset: true,
        upserts: peers,
        removed: Vec::new(),
    }
}

fn forward(from: &str, to: &[&str], group: Option<&str>) -> Forward {
    Forward {
        message: Message {
            id: MessageId::generate(),
            from: PeerId::parse(from).expect("from"),
            to: Vec::new(),
            group: group.map(|g| GroupName::new(g).expect("group")),
            summary: None,
            body: "hi".into(),
            sent_at: Timestamp(0),
            seq: 1,
            in_reply_to: None,
        },
        to: to.iter().map(|t| PeerId::parse(t).expect("to")).collect(),
    }
}

/// laptop/lead and work/builder share `proj`; mac/other is alone.
fn roster() -> HubRoster {
    let mut r = HubRoster::default();
    for h in ["laptop", "work", "mac"] {
        r.set_online(&host(h), true, None, Timestamp(1));
        r.reset_view(&host(h));
    }
    r.apply(
        &host("laptop"),
        &reset(vec![peer("laptop/lead", &["proj"])]),
    )
    .expect("laptop");
    r.apply(&host("work"), &reset(vec![peer("work/builder", &["proj"])]))
        .expect("work");
    r.apply(&host("mac"), &reset(vec![peer("mac/other", &["solo"])]))
        .expect("mac");
    for h in ["laptop", "work", "mac"] {
        r.reset_view(&host(h));
    }
    r
}

#[test]
fn a_host_cannot_speak_for_a_peer_of_another_host() {
    let mut r = roster();
    let claim = reset(vec![peer("work/builder", &["proj", "evil"])]);
    let err = r.apply(&host("laptop"), &claim).expect_err("refused");
    assert!(
        matches!(&err, RosterRefusal::NotOwner { peer, .. } if peer.to_string() == "work/builder"),
        "{err:?}"
    );
    let removal = RosterDelta {
        reset: false,
        upserts: Vec::new(),
        removed: vec![PeerId::parse("mac/other").expect("id")],
    };
    assert!(r.apply(&host("laptop"), &removal).is_err());
    assert!(r.host(&host("mac")).expect("mac").peers.len() == 1);
    let f = forward("work/builder", &["laptop/lead"], None);
    let (code, _) = r.admit(&host("laptop"), &f).expect_err("not owner");
    assert_eq!(code, ForwardRefusal::NotOwner);
}

#[test]
fn views_hold_only_peers_that_share_a_group() {
    let r = roster();
    let view: Vec<String> = r
        .view_for(&host("laptop"))
        .keys()
        .map(ToString::to_string)
        .collect();
    assert_eq!(view, ["work/builder"]);
    assert!(r.view_for(&host("mac")).is_empty());
}

#[test]
fn forwards_are_checked_against_groups_at_that_moment() {
    let mut r = roster();
    let ok = r
        .admit(
            &host("laptop"),
            &forward("laptop/lead", &["work/builder"], None),
        )
        .expect("shares proj");
    assert_eq!(ok[&host("work")].len(), 1);
    let out = forward("laptop/lead", &["mac/other"], None);
    assert_eq!(
        r.admit(&host("laptop"), &out).expect_err("scope").0,
        ForwardRefusal::OutOfScope
    );
    let bcast = forward("laptop/lead", &["work/builder"], Some("solo"));
    assert_eq!(
        r.admit(&host("laptop"), &bcast)
            .expect_err("not in group")
            .0,
        ForwardRefusal::OutOfScope
    );
    // work/builder leaves proj: the same send is now refused.
    r.apply(
        &host("work"),
        &reset(vec![peer("work/builder", &["elsewhere"])]),
    )
    .expect("work");
    let again = forward("laptop/lead", &["work/builder"], None);
    assert_eq!(
        r.admit(&host("laptop"), &again).expect_err("scope").0,
        ForwardRefusal::OutOfScope
    );
    let ghost = forward("laptop/lead", &["work/ghost"], None);
    assert_eq!(
        r.admit(&host("laptop"), &ghost).expect_err("unknown").0,
        ForwardRefusal::UnknownPeer
    );
}

#[test]
fn only_changes_travel_and_only_to_hosts_that_see_them() {
    let mut r = roster();
    let join = RosterDelta {
        reset: false,
        upserts: vec![peer("work/tester", &["proj"])],
        removed: Vec::new(),
    };
    let change = r.apply(&host("work"), &join).expect("own peer");
    assert!(change.watchers.contains(&host("laptop")));
    assert!(!change.watchers.contains(&host("mac")));
    let deltas = r.view_deltas(&change);
    let to_laptop: Vec<_> = deltas
        .iter()
        .filter(|(h, _)| *h == host("laptop"))
        .collect();
    assert_eq!(to_laptop.len(), 1);
    assert_eq!(to_laptop[0].1.upserts.len(), 1, "only the new peer");
    assert!(!to_laptop[0].1.reset);
    // Going offline shows as a change of the `online` flag.
    let change = r.set_online(&host("work"), false, None, Timestamp(2));
    let deltas = r.view_deltas(&change);
    let flags: Vec<bool> = deltas
        .iter()
        .flat_map(|(_, d)| d.upserts.iter().map(|p| p.online))
        .collect();
    assert_eq!(flags, [false, false]);
    // Offline peers are still routable: their messages are queued.
    let f = forward("laptop/lead", &["work/builder"], None);
    assert!(r.admit(&host("laptop"), &f).is_ok());
}

#[test]
fn a_roster_rebuilt_from_the_store_starts_offline() {
    let stored = HostEntry {
        peers: [(
            PeerId::parse("work/builder").expect("id"),
            peer("work/builder", &["proj"]).record,
        )]
        .into(),
        online: true,
        last_seen: Timestamp(5),
        version: "0.1.0".into(),
        ..HostEntry::default()
    };
    let r = HubRoster::new([(host("work"), stored)], SessionGrants::default());
    assert!(!r.host(&host("work")).expect("work").online);
}

/// Issue 13, point 1: an enrolled host put its peer in other hosts'
/// private groups and was accepted.
#[test]
fn a_host_cannot_put_its_peer_in_another_hosts_private_group() {
    let mut r = roster();
    for group in ["session:work/builder", "session:laptop/lead"] {
        let spy = reset(vec![peer("mac/spy3", &["solo", group])]);
        let err = r.apply(&host("mac"), &spy).expect_err("refused");
        assert!(
            matches!(&err, RosterRefusal::ForeignPrivateGroup(f) if f.group.as_str() == group),
            "{err:?}"
        );
    }
    // Nothing changed: the spy is not in the roster, and mac still sees
    // nobody; a message from it to the private group's owner is refused.
    assert!(r.peer(&PeerId::parse("mac/spy3").expect("id")).is_none());
    assert!(r.view_for(&host("mac")).is_empty());
    let f = forward("mac/other", &["work/builder"], None);
    let (code, _) = r.admit(&host("mac"), &f).expect_err("out of scope");
    assert_eq!(code, ForwardRefusal::OutOfScope);
    // Its own private groups stay allowed.
    let own = reset(vec![
        peer("mac/other", &["solo"]),
        peer("mac/lane", &["session:mac/other"]),
    ]);
    r.apply(&host("mac"), &own).expect("own private group");
}

#[test]
fn a_granted_lane_joins_its_remote_owners_private_group_and_nothing_more() {
    let mut r = roster();
    let lead = PeerId::parse("laptop/lead").expect("id");
    let lane = PeerId::parse("work/helper").expect("id");
    assert!(r.grant(lane.clone(), GroupName::session(&lead)));
    let joined = RosterDelta {
        reset: false,
        upserts: vec![peer("work/helper", &["session:laptop/lead"])],
        removed: Vec::new(),
    };
    let change = r.apply(&host("work"), &joined).expect("granted");
    assert!(change.watchers.contains(&host("laptop")));
    assert!(r.view_for(&host("laptop")).contains_key(&lane));
    // A grant in use is kept; one never used is taken back.
    assert!(!r.revoke(&lane, &GroupName::session(&lead)));
    assert!(r.apply(&host("work"), &joined).is_ok());
    let unused = PeerId::parse("work/never").expect("id");
    r.grant(unused.clone(), GroupName::session(&lead));
    assert!(r.revoke(&unused, &GroupName::session(&lead)));
    let sneaky = RosterDelta {
        reset: false,
        upserts: vec![peer("work/never", &["session:laptop/lead"])],
        removed: Vec::new(),
    };
    assert!(r.apply(&host("work"), &sneaky).is_err());
    // Another peer of the same host gets nothing from the lane's grant.
    let other = RosterDelta {
        reset: false,
        upserts: vec![peer("work/other", &["session:laptop/lead"])],
        removed: Vec::new(),
    };
    assert!(r.apply(&host("work"), &other).is_err());
}

#[test]
fn a_stored_peer_in_an_ungranted_private_group_is_left_out_at_load() {
    let spy = peer("mac/spy3", &["session:work/builder"]).record;
    let ok = peer("mac/other", &["solo"]).record;
    let stored = HostEntry {
        peers: [(spy.id.clone(), spy.clone()), (ok.id.clone(), ok.clone())].into(),
        ..HostEntry::default()
    };
    let r = HubRoster::new([(host("mac"), stored.clone())], SessionGrants::default());
    assert!(r.peer(&spy.id).is_none());
    assert!(r.peer(&ok.id).is_some());
    let granted = SessionGrants::new([(
        spy.id.clone(),
        spy.groups.iter().next().cloned().expect("g"),
    )]);
    let r = HubRoster::new([(host("mac"), stored)], granted);
    assert!(r.peer(&spy.id).is_some());
}

#[test]
fn a_peer_in_a_private_group_is_told_to_its_owner_and_the_owner_to_it() {
    let mut r = roster();
    let lead = PeerId::parse("laptop/lead").expect("id");
    let lane = PeerId::parse("mac/helper").expect("id");
    r.grant(lane.clone(), GroupName::session(&lead));
    let joined = RosterDelta {
        reset: false,
        upserts: vec![peer("mac/helper", &["session:laptop/lead"])],
        removed: Vec::new(),
    };
    let change = r.apply(&host("mac"), &joined).expect("granted");
    let deltas = r.view_deltas(&change);
    let told = |h: &str| -> Vec<String> {
        deltas
            .iter()
            .filter(|(to, _)| *to == host(h))
            .flat_map(|(_, d)| d.upserts.iter().map(|p| p.record.id.to_string()))
            .collect()
    };
    assert_eq!(told("laptop"), ["mac/helper"], "{deltas:?}");
    assert!(told("work").is_empty(), "{deltas:?}");
    assert_eq!(told("mac"), ["laptop/lead"], "{deltas:?}");
}

#[test]
fn hosts_told_the_same_change_share_one_delta() {
    let mut r = roster();
    r.set_online(&host("desk"), true, None, Timestamp(1));
    r.reset_view(&host("desk"));
    r.apply(&host("desk"), &reset(vec![peer("desk/watch", &["proj"])]))
        .expect("desk");
    let joined = RosterDelta {
        reset: false,
        upserts: vec![peer("mac/newcomer", &["proj"])],
        removed: Vec::new(),
    };
    let change = r.apply(&host("mac"), &joined).expect("own");
    let grouped = r.grouped_view_deltas(&change);
    let shared: Vec<&Vec<HostName>> = grouped
        .iter()
        .filter(|(_, d)| {
            d.upserts
                .iter()
                .any(|p| p.record.id.to_string() == "mac/newcomer")
        })
        .map(|(hosts, _)| hosts)
        .collect();
    assert_eq!(
        shared,
        [&vec![host("desk"), host("laptop"), host("work")]],
        "{grouped:?}"
    );
}

#[test]
fn a_roster_sent_again_unchanged_tells_nobody_anything() {
    let mut r = roster();
    let again = reset(vec![peer("work/builder", &["proj"])]);
    let change = r.apply(&host("work"), &again).expect("work");
    assert!(
        !change.origin_view,
        "the same groups: work's own view is as it was"
    );
    assert!(r.view_deltas(&change).is_empty());
}

#[path = "roster_policy_tests.rs"]
mod group_list;
