//! Peers in the store: registration, removal, renaming and last-seen times.

use std::collections::BTreeMap;

use redb::{ReadableDatabase, ReadableTable, WriteTransaction};

use super::commit::{CommitQueue, unexpected};
use super::mail::{drop_inbox, inbox_keys};
use super::schema::{INBOX, LAST_SEEN, PEERS, SENDER_SEQ};
use super::write_op::{WriteDone, WriteOp};
use super::{Store, StoreError};
use crate::codec;
use crate::model::{PeerRecord, Timestamp};
use crate::names::{GroupName, PeerId};

const RECORD_LIMIT: usize = 1024 * 1024;

/// The commit queue's writes of peers.
impl CommitQueue {
    /// Registers or updates a peer.
    pub async fn put_peer(&self, peer: PeerRecord) -> Result<(), StoreError> {
        self.write(WriteOp::PutPeer(peer)).await.map(drop)
    }

    /// Removes a peer; returns how many unread messages were dropped.
    pub async fn remove_peer(&self, id: PeerId, force: bool) -> Result<u64, StoreError> {
        self.count(WriteOp::RemovePeer { id, force }).await
    }

    /// Renames a peer; returns its new record.
    pub async fn rename_peer(&self, old: PeerId, new: PeerId) -> Result<PeerRecord, StoreError> {
        match self.write(WriteOp::RenamePeer { old, new }).await? {
            WriteDone::Peer(p) => Ok(p),
            other => Err(unexpected(other)),
        }
    }

    /// Records last-seen times.
    pub async fn touch(&self, seen: Vec<(PeerId, Timestamp)>) -> Result<(), StoreError> {
        self.write(WriteOp::Touch(seen)).await.map(drop)
    }
}

impl Store {
    /// Every registered peer.
    pub fn load_peers(&self) -> Result<Vec<PeerRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(PEERS)?;
        let mut peers = Vec::new();
        for row in table.iter()? {
            let (_, value) = row?;
            peers.push(codec::decode(value.value(), RECORD_LIMIT)?);
        }
        Ok(peers)
    }

    /// When each peer last made a request, as last flushed.
    pub fn load_last_seen(&self) -> Result<BTreeMap<PeerId, Timestamp>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(LAST_SEEN)?;
        let mut out = BTreeMap::new();
        for row in table.iter()? {
            let (k, v) = row?;
            if let Ok(id) = PeerId::parse(k.value()) {
                out.insert(id, Timestamp(v.value()));
            }
        }
        Ok(out)
    }
}

/// Inserts or replaces a peer.
pub(crate) fn put_peer(txn: &WriteTransaction, peer: &PeerRecord) -> Result<(), StoreError> {
    let bytes = codec::encode(peer)?;
    txn.open_table(PEERS)?
        .insert(peer.id.to_string().as_str(), bytes.as_slice())?;
    Ok(())
}

/// Removes a peer. With unread messages it refuses unless `force`, in which
/// case they are dropped; returns how many were dropped.
pub(crate) fn remove_peer(
    txn: &WriteTransaction,
    id: &PeerId,
    force: bool,
) -> Result<u64, StoreError> {
    let key = id.to_string();
    if txn.open_table(PEERS)?.get(key.as_str())?.is_none() {
        return Err(StoreError::Rejected(format!("no peer {id}")));
    }
    let unread = inbox_keys(txn, &key)?.len() as u64;
    if unread > 0 && !force {
        return Err(StoreError::Rejected(format!(
            "{id} has {unread} unread message(s)"
        )));
    }
    drop_inbox(txn, &key)?;
    txn.open_table(PEERS)?.remove(key.as_str())?;
    txn.open_table(LAST_SEEN)?.remove(key.as_str())?;
    Ok(unread)
}

/// Renames a peer: its record, inbox, last-seen time and outbox move to
/// the new id (what it queued for the hub is sent under the new name),
/// its sequence number goes on under the new id without going back, and
/// every peer that was in the old private group is moved to the new one.
pub(crate) fn rename_peer(
    txn: &WriteTransaction,
    old: &PeerId,
    new: &PeerId,
) -> Result<PeerRecord, StoreError> {
    let (old_key, new_key) = (old.to_string(), new.to_string());
    let mut peers = txn.open_table(PEERS)?;
    if peers.get(new_key.as_str())?.is_some() {
        return Err(StoreError::Rejected(format!("{new} already exists")));
    }
    let mut record: PeerRecord = match peers.remove(old_key.as_str())? {
        Some(v) => codec::decode(v.value(), RECORD_LIMIT)?,
        None => return Err(StoreError::Rejected(format!("no peer {old}"))),
    };
    drop(peers);
    record.id = new.clone();
    put_peer(txn, &record)?;
    move_private_group(txn, old, new)?;
    let seqs = inbox_keys(txn, &old_key)?;
    super::retention::inbox_removed(txn, &old_key, seqs.len() as u64)?;
    super::retention::inbox_added(
        &mut txn.open_table(super::schema::INBOX_DEPTH)?,
        &new_key,
        seqs.len() as u64,
    )?;
    let mut inbox = txn.open_table(INBOX)?;
    for seq in seqs {
        let id = inbox
            .remove((old_key.as_str(), seq))?
            .map(|v| v.value().to_owned());
        if let Some(id) = id {
            inbox.insert((new_key.as_str(), seq), id.as_str())?;
        }
    }
    let mut last_seen = txn.open_table(LAST_SEEN)?;
    let moved = last_seen.remove(old_key.as_str())?.map(|v| v.value());
    if let Some(v) = moved {
        last_seen.insert(new_key.as_str(), v)?;
    }
    drop(last_seen);
    // A sender's numbers never go back: the new name goes on from the
    // higher of the two, and the old name keeps its own for whoever takes
    // it next.
    let mut seqs = txn.open_table(SENDER_SEQ)?;
    let old_seq = seqs.get(old_key.as_str())?.map(|v| v.value());
    let new_seq = seqs.get(new_key.as_str())?.map(|v| v.value());
    if let Some(seq) = old_seq.max(new_seq) {
        seqs.insert(new_key.as_str(), seq)?;
    }
    drop(seqs);
    super::outbox::rename_sender(txn, old, new)?;
    Ok(record)
}

fn move_private_group(
    txn: &WriteTransaction,
    old: &PeerId,
    new: &PeerId,
) -> Result<(), StoreError> {
    let (old_group, new_group) = (GroupName::session(old), GroupName::session(new));
    let members: Vec<PeerRecord> = {
        let table = txn.open_table(PEERS)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (_, v) = row?;
            let p: PeerRecord = codec::decode(v.value(), RECORD_LIMIT)?;
            if p.groups.contains(&old_group) {
                out.push(p);
            }
        }
        out
    };
    for mut p in members {
        p.groups.remove(&old_group);
        p.groups.insert(new_group.clone());
        put_peer(txn, &p)?;
    }
    Ok(())
}

/// Records last-seen times.
pub(crate) fn touch(
    txn: &WriteTransaction,
    seen: &[(PeerId, Timestamp)],
) -> Result<(), StoreError> {
    let peers = txn.open_table(PEERS)?;
    let mut table = txn.open_table(LAST_SEEN)?;
    for (id, at) in seen {
        let key = id.to_string();
        if peers.get(key.as_str())?.is_some() {
            table.insert(key.as_str(), at.0)?;
        }
    }
    Ok(())
}
