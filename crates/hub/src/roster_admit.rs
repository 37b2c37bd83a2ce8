//! The roster's decision on a forwarded message: from whom, to whom, in
//! which scope. Refusals say which rule refused, the operator's group list
//! included. Part of [`super`]; no IO.

use std::collections::BTreeMap;

use flotilla_actors::federation::{Forward, ForwardRefusal};
use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, HostName, PeerId};

use super::{HubRoster, Refused};

impl HubRoster {
    /// Decides a forward from `host`: its recipients grouped by their host,
    /// or why it is refused (as a whole).
    pub fn admit(
        &self,
        host: &HostName,
        forward: &Forward,
    ) -> Result<BTreeMap<HostName, Vec<PeerId>>, Refused> {
        let m = &forward.message;
        if m.from.host != *host {
            let why = format!("{host} cannot send as {}, a peer of another host", m.from);
            return Err((ForwardRefusal::NotOwner, why));
        }
        let Some(source) = self.peer(&m.from) else {
            let why = format!("{} is not in the hub's roster of {host}", m.from);
            return Err((ForwardRefusal::UnknownPeer, why));
        };
        if forward.to.is_empty() {
            return Err((ForwardRefusal::Malformed, "no recipients".to_owned()));
        }
        let mut by_host: BTreeMap<HostName, Vec<PeerId>> = BTreeMap::new();
        for id in &forward.to {
            if id.host == *host {
                let why = format!("{id} is on the sending host; it is not routed by the hub");
                return Err((ForwardRefusal::Malformed, why));
            }
            let Some(target) = self.peer(id) else {
                return Err((ForwardRefusal::UnknownPeer, format!("{id}: no such peer")));
            };
            if !self.in_scope(source, target, m.group.as_ref()) {
                let why = self.out_of_scope(source, target, m.group.as_ref());
                return Err((ForwardRefusal::OutOfScope, why));
            }
            let list = by_host.entry(id.host.clone()).or_default();
            if !list.contains(id) {
                list.push(id.clone());
            }
        }
        Ok(by_host)
    }

    /// Whether `from` may reach `to`: both in the broadcast group, or
    /// sharing a group; either way a group both hosts may use.
    fn in_scope(&self, from: &PeerRecord, to: &PeerRecord, group: Option<&GroupName>) -> bool {
        let usable = |g: &GroupName| {
            self.policy.allows(&from.id.host, g) && self.policy.allows(&to.id.host, g)
        };
        match group {
            Some(g) => from.is_member(g) && to.is_member(g) && usable(g),
            None => from.memberships().any(|g| to.is_member(&g) && usable(&g)),
        }
    }

    /// Why `from` may not reach `to`: the group list's rule when it is what
    /// keeps them apart, else the groups they do not share.
    fn out_of_scope(
        &self,
        from: &PeerRecord,
        to: &PeerRecord,
        group: Option<&GroupName>,
    ) -> String {
        let reported = |p: &PeerRecord, g: &GroupName| {
            p.is_member(g) || self.refused(&p.id).is_some_and(|r| r.contains(g))
        };
        let listed: Vec<GroupName> = match group {
            Some(g) => vec![g.clone()],
            None => from
                .memberships()
                .chain(self.refused(&from.id).into_iter().flatten().cloned())
                .filter(|g| reported(to, g))
                .collect(),
        };
        let rule = listed.iter().find_map(|g| {
            let both = reported(from, g) && reported(to, g);
            let check = |h: &HostName| self.policy.check(h, g).err();
            both.then(|| check(&from.id.host).or_else(|| check(&to.id.host)))
                .flatten()
        });
        match (rule, group) {
            (Some(rule), _) => rule.to_string(),
            (None, Some(g)) => format!("{} and {} are not both in group {g}", to.id, from.id),
            (None, None) => format!("{} shares no group with {}", to.id, from.id),
        }
    }

    /// The memberships of `peer` that the group list refused.
    fn refused(&self, peer: &PeerId) -> Option<&std::collections::BTreeSet<GroupName>> {
        self.hosts.get(&peer.host)?.refused.get(peer)
    }
}
