//! The other hosts' peers as the hub last announced them, kept so that a
//! daemon started again knows them before its hub link is back: a message
//! to one of them is then accepted into the outbox (and forwarded once the
//! link is up) rather than refused as an unknown peer. The hub still
//! decides every forward. Owns the `remote_roster` table only.

use std::collections::BTreeMap;

use redb::{ReadableDatabase, ReadableTable};

use super::schema::REMOTE_ROSTER;
use super::{Store, StoreError};
use crate::codec;
use crate::federation::RosterPeer;
use crate::names::PeerId;

/// Largest stored entry read back.
const ENTRY_LIMIT: usize = 64 * 1024;

impl Store {
    /// The remote peers last saved; an entry that no longer reads is left
    /// out.
    pub fn remote_roster(&self) -> Result<BTreeMap<PeerId, RosterPeer>, StoreError> {
        let db = self.db()?;
        let txn = db.begin_read()?;
        let mut out = BTreeMap::new();
        for row in txn.open_table(REMOTE_ROSTER)?.iter()? {
            let (_, bytes) = row?;
            if let Ok(peer) = codec::decode::<RosterPeer>(bytes.value(), ENTRY_LIMIT) {
                out.insert(peer.record.id.clone(), peer);
            }
        }
        Ok(out)
    }

    /// Replaces the saved remote peers with `peers`. The commit does not
    /// wait for the disk: it becomes durable with the next durable commit
    /// (losing it only means the peers are learned again from the hub).
    pub fn save_remote_roster(
        &self,
        peers: &BTreeMap<PeerId, RosterPeer>,
    ) -> Result<(), StoreError> {
        let db = self.db()?;
        let mut txn = db.begin_write()?;
        txn.set_durability(redb::Durability::None)?;
        {
            let mut table = txn.open_table(REMOTE_ROSTER)?;
            table.retain(|_, _| false)?;
            for (id, peer) in peers {
                table.insert(id.to_string().as_str(), codec::encode(peer)?.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}
