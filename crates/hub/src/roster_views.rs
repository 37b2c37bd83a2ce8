//! What each linked host may see, and what it must be told after a change:
//! the views part of [`HubRoster`]. A change, or a burst of them gathered
//! ([`super::Untold`]), is looked at once (each
//! touched peer looked up, numbered and fingerprinted once, not once per
//! host that sees it), and hosts that must be told the same thing get one
//! delta together, so the hub encodes it once.
//! Must not touch sockets, the store or the clock.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_actors::federation::{RosterDelta, RosterPeer};
use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, HostName, PeerId};

use super::sent::{fingerprint_of, tell};
use super::{Change, HostEntry, HubRoster, Untold};

/// What a host is told of one touched peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Told {
    Nothing,
    Upsert,
    Removed,
}

/// A peer a change touched, as it is now.
struct Touched<'a> {
    id: &'a PeerId,
    number: u32,
    /// Its record, whether its host is linked, and their fingerprint;
    /// `None` once it is gone.
    now: Option<(&'a PeerRecord, bool, [u32; 2])>,
    /// The hosts with a peer that shares a group with it now.
    seers: foldhash::HashSet<&'a HostName>,
}

impl HubRoster {
    /// The peers of other hosts that share a group with a peer of `host`,
    /// built whole and apart from the views' bookkeeping: the tests'
    /// oracle for what each host was told.
    #[cfg(test)]
    pub fn view_for(&self, host: &HostName) -> BTreeMap<PeerId, RosterPeer> {
        view_by(&self.hosts, &self.groups, host, |id| id)
            .into_values()
            .map(|(id, record, online)| {
                let peer = RosterPeer {
                    record: record.clone(),
                    online,
                };
                (id.clone(), peer)
            })
            .collect()
    }

    /// The whole view for a host whose link just came up, in the order of
    /// the peers' ids; what it was told is numbered and fingerprinted as
    /// it is made, with nothing cloned but the records sent.
    pub fn reset_view(&mut self, host: &HostName) -> RosterDelta {
        let view = view_by(&self.hosts, &self.groups, host, |id| self.sent.number(id));
        let mut told = foldhash::HashMap::with_capacity_and_hasher(view.len(), Default::default());
        let mut upserts = Vec::with_capacity(view.len());
        for (n, (_, record, online)) in view {
            told.insert(n, fingerprint_of(record, online));
            upserts.push(RosterPeer {
                record: record.clone(),
                online,
            });
        }
        upserts.sort_unstable_by(|a: &RosterPeer, b| a.record.id.cmp(&b.record.id));
        self.sent.replace(host, told);
        RosterDelta {
            reset: true,
            upserts,
            removed: Vec::new(),
        }
    }

    /// What each linked host must be told after `change`, a delta per
    /// host (see [`HubRoster::grouped_view_deltas`]).
    pub fn view_deltas(&mut self, change: &Change) -> Vec<(HostName, RosterDelta)> {
        self.grouped_view_deltas(change)
            .into_iter()
            .flat_map(|(hosts, delta)| hosts.into_iter().map(move |h| (h, delta.clone())))
            .collect()
    }

    /// What the linked hosts must be told after `change`, each delta with
    /// every host that must be told exactly it (see
    /// [`HubRoster::untold_deltas`]).
    pub fn grouped_view_deltas(&mut self, change: &Change) -> Vec<(Vec<HostName>, RosterDelta)> {
        let mut untold = Untold::default();
        untold.add(change);
        self.untold_deltas(&untold)
    }

    /// What the linked hosts must be told after the changes gathered in
    /// `untold`, each delta with every host that must be told exactly it:
    /// for the watchers, only the touched peers are looked at again (so a
    /// change costs its size times the hosts that see it, not the whole
    /// federation), and a host is never told of its own peers; the views of
    /// the hosts whose groups may have changed are recomputed.
    pub fn untold_deltas(&mut self, untold: &Untold) -> Vec<(Vec<HostName>, RosterDelta)> {
        let mut by_told: BTreeMap<Vec<Told>, Vec<HostName>> = BTreeMap::new();
        let touched: Vec<Touched<'_>> = untold
            .touched
            .iter()
            .map(|id| {
                let now = self.hosts.get(&id.host).and_then(|h| {
                    let p = h.peers.get(id)?;
                    Some((p, h.online, fingerprint_of(p, h.online)))
                });
                let seers = match now {
                    Some((record, ..)) => seers(&self.groups, record),
                    None => foldhash::HashSet::default(),
                };
                Touched {
                    id,
                    number: self.sent.number(id),
                    now,
                    seers,
                }
            })
            .collect();
        for host in &untold.watchers {
            // A host not sent a view is not linked: it is told nothing.
            let Some(view) = self.sent.told_mut(host) else {
                continue;
            };
            let told: Vec<Told> = touched
                .iter()
                .map(|t| match t.now.filter(|_| t.sees(host)) {
                    Some((.., print)) if tell(view, t.number, print) => Told::Upsert,
                    Some(_) => Told::Nothing,
                    None if view.remove(&t.number).is_some() => Told::Removed,
                    None => Told::Nothing,
                })
                .collect();
            if told.iter().any(|t| *t != Told::Nothing) {
                by_told.entry(told).or_default().push(host.clone());
            }
        }
        let mut out: Vec<(Vec<HostName>, RosterDelta)> = by_told
            .into_iter()
            .map(|(told, hosts)| (hosts, delta_of(&touched, &told)))
            .collect();
        for host in &untold.recompute {
            if let Some(delta) = self.recompute(host) {
                out.push((vec![host.clone()], delta));
            }
        }
        out
    }

