//! The hub's roster and its routing rules, without IO: which peers each
//! host has, which hosts are linked, what each host may see, and whether a
//! forwarded message may pass.
//!
//! Owns the group index and the views sent to hosts (so that only changes
//! travel). Every decision is taken here, at the moment a frame arrives:
//! a host speaks only for its own peers (the name in its certificate, never
//! a claim in a frame), puts them in another host's private group only
//! where the hub granted it ([`crate::grants`]), has peers in a group the
//! operator listed only if the list allows its host (other memberships in
//! it are dropped, [`crate::group_policy`]), and a message reaches only
//! peers that share a group with its sender, or the members of the
//! broadcast group the sender is in.
//! Must not touch sockets, the store or the clock (callers pass `now`).

use std::collections::{BTreeMap, BTreeSet};

use flotilla_actors::federation::{ForwardRefusal, RosterDelta};
use flotilla_actors::model::{PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, PeerId};

use crate::grants::{ForeignPrivateGroup, SessionGrants};
use crate::group_policy::GroupPolicy;
pub use untold::Untold;

#[path = "roster_admit.rs"]
mod admit;
#[path = "roster_forget.rs"]
mod forget;
#[path = "roster_policy.rs"]
mod policy;
#[path = "roster_sent.rs"]
mod sent;
#[path = "roster_untold.rs"]
mod untold;
#[path = "roster_views.rs"]
mod views;

/// What the hub knows of one host.
#[derive(Debug, Clone, Default)]
pub struct HostEntry {
    /// Its peers, as it last reported them (kept while it is offline),
    /// less the memberships the operator's group list refused.
    pub peers: BTreeMap<PeerId, PeerRecord>,
    /// Per peer, the memberships it reported that the group list refused
    /// (given back if the list changes to allow them).
    pub refused: BTreeMap<PeerId, BTreeSet<GroupName>>,
    /// Whether its link is up.
    pub online: bool,
    /// When its link last changed or it last spoke.
    pub last_seen: Timestamp,
    /// The release it runs.
    pub version: String,
}

/// Why a host's roster change was refused (as a whole; the hub then
/// closes the host's link).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RosterRefusal {
    /// It spoke for a peer of another host.
    #[error("{host} spoke for {peer}, a peer of another host; the change was refused")]
    NotOwner {
        /// The host that sent the change.
        host: HostName,
        /// The peer it claimed.
        peer: PeerId,
    },
    /// It put a peer in another host's private group.
    #[error(transparent)]
    ForeignPrivateGroup(#[from] ForeignPrivateGroup),
}

/// What a roster change touched, for [`HubRoster::view_deltas`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The host whose peers or link changed.
    pub origin: HostName,
    /// Its peers that were added, changed, removed, or whose host's link
    /// changed.
    pub touched: BTreeSet<PeerId>,
    /// The other hosts that may see one of them (before or after).
    pub watchers: BTreeSet<HostName>,
    /// Whether the origin's own view may have changed (its peers' groups).
    pub origin_view: bool,
    /// Memberships of the origin's peers the group list refused in this
    /// change.
    pub refused: Vec<(PeerId, GroupName)>,
}

/// A refused forward: the code for the host, the reason for a person.
pub type Refused = (ForwardRefusal, String);

/// The federation's roster.
#[derive(Debug, Default)]
pub struct HubRoster {
    /// Every host the hub has heard of.
    hosts: BTreeMap<HostName, HostEntry>,
    /// Group to the peers in it (private groups included).
    groups: foldhash::HashMap<GroupName, BTreeSet<PeerId>>,
    /// What each linked host was last told it may see.
    sent: sent::SentViews,
    /// Memberships in other hosts' private groups that the hub created.
    grants: SessionGrants,
    /// The operator's list of who may be in which group.
    policy: GroupPolicy,
}

