//! What each linked host was last told it may see, kept small: per host a
//! map from a shared peer id (one allocation per peer for the whole hub,
//! not one per host that sees it) to a fingerprint of the peer as sent.
//! A changed fingerprint means the host must hear of the peer again. Pure
//! bookkeeping; the roster decides what a host may see.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use flotilla_actors::federation::RosterPeer;
use flotilla_actors::names::{HostName, PeerId};

/// A peer as sent, in 8 bytes (SipHash with fixed keys: stable within a
/// run, which is all a comparison with what was sent needs).
pub(crate) fn fingerprint(peer: &RosterPeer) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    peer.hash(&mut hasher);
    hasher.finish()
}

/// The views sent to linked hosts.
#[derive(Debug, Default)]
pub(crate) struct SentViews {
    views: HashMap<HostName, HashMap<Arc<PeerId>, u64>>,
    /// One shared id per peer that is in some view.
    ids: HashMap<PeerId, Arc<PeerId>>,
}

impl SentViews {
    fn shared(&mut self, id: &PeerId) -> Arc<PeerId> {
        self.ids
            .entry(id.clone())
            .or_insert_with(|| Arc::new(id.clone()))
            .clone()
    }

    /// `host` was sent `view` whole.
    pub(crate) fn replace(&mut self, host: &HostName, view: &BTreeMap<PeerId, RosterPeer>) {
        let told = view
            .iter()
            .map(|(id, peer)| (self.shared(id), fingerprint(peer)))
            .collect();
        self.views.insert(host.clone(), told);
    }

    /// `host`'s link is down: it will get a whole view again.
    pub(crate) fn remove(&mut self, host: &HostName) {
        self.views.remove(host);
        if self.views.is_empty() {
            self.ids.clear();
        }
    }

    /// Whether `host` was sent a view (it is linked).
    pub(crate) fn has(&self, host: &HostName) -> bool {
        self.views.contains_key(host)
    }

    /// Records that `host` now sees `peer` as it is; `false` if it was
    /// told exactly that already.
    pub(crate) fn tell(&mut self, host: &HostName, peer: &RosterPeer) -> bool {
        let print = fingerprint(peer);
        if self
            .views
            .get(host)
            .and_then(|v| v.get(&peer.record.id))
            .is_some_and(|p| *p == print)
        {
            return false;
        }
        let id = self.shared(&peer.record.id);
        self.views
            .entry(host.clone())
            .or_default()
            .insert(id, print);
        true
    }

    /// Records that `host` no longer sees `id`; `false` if it did not.
    pub(crate) fn hide(&mut self, host: &HostName, id: &PeerId) -> bool {
        self.views
            .get_mut(host)
            .is_some_and(|v| v.remove(id).is_some())
    }

    /// The peers `host` was told of, if it is linked.
    pub(crate) fn told(&self, host: &HostName) -> Option<Vec<PeerId>> {
        self.views
            .get(host)
            .map(|v| v.keys().map(|id| PeerId::clone(id)).collect())
    }
}
