//! The store's side of the hub's running clock ([`crate::hub_clock`]): its
//! watermark, kept under `meta` `hub_clock`, read when the store opens and
//! written by the core's expiry sweep and at stop. Queue times and the
//! handled record are read on this clock. A crash loses at most the time
//! since the last write, which only makes queued messages live longer.

use redb::{ReadableTable, WriteTransaction};

use super::{HubStore, HubStoreError, META};
use crate::hub_clock::HubClock;
use flotilla_actors::model::Timestamp;

/// The key of the watermark in `meta`.
const WATERMARK: &str = "hub_clock";

/// The clock of a store being opened, resumed from its watermark.
pub(super) fn resume(txn: &WriteTransaction) -> Result<HubClock, HubStoreError> {
    let watermark = txn.open_table(META)?.get(WATERMARK)?.map(|v| v.value());
    Ok(HubClock::resume(watermark, Timestamp::now().0))
}

impl HubStore {
    /// The hub's running clock now, as queue times are kept.
    pub fn now(&self) -> Timestamp {
        Timestamp(self.clock.now_ms())
    }

    /// Keeps the clock's reading (the hub's "alive" watermark); durable
    /// with the next durable commit.
    pub fn save_clock(&self) -> Result<(), HubStoreError> {
        let txn = self.lazy_write()?;
        txn.open_table(META)?
            .insert(WATERMARK, self.clock.now_ms())?;
        txn.commit()?;
        Ok(())
    }
}
