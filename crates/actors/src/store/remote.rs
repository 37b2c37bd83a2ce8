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

    /// Applies one announcement of the hub to the saved remote peers:
    /// with `reset` they are replaced, else `upserts` are added or changed
    /// and `removed` dropped. The commit does not wait for the disk: it
    /// becomes durable with the next group the commit queue writes, which
    /// commits durably for it (losing it only means the peers are learned
    /// again from the hub).
    pub fn save_remote_changes<'a>(
        &self,
        reset: bool,
        upserts: impl IntoIterator<Item = &'a RosterPeer>,
        removed: &[PeerId],
    ) -> Result<(), StoreError> {
        let db = self.db()?;
        let mut txn = db.begin_write()?;
        txn.set_durability(redb::Durability::None)?;
        {
            let mut table = txn.open_table(REMOTE_ROSTER)?;
            if reset {
                table.retain(|_, _| false)?;
            }
            for id in removed {
                table.remove(id.to_string().as_str())?;
            }
            for peer in upserts {
                let id = peer.record.id.to_string();
                table.insert(id.as_str(), codec::encode(peer)?.as_slice())?;
            }
        }
        txn.commit()?;
        self.lazy_written();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::model::{PeerKind, PeerRecord, Timestamp};

    fn peer(id: &str, online: bool) -> RosterPeer {
        RosterPeer {
            record: PeerRecord {
                id: PeerId::parse(id).expect("id"),
                kind: PeerKind::Mailbox,
                product: None,
                groups: BTreeSet::new(),
                joined_at: Timestamp(0),
            },
            online,
        }
    }

    /// What the hub announced comes back after the store is opened again:
    /// a reset replaces, upserts change, removals drop.
    #[test]
    fn announced_peers_come_back_after_a_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("store.redb");
        let store = Store::open(&path).expect("store");
        let (a, b, c) = (peer("w/a", true), peer("w/b", true), peer("m/c", true));
        store
            .save_remote_changes(true, [&a, &b], &[])
            .expect("reset");
        let b_off = peer("w/b", false);
        store
            .save_remote_changes(false, [&b_off, &c], std::slice::from_ref(&a.record.id))
            .expect("delta");
        drop(store);
        let store = Store::open(&path).expect("reopen");
        let kept = store.remote_roster().expect("read");
        assert_eq!(
            kept.values().cloned().collect::<Vec<_>>(),
            [c.clone(), b_off]
        );
        store
            .save_remote_changes(true, [&a], &[])
            .expect("reset again");
        assert_eq!(
            store
                .remote_roster()
                .expect("read")
                .into_values()
                .collect::<Vec<_>>(),
            [a]
        );
    }
}
