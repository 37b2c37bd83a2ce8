//! Deliveries numbered by the core and pushed before their commit: the
//! core gives each admitted forward its delivery seqs (one per host, above
//! every seq the store has used) and keeps the deliveries here until the
//! queue writer reports the forward's outcome, so a linked host gets a
//! message while the hub's disk works instead of after it.
//!
//! The core leaves out hosts that have the message in the store already
//! (queued or delivered: the repeat is answered at once), so a host is
//! never sent a message twice for a repeated forward.
//!
//! Order is the rule: per host, deliveries go out in seq order behind what
//! the store holds ([`super::deliver`]). Once any forward fails, every
//! delivery still waiting for its outcome is held (not pushed) until that
//! outcome arrives: a later message of the failed sender must not reach
//! its host before the failed one comes again. Pure bookkeeping: no
//! sockets, no store.

use std::collections::{BTreeMap, HashMap};

use flotilla_actors::federation::Deliver;
use flotilla_actors::model::Message;
use flotilla_actors::names::{HostName, PeerId};

/// One delivery waiting for its forward's outcome.
#[derive(Debug)]
struct Fresh {
    deliver: Deliver,
    /// Not pushed until its outcome: a forward before it failed.
    held: bool,
}

/// The deliveries waiting for their forwards' outcomes, by host.
#[derive(Debug, Default)]
pub(crate) struct FreshDeliveries {
    /// The last delivery seq numbered.
    last: u64,
    by_host: HashMap<HostName, BTreeMap<u64, Fresh>>,
}

impl FreshDeliveries {
    /// Numbering starts above `floor` (the store's highest delivery seq).
    pub(crate) fn new(floor: u64) -> Self {
        Self {
            last: floor,
            by_host: HashMap::new(),
        }
    }

    /// Numbers `message`'s deliveries, one per host of `by_host` in its
    /// order, and keeps them until [`Self::settled`]; their seqs. A
    /// delivery of a message still waiting here for the same host (a
    /// repeat of a forward not yet committed) is held: the queue writer
    /// decides whether it is new, and the host is not sent it twice.
    pub(crate) fn number(
        &mut self,
        message: &Message,
        by_host: &BTreeMap<HostName, Vec<PeerId>>,
    ) -> Vec<u64> {
        let mut seqs = Vec::with_capacity(by_host.len());
        for (host, to) in by_host {
            self.last += 1;
            let waiting = self.by_host.entry(host.clone()).or_default();
            let held = waiting.values().any(|f| {
                f.deliver.message.id == message.id && f.deliver.message.from == message.from
            });
            let deliver = Deliver {
                seq: self.last,
                message: message.clone(),
                to: to.clone(),
            };
            waiting.insert(self.last, Fresh { deliver, held });
            seqs.push(self.last);
        }
        seqs
    }

    /// A forward's outcome arrived (its deliveries are in the store now,
    /// or were not stored): they leave. A failure holds every delivery
    /// still waiting.
    pub(crate) fn settled<'a>(
        &mut self,
        hosts: impl Iterator<Item = &'a HostName>,
        seqs: &[u64],
        failed: bool,
    ) {
        for (host, seq) in hosts.zip(seqs) {
            if let Some(waiting) = self.by_host.get_mut(host) {
                waiting.remove(seq);
                if waiting.is_empty() {
                    self.by_host.remove(host);
                }
            }
        }
        if failed {
            for fresh in self.by_host.values_mut().flat_map(|w| w.values_mut()) {
                fresh.held = true;
            }
        }
    }

    /// `host`'s deliveries after seq `after` that may be pushed now, in
    /// order, up to the first held one.
    pub(crate) fn pushable<'s>(
        &'s self,
        host: &HostName,
        after: u64,
    ) -> impl Iterator<Item = &'s Deliver> + 's {
        self.by_host
            .get(host)
            .into_iter()
            .flat_map(move |w| w.range(after.saturating_add(1)..))
            .map(|(_, f)| f)
            .take_while(|f| !f.held)
            .map(|f| &f.deliver)
    }
}

#[cfg(test)]
#[path = "fresh_tests.rs"]
mod tests;
