//! Roster changes not yet told to the hosts that see them, gathered so
//! that a burst of changes (hosts linking one after another) reaches each
//! host as one delta, not one per change. Only what to look at again is
//! kept: the state told is always the roster's as it is when the deltas
//! are made ([`HubRoster::untold_deltas`]), and what each host was told is
//! kept by the views' bookkeeping, so gathering loses nothing and tells
//! nothing twice. Must not touch sockets, the store or the clock.
//!
//! [`HubRoster::untold_deltas`]: super::HubRoster::untold_deltas

use std::collections::BTreeSet;

use flotilla_actors::names::{HostName, PeerId};

use super::Change;

/// Changes gathered and not yet told.
#[derive(Debug, Default)]
pub struct Untold {
    /// Peers added, changed, removed, or whose host's link changed.
    pub(super) touched: BTreeSet<PeerId>,
    /// Hosts that may see one of them (before or after a change).
    pub(super) watchers: BTreeSet<HostName>,
    /// Hosts whose own view may have changed (their peers' groups).
    pub(super) recompute: BTreeSet<HostName>,
}

impl Untold {
    /// Adds what `change` touched.
    pub fn add(&mut self, change: &Change) {
        self.touched.extend(change.touched.iter().cloned());
        self.watchers.extend(change.watchers.iter().cloned());
        if change.origin_view {
            self.recompute.insert(change.origin.clone());
        }
    }

    /// How many peers were touched.
    pub fn touched(&self) -> usize {
        self.touched.len()
    }

    /// Whether there is nothing to tell.
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty() && self.recompute.is_empty()
    }
}
