//! The operator's group list in the roster: screening a host's roster
//! change, and screening every host again when the list changes (a
//! membership the new list allows comes back, one it refuses goes). Part
//! of [`super`]; no IO.

use std::collections::BTreeSet;

use flotilla_actors::federation::RosterDelta;
use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, HostName, PeerId};

use super::{Change, HubRoster};
use crate::group_policy::GroupPolicy;

/// A screened roster entry: what the hub keeps, and what it dropped.
type Screened = (PeerRecord, BTreeSet<GroupName>);

impl HubRoster {
    /// The operator's group list in force.
    pub fn policy(&self) -> &GroupPolicy {
        &self.policy
    }

    /// Puts `policy` in force; returns what changed, one [`Change`] per
    /// host whose peers gained or lost a membership.
    pub fn set_policy(&mut self, policy: GroupPolicy) -> Vec<Change> {
        self.policy = policy;
        let hosts: Vec<HostName> = self.hosts.keys().cloned().collect();
        hosts.iter().filter_map(|h| self.rescreen(h)).collect()
    }

    /// The upserts of `delta` as the list lets `host` have them, and every
    /// membership dropped.
    pub(super) fn screen(
        &self,
        host: &HostName,
        delta: &RosterDelta,
    ) -> (Vec<Screened>, Vec<(PeerId, GroupName)>) {
        let screened: Vec<Screened> = delta
            .upserts
            .iter()
            .map(|p| self.policy.screen(host, &p.record))
            .collect();
        let refused = dropped(&screened);
        (screened, refused)
    }

    /// Screens `host`'s peers again, as they reported them.
    fn rescreen(&mut self, host: &HostName) -> Option<Change> {
        let entry = self.hosts.get(host)?;
        let changed: Vec<(PeerRecord, Screened)> = entry
            .peers
            .values()
            .filter_map(|peer| {
                let mut reported = peer.clone();
                let refused = entry.refused.get(&peer.id).into_iter().flatten();
                reported.groups.extend(refused.cloned());
                let screened = self.policy.screen(host, &reported);
                (screened.0.groups != peer.groups).then(|| (peer.clone(), screened))
            })
            .collect();
        if changed.is_empty() {
            return None;
        }
        let screened: Vec<Screened> = changed.iter().map(|(_, s)| s.clone()).collect();
        let mut touched = Vec::new();
        for (old, (new, refused)) in changed {
            self.unindex(&old);
            self.index(&new);
            let entry = self.hosts.get_mut(host)?;
            match refused.is_empty() {
                true => entry.refused.remove(&new.id),
                false => entry.refused.insert(new.id.clone(), refused),
            };
            entry.peers.insert(new.id.clone(), new.clone());
            touched.extend([old, new]);
        }
        Some(Change {
            origin: host.clone(),
            watchers: self.watchers(host, &touched),
            touched: touched.into_iter().map(|p| p.id).collect(),
            origin_view: true,
            refused: dropped(&screened),
        })
    }
}

/// Every membership dropped from `screened`, by peer.
fn dropped(screened: &[Screened]) -> Vec<(PeerId, GroupName)> {
    screened
        .iter()
        .flat_map(|(p, gs)| gs.iter().map(|g| (p.id.clone(), g.clone())))
        .collect()
}
