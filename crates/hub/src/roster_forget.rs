//! Forgetting hosts that never come back: an offline host not seen for
//! longer than the hub's retention (`[hub_server] forget_hosts_after_secs`)
//! leaves the roster, and the hosts that could see its peers are told they
//! are gone. Part of [`super`]; no IO (the core removes its stored rows).

use flotilla_actors::model::{PeerRecord, Timestamp};
use flotilla_actors::names::HostName;

use super::{Change, HubRoster};

impl HubRoster {
    /// The offline hosts last seen before `cutoff`.
    pub fn not_seen_since(&self, cutoff: Timestamp) -> Vec<HostName> {
        self.hosts
            .iter()
            .filter(|(_, entry)| !entry.online && entry.last_seen.0 < cutoff.0)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Removes `host` and its peers; what the hosts that saw them must be
    /// told. `None` if the hub did not know it.
    pub fn forget(&mut self, host: &HostName) -> Option<Change> {
        let entry = self.hosts.get(host)?;
        let peers: Vec<PeerRecord> = entry.peers.values().cloned().collect();
        let watchers = self.watchers(host, &peers);
        for peer in &peers {
            self.unindex(peer);
        }
        self.hosts.remove(host);
        self.sent.remove(host);
        Some(Change {
            origin: host.clone(),
            touched: peers.into_iter().map(|p| p.id).collect(),
            watchers,
            origin_view: false,
            refused: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::HostEntry;
    use super::*;
    use crate::grants::SessionGrants;
    use flotilla_actors::model::PeerKind;
    use flotilla_actors::names::{GroupName, PeerId};

    fn entry(peer: &str, last_seen: u64) -> HostEntry {
        let id = PeerId::parse(peer).expect("id");
        let record = PeerRecord {
            id: id.clone(),
            kind: PeerKind::Mailbox,
            product: None,
            groups: [GroupName::new("proj").expect("group")].into(),
            joined_at: Timestamp(0),
        };
        HostEntry {
            peers: [(id, record)].into(),
            last_seen: Timestamp(last_seen),
            ..HostEntry::default()
        }
    }

    #[test]
    fn a_host_away_past_the_cutoff_is_forgotten_with_its_peers() {
        let (old, recent) = (
            HostName::new("old").expect("host"),
            HostName::new("recent").expect("host"),
        );
        let mut roster = HubRoster::new(
            [
                (old.clone(), entry("old/a", 10)),
                (recent.clone(), entry("recent/b", 100)),
            ],
            SessionGrants::default(),
        );
        assert_eq!(
            roster.not_seen_since(Timestamp(50)),
            std::slice::from_ref(&old)
        );
        let change = roster.forget(&old).expect("known");
        assert!(
            change
                .touched
                .contains(&PeerId::parse("old/a").expect("id"))
        );
        assert!(change.watchers.contains(&recent), "{change:?}");
        assert!(roster.host(&old).is_none());
        assert!(roster.peer(&PeerId::parse("old/a").expect("id")).is_none());
        assert!(roster.forget(&old).is_none());
        let _ = roster.set_online(&recent, true, None, Timestamp(1));
        assert!(
            roster.not_seen_since(Timestamp(u64::MAX)).is_empty(),
            "a linked host is never forgotten"
        );
    }
}
