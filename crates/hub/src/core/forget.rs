//! Forgetting hosts that never come back, in the hub's core: at each
//! expiry sweep, an offline host not seen for longer than
//! [`QueueLimits::forget_hosts_after`](super::QueueLimits) (by its
//! `last_seen`, on the wall clock) leaves the roster and the store, the
//! hosts that saw its peers are told, each message queued for it is
//! `dropped` for its sender, and the operator reads it in the hub's log.
//! A host forgotten and back later links as a new one.

use flotilla_actors::federation::Frame;
use flotilla_actors::model::Timestamp;

use super::CoreState;

impl CoreState {
    /// Forgets the hosts away for longer than the retention.
    pub(super) fn forget_hosts(&mut self) {
        let after = self.limits.forget_hosts_after;
        let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        let cutoff = Timestamp(Timestamp::now().0.saturating_sub(after_ms));
        for host in self.roster.not_seen_since(cutoff) {
            if self.links.contains_key(&host) {
                continue;
            }
            let days = after.as_secs() / 86_400;
            let why = format!(
                "{host} was away from the hub for longer than forget_hosts_after_secs ({} s, {days} days); the hub forgot it",
                after.as_secs()
            );
            let forgotten = match self.store.forget_host(&host, &why) {
                Ok(forgotten) => forgotten,
                Err(e) => {
                    tracing::error!(%host, "cannot forget a host: {e}");
                    continue;
                }
            };
            let peers = self.roster.forget(&host).map(|change| {
                self.tell(&change);
                change.touched.len()
            });
            self.depths.remove(&host);
            tracing::warn!(
                %host,
                peers = peers.unwrap_or(0),
                queued = forgotten.freed.len(),
                "forgot a host not seen for longer than forget_hosts_after_secs: its roster, its queue and the receipts it was owed are removed"
            );
            for (sender, receipt) in forgotten.receipts {
                self.send(&sender, Frame::Receipt(receipt));
            }
        }
    }
}
