//! The roster side of the hub link, without IO: what this host last told
//! the hub about its own peers (so only changes travel), and the remote
//! peers the hub announced.

use std::collections::BTreeMap;

use flotilla_actors::directory::Directory;
use flotilla_actors::federation::{Forward, Frame, RosterDelta, RosterPeer};
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
            .of_host(host)
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

    /// The frames that hand `forwards` to the hub, led by any change of
    /// this host's peers not sent yet: the hub must know a sender (a peer
    /// that just joined, or its new name) before its message, or it
    /// refuses it as an unknown peer.
    pub fn lead(
        &mut self,
        host: &HostName,
        directory: &Directory,
        forwards: Vec<Forward>,
    ) -> Vec<Frame> {
        let mut frames = Vec::with_capacity(forwards.len() + 1);
        if !forwards.is_empty()
            && let Some(delta) = self.delta(host, directory)
        {
            frames.push(Frame::RosterDelta(delta));
        }
        frames.extend(forwards.into_iter().map(Frame::Forward));
        frames
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

    fn forward_from(from: &str) -> Forward {
        Forward {
            message: flotilla_actors::model::Message {
                id: flotilla_actors::names::MessageId::new("m1").expect("id"),
                from: PeerId::parse(from).expect("from"),
                to: vec![PeerId::parse("w/x").expect("to")],
                group: None,
                summary: None,
                body: "hi".into(),
                sent_at: Timestamp(0),
                seq: 1,
                in_reply_to: None,
            },
            to: vec![PeerId::parse("w/x").expect("to")],
        }
    }

    #[test]
    fn issue_13_a_new_senders_roster_change_goes_before_its_message() {
        let host = HostName::new("h").expect("host");
        let mut sent = SentRoster::default();
        sent.reset(&host, &Directory::new([peer("h/a")]));
        // h/new joined and sent at once; the directory's change was not
        // sent yet when the message is handed over.
        let dir = Directory::new([peer("h/a"), peer("h/new")]);
        let frames = sent.lead(&host, &dir, vec![forward_from("h/new")]);
        let kinds: Vec<&str> = frames.iter().map(Frame::kind).collect();
        assert_eq!(kinds, ["RosterDelta", "Forward"], "{frames:?}");
        let Frame::RosterDelta(delta) = &frames[0] else {
            panic!("a roster change first")
        };
        assert_eq!(delta.upserts[0].record.id.to_string(), "h/new");
        let again = sent.lead(&host, &dir, vec![forward_from("h/new")]);
        assert_eq!(again.len(), 1, "nothing changed since");
        assert!(
            sent.lead(&host, &Directory::new([peer("h/a")]), Vec::new())
                .is_empty()
        );
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
