//! The operator's view written straight from the core's state is the same
//! text as the view built as a value and serialized.

use std::time::Duration;

use flotilla_actors::federation::{RosterDelta, RosterPeer};

use super::*;
use crate::budget::BudgetEvent;
use crate::group_policy::{GroupPolicy, HostPattern, listable};

fn record(id: &str, kind: PeerKind, product: Option<&str>, groups: &[&str]) -> RosterPeer {
    RosterPeer {
        record: PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind,
            product: product.map(str::to_owned),
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("group"))
                .collect(),
            joined_at: Timestamp(7),
        },
        online: true,
    }
}

/// Two hosts online and one gone, mailboxes and lanes interleaved by
/// name, a product with a character JSON escapes, a membership the group
/// list refused, messages queued, a host slowed and one cut.
fn federation() -> (HubRoster, HashMap<HostName, Depth>, BudgetBook) {
    let host = |s: &str| HostName::new(s).expect("host");
    let mut roster = HubRoster::default();
    let mut policy = GroupPolicy::default();
    let only_work = [HostPattern::new("work").expect("pattern")];
    policy.allow(listable("ops").expect("group"), only_work);
    roster.set_policy(policy);
    let lane = PeerKind::Lane;
    let hosts = [
        (
            "laptop",
            vec![
                record(
                    "laptop/lead",
                    PeerKind::Mailbox,
                    Some("shell"),
                    &["proj", "ops"],
                ),
                record("laptop/coder", lane, Some("codex \"5\"\n"), &["proj"]),
            ],
        ),
        (
            "work",
            vec![
                record("work/agent", PeerKind::Session, None, &[]),
                record("work/builder", lane, Some("claude"), &["proj", "ops"]),
            ],
        ),
        (
            "mac",
            vec![record("mac/me", PeerKind::Mailbox, None, &["solo"])],
        ),
    ];
    for (name, upserts) in hosts {
        roster.set_online(&host(name), true, Some("0.1.0".into()), Timestamp(1_000));
        let delta = RosterDelta {
            reset: true,
            upserts,
            removed: Vec::new(),
        };
        roster.apply(&host(name), &delta).expect("applied");
    }
    roster.set_online(&host("mac"), false, None, Timestamp(2_000));
    let mut depths = HashMap::new();
    let queued = Depth {
        messages: 3,
        bytes: 120,
    };
    depths.insert(host("mac"), queued);
    let mut budgets = BudgetBook::default();
    budgets.record(
        &host("laptop"),
        BudgetEvent::Slowed(Duration::from_millis(40)),
    );
    budgets.record(
        &host("work"),
        BudgetEvent::Cut("over budget for 4 s".into()),
    );
    (roster, depths, budgets)
}

#[test]
fn the_view_written_in_place_is_the_view_built_and_serialized() {
    let (roster, depths, budgets) = federation();
    let links = HashMap::new();
    let parts = RosterParts {
        hub: "hub-1",
        roster: &roster,
        links: &links,
        depths: &depths,
        budgets: &budgets,
    };
    let at = Timestamp(1_765_000_000_000);
    let built = roster_value(&parts, at);
    assert_eq!(built.hosts.len(), 3, "{built:#?}");
    let laptop = &built.hosts[0];
    assert_eq!(
        (laptop.peers.len(), laptop.lanes.len()),
        (1, 1),
        "{laptop:#?}"
    );
    assert_eq!(laptop.refused.len(), 1, "ops is for work only: {laptop:#?}");
    assert_eq!(built.hosts[1].queued.messages, 3, "mac has messages queued");
    let mut written = Vec::new();
    write_roster(&parts, at, &mut written).expect("written");
    let expected = serde_json::to_vec(&built).expect("serialized");
    assert_eq!(
        String::from_utf8_lossy(&written),
        String::from_utf8_lossy(&expected)
    );
    let read: HubRosterReply = serde_json::from_slice(&written).expect("read back");
    assert_eq!(read, built);
}
