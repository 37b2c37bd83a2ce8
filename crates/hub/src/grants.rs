//! Who may be in another host's private group, without IO.
//!
//! A peer's private group (`session:HOST/NAME`) is how its owner and the
//! lanes it placed reach it. A host may put its own peers in the private
//! groups of its own peers (a local lane and its owner), but a host's
//! roster entry in a `session:` group of *another* host is a claim only the
//! hub can vouch for: the hub grants one when it relays a remote lane start
//! (the lane `TARGET/NAME` joins `session:REQUESTER`), and nothing else
//! does. Every other foreign private membership is refused, so an enrolled
//! host cannot put its peer next to another host's peers and message them.
//!
//! Owns the set of grants and the rule; the core persists the grants (see
//! `HubStore::put_grant`). Must not touch sockets, the store or the clock.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, HostName, PeerId};

/// Why a roster entry was refused: it is in a private group its host may
/// not put it in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{host} put {peer} in {group}, a private group it does not own and the hub never granted; the change was refused"
)]
pub struct ForeignPrivateGroup {
    /// The host that sent the entry.
    pub host: HostName,
    /// The peer.
    pub peer: PeerId,
    /// The private group it claimed.
    pub group: GroupName,
}

/// The private-group memberships the hub created itself: peer to the
/// foreign private groups it may be in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionGrants {
    by_peer: BTreeMap<PeerId, BTreeSet<GroupName>>,
}

impl SessionGrants {
    /// Grants rebuilt from stored pairs.
    pub fn new(pairs: impl IntoIterator<Item = (PeerId, GroupName)>) -> Self {
        let mut grants = Self::default();
        for (peer, group) in pairs {
            grants.grant(peer, group);
        }
        grants
    }

    /// Lets `peer` be in `group`; whether this is new.
    pub fn grant(&mut self, peer: PeerId, group: GroupName) -> bool {
        self.by_peer.entry(peer).or_default().insert(group)
    }

    /// Takes a grant back.
    pub fn revoke(&mut self, peer: &PeerId, group: &GroupName) {
        if let Some(groups) = self.by_peer.get_mut(peer) {
            groups.remove(group);
            if groups.is_empty() {
                self.by_peer.remove(peer);
            }
        }
    }

    /// Whether `peer` was granted `group`.
    pub fn allows(&self, peer: &PeerId, group: &GroupName) -> bool {
        self.by_peer.get(peer).is_some_and(|g| g.contains(group))
    }

    /// Checks a roster entry sent by `host`: each of its `session:` groups
    /// must be the private group of a peer of `host`, or granted to it.
    pub fn check(&self, host: &HostName, peer: &PeerRecord) -> Result<(), ForeignPrivateGroup> {
        let foreign = peer.groups.iter().find(|group| {
            group.is_session()
                && group.session_owner().is_none_or(|o| o.host != *host)
                && !self.allows(&peer.id, group)
        });
        match foreign {
            None => Ok(()),
            Some(group) => Err(ForeignPrivateGroup {
                host: host.clone(),
                peer: peer.id.clone(),
                group: group.clone(),
            }),
        }
    }
}

/// The grant a relayed lane start creates: the lane `target/name` joins
/// its requester's private group.
pub fn lane_start_grant(
    target: &HostName,
    call_op: &str,
    args: &str,
    requester: &PeerId,
) -> Option<(PeerId, GroupName)> {
    if call_op != "lane.start" {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Named {
        name: flotilla_actors::names::PeerName,
    }
    let named: Named = serde_json::from_str(args).ok()?;
    let lane = PeerId::new(target.clone(), named.name);
    Some((lane, GroupName::session(requester)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::model::{PeerKind, Timestamp};

    fn id(s: &str) -> PeerId {
        PeerId::parse(s).expect("id")
    }

    fn host(s: &str) -> HostName {
        HostName::new(s).expect("host")
    }

    fn peer(s: &str, groups: &[&str]) -> PeerRecord {
        PeerRecord {
            id: id(s),
            kind: PeerKind::Lane,
            product: None,
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("g"))
                .collect(),
            joined_at: Timestamp(0),
        }
    }

    #[test]
    fn a_host_may_use_its_own_private_groups_and_ordinary_ones() {
        let grants = SessionGrants::default();
        let local_lane = peer("b/lane", &["session:b/lead", "proj"]);
        assert_eq!(grants.check(&host("b"), &local_lane), Ok(()));
    }

    #[test]
    fn another_hosts_private_group_is_refused_unless_granted() {
        let mut grants = SessionGrants::default();
        let spy = peer("d/spy3", &["proj", "session:b/secret"]);
        let err = grants.check(&host("d"), &spy).expect_err("refused");
        assert_eq!(err.group.as_str(), "session:b/secret");
        assert!(err.to_string().contains("never granted"), "{err}");
        assert!(grants.grant(id("d/spy3"), GroupName::session(&id("b/secret"))));
        assert_eq!(grants.check(&host("d"), &spy), Ok(()));
        // The grant is for that peer only.
        let other = peer("d/other", &["session:b/secret"]);
        assert!(grants.check(&host("d"), &other).is_err());
        grants.revoke(&id("d/spy3"), &GroupName::session(&id("b/secret")));
        assert!(grants.check(&host("d"), &spy).is_err());
    }

    #[test]
    fn a_private_group_naming_no_peer_is_refused() {
        let grants = SessionGrants::default();
        let odd = peer("d/x", &["session:nohost"]);
        assert!(grants.check(&host("d"), &odd).is_err());
    }

    #[test]
    fn a_relayed_lane_start_grants_the_lane_its_requesters_group() {
        let args = r#"{"name":"builder","cli":"exec"}"#;
        let (lane, group) =
            lane_start_grant(&host("work"), "lane.start", args, &id("laptop/lead")).expect("grant");
        assert_eq!(lane, id("work/builder"));
        assert_eq!(group.as_str(), "session:laptop/lead");
        assert!(lane_start_grant(&host("work"), "lane.wait", args, &id("laptop/lead")).is_none());
        assert!(lane_start_grant(&host("work"), "lane.start", "{}", &id("laptop/lead")).is_none());
    }
}
