//! The delivery window of one linked host: which deliveries were pushed
//! and not yet acknowledged, bounded in count ([`WINDOW`]) and in bytes
//! (half the link's outbound bound, so the deliveries in flight never fill
//! the queue that a host which does not read is cut for, and other frames
//! keep room). One delivery is always allowed when none is in flight, so a
//! message larger than the byte budget still goes. Pure bookkeeping.
//!
//! [`WINDOW`]: super::WINDOW

use std::collections::BTreeMap;

/// Deliveries pushed to one host and not yet acknowledged.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeliveryWindow {
    /// The last delivery seq pushed.
    last: u64,
    /// Each unacknowledged delivery's seq and encoded size.
    inflight: BTreeMap<u64, usize>,
    /// Their bytes.
    bytes: usize,
    /// Most unacknowledged deliveries.
    max_count: usize,
    /// Most unacknowledged bytes.
    max_bytes: usize,
}

impl DeliveryWindow {
    /// A fresh window (a link came up): everything queued is pushed again.
    pub(crate) fn new(max_count: usize, max_bytes: usize) -> Self {
        Self {
            max_count,
            max_bytes,
            ..Self::default()
        }
    }

    /// The last delivery seq pushed.
    pub(crate) fn last(&self) -> u64 {
        self.last
    }

    /// How many more deliveries may be pushed (before their sizes count).
    pub(crate) fn room(&self) -> usize {
        if self.bytes >= self.max_bytes {
            return 0;
        }
        self.max_count.saturating_sub(self.inflight.len())
    }

    /// Whether a delivery of `size` encoded bytes may be pushed now.
    pub(crate) fn admits(&self, size: usize) -> bool {
        self.inflight.is_empty()
            || (self.inflight.len() < self.max_count
                && self.bytes.saturating_add(size) <= self.max_bytes)
    }

    /// Delivery `seq` of `size` bytes was pushed.
    pub(crate) fn pushed(&mut self, seq: u64, size: usize) {
        self.last = self.last.max(seq);
        if let Some(old) = self.inflight.insert(seq, size) {
            self.bytes = self.bytes.saturating_sub(old);
        }
        self.bytes = self.bytes.saturating_add(size);
    }

    /// The host acknowledged delivery `seq`.
    pub(crate) fn acked(&mut self, seq: u64) {
        if let Some(size) = self.inflight.remove(&seq) {
            self.bytes = self.bytes.saturating_sub(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_bounded_in_bytes_as_well_as_in_count() {
        let mut window = DeliveryWindow::new(3, 100);
        assert!(window.admits(500), "one delivery always goes");
        window.pushed(1, 60);
        assert!(!window.admits(50), "60 + 50 passes the byte bound");
        assert!(window.admits(40));
        window.pushed(2, 40);
        assert_eq!(window.room(), 0, "the bytes are used up");
        window.acked(1);
        assert!(window.admits(50));
        window.pushed(3, 10);
        window.pushed(4, 10);
        assert!(!window.admits(1), "the count bound holds too");
        assert_eq!(window.last(), 4);
        window.acked(9);
        window.acked(2);
        window.acked(3);
        window.acked(4);
        assert_eq!(window.room(), 3);
    }
}
