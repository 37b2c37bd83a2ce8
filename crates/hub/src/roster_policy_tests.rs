//! The operator's group list in the roster (issue 13, point 2).

use super::*;
use crate::group_policy::{GroupPolicy, HostPattern, listable};

/// `proj` lets in only `work` and hosts matching `lap*`.
fn listed() -> GroupPolicy {
    let mut policy = GroupPolicy::default();
    let patterns = ["work", "lap*"].map(|p| HostPattern::new(p).expect("pattern"));
    policy.allow(listable("proj").expect("group"), patterns);
    policy
}

fn groups_of(r: &HubRoster, id: &str) -> Vec<String> {
    let peer = r.peer(&PeerId::parse(id).expect("id")).expect("peer");
    peer.groups.iter().map(|g| g.as_str().to_owned()).collect()
}

fn ids(delta: &RosterDelta) -> Vec<String> {
    delta
        .upserts
        .iter()
        .map(|p| p.record.id.to_string())
        .collect()
}

#[test]
fn a_host_not_listed_loses_only_that_membership_and_cannot_reach_the_group() {
    let mut r = roster();
    assert!(
        r.set_policy(listed()).is_empty(),
        "laptop and work are allowed"
    );
    let spy = reset(vec![peer("mac/spy", &["proj", "solo"])]);
    let change = r.apply(&host("mac"), &spy).expect("applied, not refused");
    let dropped = (
        PeerId::parse("mac/spy").expect("id"),
        listable("proj").expect("g"),
    );
    assert_eq!(change.refused, vec![dropped]);
    assert_eq!(groups_of(&r, "mac/spy"), ["solo"]);
    let mac = r.host(&host("mac")).expect("mac");
    assert_eq!(mac.refused.len(), 1);
    // mac sees nothing of proj; mac/other (solo) is still its own.
    assert!(
        !r.view_for(&host("mac"))
            .keys()
            .any(|id| id.host != host("mac"))
    );
    for group in [Some("proj"), None] {
        let f = forward("mac/spy", &["work/builder"], group);
        let (code, why) = r.admit(&host("mac"), &f).expect_err("refused");
        assert_eq!(code, ForwardRefusal::OutOfScope);
        assert!(why.contains("hub groups") && why.contains("mac"), "{why}");
    }
    // A message to mac/spy in proj from an allowed host is refused too.
    let inbound = forward("work/builder", &["mac/spy"], Some("proj"));
    let (code, why) = r.admit(&host("work"), &inbound).expect_err("refused");
    assert_eq!(code, ForwardRefusal::OutOfScope);
    assert!(why.contains("mac is not one of them"), "{why}");
    // Allowed hosts, and unlisted groups, work as before.
    let fair = forward("laptop/lead", &["work/builder"], Some("proj"));
    assert!(r.admit(&host("laptop"), &fair).is_ok());
}

#[test]
fn a_changed_list_gives_back_or_takes_away_memberships_and_tells_the_watchers() {
    let mut r = roster();
    r.set_policy(listed());
    r.apply(&host("mac"), &reset(vec![peer("mac/spy", &["proj"])]))
        .expect("applied");
    for h in ["laptop", "work", "mac"] {
        r.reset_view(&host(h));
    }
    let mut wider = listed();
    wider.allow(
        listable("proj").expect("g"),
        [HostPattern::new("m?c").expect("p")],
    );
    let changes = r.set_policy(wider);
    assert_eq!(changes.len(), 1);
    assert!(changes[0].refused.is_empty());
    assert_eq!(groups_of(&r, "mac/spy"), ["proj"]);
    assert!(r.host(&host("mac")).expect("mac").refused.is_empty());
    let deltas = r.view_deltas(&changes[0]);
    let to_work = deltas
        .iter()
        .find(|(h, _)| *h == host("work"))
        .expect("work told");
    assert_eq!(ids(&to_work.1), ["mac/spy"]);
    let to_mac = deltas
        .iter()
        .find(|(h, _)| *h == host("mac"))
        .expect("mac told");
    assert!(ids(&to_mac.1).contains(&"work/builder".to_owned()));

    // Closing the group to everyone takes every member out.
    let mut closed = listed();
    closed.deny(listable("proj").expect("g"), &[]);
    let changes = r.set_policy(closed);
    assert_eq!(changes.len(), 3, "laptop, mac and work each lost proj");
    let f = forward("laptop/lead", &["work/builder"], Some("proj"));
    let (_, why) = r.admit(&host("laptop"), &f).expect_err("closed");
    assert!(why.contains("matching none"), "{why}");
    // Open again: everything as reported comes back.
    r.set_policy(GroupPolicy::default());
    assert_eq!(groups_of(&r, "laptop/lead"), ["proj"]);
    assert!(r.admit(&host("laptop"), &f).is_ok());
}

#[test]
fn private_groups_are_not_subject_to_the_list() {
    let mut r = roster();
    let mut policy = listed();
    policy.allow(
        listable("solo").expect("g"),
        [HostPattern::new("nobody").expect("p")],
    );
    r.set_policy(policy);
    let own = reset(vec![peer("mac/lane", &["session:mac/other"])]);
    let change = r.apply(&host("mac"), &own).expect("own private group");
    assert!(change.refused.is_empty());
    assert_eq!(groups_of(&r, "mac/lane"), ["session:mac/other"]);
}
