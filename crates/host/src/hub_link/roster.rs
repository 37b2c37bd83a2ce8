//! The roster side of the hub link, without IO: what this host last told
//! the hub about its own peers (so only changes travel), and the remote
//! peers the hub announced.

use std::collections::BTreeMap;

use flotilla_actors::directory::Directory;
use flotilla_actors::federation::{RosterDelta, RosterPeer};
use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{HostName, PeerId};

/// This host's peers as last sent to the hub.
#[derive(Debug, Default)]
pub struct SentRoster {
    sent: BTreeMap<PeerId, PeerRecord>,
}

impl SentRoster {
    fn local(host: &HostName, directory: &Directory) -> BTreeMap<PeerId, PeerRecord> {
        directory
            .iter()
            .filter(|p| p.id.host == *host)
            .map(|p| (p.id.clone(), p.clone()))
            .collect()
    }

    /// The whole set, for a link that just came up.
    pub fn reset(&mut self, host: &HostName, directory: &Directory) -> RosterDelta {
        self.sent = Self::local(host, directory);
        RosterDelta {
            reset: true,
            upserts: self.sent.values().cloned().map(own).collect(),
            removed: Vec::new(),
        }
    }

    /// What changed since the last call, or `None`.
    pub fn delta(&mut self, host: &HostName, directory: &Directory) -> Option<RosterDelta> {
        let now = Self::local(host, directory);
        let upserts: Vec<RosterPeer> = now
            .iter()
            .filter(|(id, p)| self.sent.get(*id) != Some(*p))
            .map(|(_, p)| own(p.clone()))
            .collect();
        let removed: Vec<PeerId> = self
            .sent
            .keys()
            .filter(|id| !now.contains_key(*id))
            .cloned()
            .collect();
        self.sent = now;
        (!upserts.is_empty() || !removed.is_empty()).then_some(RosterDelta {
            reset: false,
            upserts,
            removed,
        })
    }
}

fn own(record: PeerRecord) -> RosterPeer {
    RosterPeer {
        record,
        online: true,
    }
}

/// Applies the hub's announcement to the remote peers this host knows.
/// Peers the hub claims for this host are ignored: this host's own peers
/// come from its own store only. Returns the peers that are gone (left,
/// or no longer visible), so lanes they owned here can follow them.
pub fn apply_remote(
    host: &HostName,
    remote: &mut BTreeMap<PeerId, RosterPeer>,
    delta: RosterDelta,
) -> Vec<PeerId> {
    let before: Vec<PeerId> = remote.keys().cloned().collect();
    if delta.reset {
        remote.clear();
    }
    for id in &delta.removed {
        remote.remove(id);
    }
    for p in delta.upserts {
        if p.record.id.host != *host {
            remote.insert(p.record.id.clone(), p);
        }
    }
    before
        .into_iter()
        .filter(|id| !remote.contains_key(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::model::{PeerKind, Timestamp};

    fn peer(id: &str) -> PeerRecord {
        PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: Default::default(),
            joined_at: Timestamp(0),
        }
    }

    #[test]
    fn only_own_changes_are_sent() {
        let host = HostName::new("h").expect("host");
        let mut sent = SentRoster::default();
        let dir = Directory::new([peer("h/a"), peer("w/remote")]);
        let reset = sent.reset(&host, &dir);
        assert_eq!(reset.upserts.len(), 1, "remote peers are not ours to send");
        assert!(sent.delta(&host, &dir).is_none());
        let dir = Directory::new([peer("h/b"), peer("w/remote")]);
        let delta = sent.delta(&host, &dir).expect("changed");
        assert_eq!(delta.upserts[0].record.id.to_string(), "h/b");
        assert_eq!(delta.removed[0].to_string(), "h/a");
    }

    #[test]
    fn the_hub_cannot_add_peers_of_this_host() {
        let host = HostName::new("h").expect("host");
        let mut remote = BTreeMap::new();
        let delta = RosterDelta {
            reset: true,
            upserts: vec![own(peer("h/fake")), own(peer("w/real"))],
            removed: Vec::new(),
        };
        apply_remote(&host, &mut remote, delta);
        let ids: Vec<String> = remote.keys().map(ToString::to_string).collect();
        assert_eq!(ids, ["w/real"]);
        let again = RosterDelta {
            reset: true,
            upserts: vec![own(peer("w/other"))],
            removed: Vec::new(),
        };
        let gone = apply_remote(&host, &mut remote, again);
        assert_eq!(
            gone,
            [PeerId::parse("w/real").expect("id")],
            "a reset drops who is not in it"
        );
    }
}
