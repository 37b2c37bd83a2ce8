//! Messages the hub delivers from other hosts, in the host's store: their
//! acceptance into the inboxes of their recipients here, once per
//! (sender, id), and the lookup of a received id for a reply.
//!
//! Message ids are chosen by clients, so an id names a message only
//! together with its sender: a message from another host is remembered in
//! `received` under (id, sender) (schema version 4), and held in
//! `messages` and the inboxes under [`message_key`], which no id of a
//! local sender can equal. Messages of local senders keep their bare id
//! (ids are unique among the senders of one host; the hub and receipts
//! rely on it). Must not decide who may receive what.

use redb::{ReadableDatabase, ReadableTable};

use super::mail::{StoredMessage, bump};
use super::mail_tables::MailTables;
use super::schema::{HOST_SEQ_KEY, RECEIVED, SEEN};
use super::{SeenRecord, Store, StoreError};
use crate::codec;
use crate::federation::Deliver;
use crate::names::{MessageId, PeerId};

const RECORD_LIMIT: usize = codec::HARD_LIMIT;

/// The key of a message from another host in `messages` and the inboxes:
/// `HOST/NAME/ID` (an id has no `/`, so the key names one sender's id).
pub(crate) fn message_key(from: &PeerId, id: &MessageId) -> String {
    format!("{from}/{id}")
}

/// The message id of a key of `messages` (a bare id, or [`message_key`]).
pub(crate) fn id_of_key(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// The recipients that had this (sender, id) stored here when it was
/// delivered before (recorded in `received`, or, for a delivery stored
/// before version 4, in `seen` under the bare id with the same sender);
/// `None` if it was not delivered before.
fn delivered_before(t: &MailTables<'_>, d: &Deliver) -> Result<Option<Vec<PeerId>>, StoreError> {
    let (id, from) = (d.message.id.as_str(), d.message.from.to_string());
    if let Some(old) = t.received.get((id, from.as_str()))? {
        let old: SeenRecord = codec::decode(old.value(), RECORD_LIMIT)?;
        return Ok(Some(old.to));
    }
    let Some(old) = t.seen.get(id)? else {
        return Ok(None);
    };
    let old: SeenRecord = codec::decode(old.value(), RECORD_LIMIT)?;
    Ok((old.from == d.message.from).then_some(old.to))
}

/// Stores a message the hub delivers from another host in the inboxes of
/// its recipients here. A message already stored (a delivery repeated
/// after a lost acknowledgement) is not stored again; another sender's
/// message with the same id is another message. Returns the recipients
/// that are no longer peers of this host: for a repeated delivery, those
/// that were not stored the first time (a repeat must not turn a peer that
/// had left into a delivered one).
pub(crate) fn accept_delivery(
    t: &mut MailTables<'_>,
    d: &Deliver,
) -> Result<Vec<PeerId>, StoreError> {
    if let Some(stored_for) = delivered_before(t, d)? {
        return Ok(repeat_gone(&d.to, &stored_for));
    }
    let mut here = Vec::new();
    let mut gone = Vec::new();
    for p in &d.to {
        if t.peers.get(p.to_string().as_str())?.is_some() {
            here.push(p.clone());
        } else {
            gone.push(p.clone());
        }
    }
    let record = SeenRecord {
        from: d.message.from.clone(),
        to: here.clone(),
        seq: d.message.seq,
        sent_at: d.message.sent_at,
    };
    let from = d.message.from.to_string();
    t.received.insert(
        (d.message.id.as_str(), from.as_str()),
        codec::encode(&record)?.as_slice(),
    )?;
    super::retention::remembered(t, d.message.id.as_str(), &from, super::retention::IDS_KEEP)?;
    if here.is_empty() {
        return Ok(gone);
    }
    let key = message_key(&d.message.from, &d.message.id);
    let host_seq = bump(&mut t.meta, HOST_SEQ_KEY)?;
    for r in &here {
        let r = r.to_string();
        t.inbox.insert((r.as_str(), host_seq), key.as_str())?;
        super::retention::inbox_added(&mut t.inbox_depth, &r, 1)?;
    }
    let stored = StoredMessage {
        message: d.message.clone(),
        pending: here.len() as u32,
    };
    t.messages
        .insert(key.as_str(), codec::encode(&stored)?.as_slice())?;
    Ok(gone)
}

impl Store {
    /// Every message with this id that `reader` received, from any sender
    /// (a local one, or ones on other hosts): what a reply answers.
    pub fn received(&self, reader: &PeerId, id: &MessageId) -> Result<Vec<SeenRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let mut out: Vec<SeenRecord> = Vec::new();
        if let Some(v) = txn.open_table(SEEN)?.get(id.as_str())? {
            out.push(codec::decode(v.value(), RECORD_LIMIT)?);
        }
        let table = txn.open_table(RECEIVED)?;
        for row in table.range((id.as_str(), "")..)? {
            let (key, v) = row?;
            if key.value().0 != id.as_str() {
                break;
            }
            out.push(codec::decode(v.value(), RECORD_LIMIT)?);
        }
        out.retain(|r| r.to.contains(reader));
        Ok(out)
    }
}

/// The recipients of a repeated delivery that were not stored the first
/// time: the same answer as the first delivery gave.
fn repeat_gone(to: &[PeerId], stored_for: &[PeerId]) -> Vec<PeerId> {
    to.iter()
        .filter(|p| !stored_for.contains(p))
        .cloned()
        .collect()
}
