//! What each linked host was last told it may see, kept small: per host a
//! map from a peer's number (each peer id is kept once for the whole hub,
//! not once per host that sees it) to a fingerprint of the peer as sent,
//! 12 bytes an entry.
//! A changed fingerprint means the host must hear of the peer again. Pure
//! bookkeeping; the roster decides what a host may see.

use std::hash::{BuildHasher, Hash, Hasher};

use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{HostName, PeerId};

/// The seed of [`fingerprint_of`]'s hash.
const FINGERPRINT_SEED: u64 = 0x666c_6f74_696c_6c61;

/// A peer as sent: 64 bits of foldhash with a fixed seed (stable within a
/// run, which is all a comparison with what was sent needs; a collision
/// would only leave one host's view of one peer stale until it changes
/// again), as two words so that an entry packs into 12 bytes. Taken of a
/// peer not (yet) made into a `RosterPeer`: the hub works out what
/// changed before it clones anything.
pub(crate) fn fingerprint_of(record: &PeerRecord, online: bool) -> [u32; 2] {
    let mut hasher = foldhash::fast::FixedState::with_seed(FINGERPRINT_SEED).build_hasher();
    record.hash(&mut hasher);
    online.hash(&mut hasher);
    let h = hasher.finish();
    [(h >> 32) as u32, h as u32]
}

/// What one host was told: a peer's number to its fingerprint as sent.
pub(crate) type SentView = foldhash::HashMap<u32, [u32; 2]>;

/// Records in `told` that its host now sees peer `n` as fingerprinted;
/// `false` if it was told exactly that already.
pub(crate) fn tell(told: &mut SentView, n: u32, print: [u32; 2]) -> bool {
    told.insert(n, print) != Some(print)
}

/// The views sent to linked hosts.
#[derive(Debug, Default)]
pub(crate) struct SentViews {
    views: foldhash::HashMap<HostName, SentView>,
    /// The number of each peer that is or was in some view, and back.
    numbers: foldhash::HashMap<PeerId, u32>,
    ids: Vec<PeerId>,
}

impl SentViews {
    pub(crate) fn number(&mut self, id: &PeerId) -> u32 {
        if let Some(n) = self.numbers.get(id) {
            return *n;
        }
        let n = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.push(id.clone());
        self.numbers.insert(id.clone(), n);
        n
    }

    /// `host` was sent a whole view: each peer's number and fingerprint.
    pub(crate) fn replace(&mut self, host: &HostName, told: SentView) {
        self.views.insert(host.clone(), told);
    }

    /// `host`'s link is down: it will get a whole view again.
    pub(crate) fn remove(&mut self, host: &HostName) {
        self.views.remove(host);
        if self.views.is_empty() {
            self.numbers.clear();
            self.ids.clear();
        }
    }

    /// Whether `host` was sent a view (it is linked).
    pub(crate) fn has(&self, host: &HostName) -> bool {
        self.views.contains_key(host)
    }

    /// What `host` was told, to record in place what it is told now: a
    /// peer's number to its fingerprint as sent. `None` if it was not sent
    /// a view (it is not linked).
    pub(crate) fn told_mut(&mut self, host: &HostName) -> Option<&mut SentView> {
        self.views.get_mut(host)
    }

    /// Records that `host` no longer sees any peer but those numbered in
    /// `keep`; returns the peers it saw and no longer does.
    pub(crate) fn hide_all_but(
        &mut self,
        host: &HostName,
        keep: &foldhash::HashSet<u32>,
    ) -> Vec<PeerId> {
        let Some(view) = self.views.get_mut(host) else {
            return Vec::new();
        };
        let mut gone = Vec::new();
        view.retain(|n, _| {
            let kept = keep.contains(n);
            if !kept && let Some(id) = self.ids.get(*n as usize) {
                gone.push(id.clone());
            }
            kept
        });
        gone
    }
}