    /// The whole view of a linked host again, as a diff with what it was
    /// told; only what changed is cloned.
    fn recompute(&mut self, host: &HostName) -> Option<RosterDelta> {
        if !self.sent.has(host) {
            return None;
        }
        let after = view_by(&self.hosts, &self.groups, host, |id| self.sent.number(id));
        let view = self.sent.told_mut(host)?;
        let mut kept = foldhash::HashSet::with_capacity_and_hasher(after.len(), Default::default());
        let mut upserts = Vec::new();
        for (n, (_, record, online)) in after {
            kept.insert(n);
            if tell(view, n, fingerprint_of(record, online)) {
                let record = record.clone();
                upserts.push(RosterPeer { record, online });
            }
        }
        let removed = self.sent.hide_all_but(host, &kept);
        (!upserts.is_empty() || !removed.is_empty()).then_some(RosterDelta {
            reset: false,
            upserts,
            removed,
        })
    }
}

/// A peer in a view, borrowed: its id, its record, whether its host is
/// linked.
type Seen<'a> = (&'a PeerId, &'a PeerRecord, bool);

/// The peers of other hosts that share a group with a peer of `host`,
/// each under `key` of its id (the hub keys them by their numbers, which
/// it needs anyway, so that an id is hashed once). Each host met is looked
/// up once, however many of its peers the view holds.
fn view_by<'a, K: std::hash::Hash + Eq>(
    hosts: &'a BTreeMap<HostName, HostEntry>,
    groups: &'a foldhash::HashMap<GroupName, BTreeSet<PeerId>>,
    host: &HostName,
    mut key: impl FnMut(&'a PeerId) -> K,
) -> foldhash::HashMap<K, Seen<'a>> {
    let mut view = foldhash::HashMap::default();
    let Some(entry) = hosts.get(host) else {
        return view;
    };
    let mut entries: foldhash::HashMap<&HostName, Option<&HostEntry>> = Default::default();
    let theirs: BTreeSet<GroupName> = entry.peers.values().flat_map(|p| p.memberships()).collect();
    for group in &theirs {
        for id in groups.get(group).into_iter().flatten() {
            if id.host == *host {
                continue;
            }
            // One look-up of the key, whether it is new to the view or not.
            if let std::collections::hash_map::Entry::Vacant(slot) = view.entry(key(id))
                && let Some(owner) = *entries
                    .entry(&id.host)
                    .or_insert_with(|| hosts.get(&id.host))
                && let Some(record) = owner.peers.get(id)
            {
                slot.insert((id, record, owner.online));
            }
        }
    }
    view
}

impl Touched<'_> {
    /// Whether `host` may see this peer now: not its own, and sharing a
    /// group with one of its peers.
    fn sees(&self, host: &HostName) -> bool {
        self.id.host != *host && self.seers.contains(host)
    }
}

/// The hosts with a peer that shares a group with `peer`: the members of
/// its groups (its private group included), found through the index. A
/// peer in one of `peer`'s groups is in that group's index entry, and a
/// peer whose private group `peer` is in has that group among its own
/// memberships, so both ways of sharing a group are found.
fn seers<'a>(
    groups: &'a foldhash::HashMap<GroupName, BTreeSet<PeerId>>,
    peer: &PeerRecord,
) -> foldhash::HashSet<&'a HostName> {
    peer.memberships()
        .filter_map(|g| groups.get(&g))
        .flatten()
        .map(|id| &id.host)
        .collect()
}

/// The delta that tells `told` of the `touched` peers.
fn delta_of(touched: &[Touched<'_>], told: &[Told]) -> RosterDelta {
    let mut delta = RosterDelta {
        reset: false,
        upserts: Vec::new(),
        removed: Vec::new(),
    };
    for (t, told) in touched.iter().zip(told) {
        match (told, t.now) {
            (Told::Upsert, Some((record, online, _))) => delta.upserts.push(RosterPeer {
                record: record.clone(),
                online,
            }),
            (Told::Removed, _) => delta.removed.push(t.id.clone()),
            _ => {}
        }
    }
    delta
}