impl HubRoster {
    /// A roster rebuilt from stored hosts, all offline, and the stored
    /// grants. A stored peer the grants do not allow (kept by a release
    /// that did not check) is left out.
    pub fn new(
        hosts: impl IntoIterator<Item = (HostName, HostEntry)>,
        grants: SessionGrants,
    ) -> Self {
        let mut roster = Self {
            grants,
            ..Self::default()
        };
        for (name, mut entry) in hosts {
            entry.online = false;
            entry
                .peers
                .retain(|_, peer| match roster.grants.check(&name, peer) {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!("stored roster: {e}; the peer is left out");
                        false
                    }
                });
            for peer in entry.peers.values() {
                roster.index(peer);
            }
            roster.hosts.insert(name, entry);
        }
        roster
    }

    /// Lets `peer` be in `group`, another host's private group; whether
    /// the grant is new.
    pub fn grant(&mut self, peer: PeerId, group: GroupName) -> bool {
        self.grants.grant(peer, group)
    }

    /// Takes back a grant that is not in use (its lane start failed);
    /// whether it was taken back.
    pub fn revoke(&mut self, peer: &PeerId, group: &GroupName) -> bool {
        let in_use = self.peer(peer).is_some_and(|p| p.groups.contains(group));
        if !in_use {
            self.grants.revoke(peer, group);
        }
        !in_use
    }

    /// Every host, by name.
    pub fn hosts(&self) -> &BTreeMap<HostName, HostEntry> {
        &self.hosts
    }

    /// One host.
    pub fn host(&self, name: &HostName) -> Option<&HostEntry> {
        self.hosts.get(name)
    }

    fn index(&mut self, peer: &PeerRecord) {
        for group in peer.memberships() {
            self.groups
                .entry(group)
                .or_default()
                .insert(peer.id.clone());
        }
    }

    fn unindex(&mut self, peer: &PeerRecord) {
        for group in peer.memberships() {
            if let Some(members) = self.groups.get_mut(&group) {
                members.remove(&peer.id);
                if members.is_empty() {
                    self.groups.remove(&group);
                }
            }
        }
    }

    /// A peer as its host last reported it.
    pub fn peer(&self, id: &PeerId) -> Option<&PeerRecord> {
        self.hosts.get(&id.host).and_then(|h| h.peers.get(id))
    }

    /// A host's link came up or went down; returns what the hosts that see
    /// its peers must be told.
    pub fn set_online(
        &mut self,
        host: &HostName,
        online: bool,
        version: Option<String>,
        now: Timestamp,
    ) -> Change {
        let entry = self.hosts.entry(host.clone()).or_default();
        entry.online = online;
        entry.last_seen = now;
        if let Some(version) = version {
            entry.version = version;
        }
        if !online {
            self.sent.remove(host);
        }
        let peers: Vec<PeerRecord> = entry.peers.values().cloned().collect();
        Change {
            origin: host.clone(),
            touched: peers.iter().map(|p| p.id.clone()).collect(),
            watchers: self.watchers(host, &peers),
            origin_view: false,
            refused: Vec::new(),
        }
    }

    /// Applies a host's report of its own peers. Refused as a whole if it
    /// names a peer of another host or puts a peer in a private group of
    /// another host that the hub did not grant; a membership the group list
    /// does not allow is dropped (the rest applies: an honest host that
    /// joined a listed group by mistake keeps working). Returns what
    /// changed.
    pub fn apply(&mut self, host: &HostName, delta: &RosterDelta) -> Result<Change, RosterRefusal> {
        let claimed = delta
            .upserts
            .iter()
            .map(|p| &p.record.id)
            .chain(&delta.removed);
        if let Some(foreign) = claimed.into_iter().find(|id| id.host != *host) {
            return Err(RosterRefusal::NotOwner {
                host: host.clone(),
                peer: foreign.clone(),
            });
        }
        for p in &delta.upserts {
            self.grants.check(host, &p.record)?;
        }
        let (upserts, refused) = self.screen(host, delta);
        let entry = self.hosts.entry(host.clone()).or_default();
        let mut touched: Vec<PeerRecord> = Vec::new();
        let old: Vec<PeerRecord> = if delta.reset {
            entry.refused.clear();
            std::mem::take(&mut entry.peers).into_values().collect()
        } else {
            for id in &delta.removed {
                entry.refused.remove(id);
            }
            delta
                .removed
                .iter()
                .chain(delta.upserts.iter().map(|p| &p.record.id))
                .filter_map(|id| entry.peers.remove(id))
                .collect()
        };
        for peer in &old {
            self.unindex(peer);
        }
        let groups_before: BTreeSet<GroupName> = old.iter().flat_map(|p| p.memberships()).collect();
        touched.extend(old);
        let entry = self.hosts.entry(host.clone()).or_default();
        for (record, dropped) in &upserts {
            entry.peers.insert(record.id.clone(), record.clone());
            match dropped.is_empty() {
                true => entry.refused.remove(&record.id),
                false => entry.refused.insert(record.id.clone(), dropped.clone()),
            };
        }
        let groups_after: BTreeSet<GroupName> = upserts
            .iter()
            .flat_map(|(record, _)| record.memberships())
            .collect();
        for (record, _) in upserts {
            self.index(&record);
            touched.push(record);
        }
        Ok(Change {
            origin: host.clone(),
            watchers: self.watchers(host, &touched),
            touched: touched.into_iter().map(|p| p.id).collect(),
            // The same groups before and after (a host that sends its
            // roster again on relinking): what the origin sees is as it was.
            origin_view: groups_before != groups_after,
            refused,
        })
    }

    /// The hosts with a peer in a group of `peers`, `host` excluded. Each
    /// group is looked at once, and its members' hosts are gathered in a
    /// hash set before the few distinct ones are ordered.
    fn watchers(&self, host: &HostName, peers: &[PeerRecord]) -> BTreeSet<HostName> {
        let groups: foldhash::HashSet<GroupName> =
            peers.iter().flat_map(|p| p.memberships()).collect();
        let hosts: foldhash::HashSet<&HostName> = groups
            .iter()
            .filter_map(|g| self.groups.get(g))
            .flatten()
            .map(|id| &id.host)
            .filter(|h| *h != host)
            .collect();
        hosts.into_iter().cloned().collect()
    }
}

#[cfg(test)]
#[path = "roster_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "roster_walk_tests.rs"]
mod walk_tests;
