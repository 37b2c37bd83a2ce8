//! Messages in the store: acceptance with dedupe and per-sender sequence
//! numbers, inbox reads, acknowledgements, and the consistency check.

use std::collections::BTreeMap;

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::forward_feed::GroupFeed;
use super::mail_tables::MailTables;
use super::retention;
use super::schema::{HOST_SEQ_KEY, INBOX, INBOX_DEPTH, MESSAGES, SEEN, table_names};
use super::{Store, StoreError};
use crate::codec;
use crate::federation::Forward;
use crate::model::{Message, Timestamp};
use crate::names::{GroupName, MessageId, PeerId};

/// Decoding limit for one stored message: the largest configurable message
/// plus its envelope.
const MESSAGE_LIMIT: usize = codec::HARD_LIMIT;

/// A message the router admitted, before the store gives it its numbers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewMessage {
    /// Sender-chosen id.
    pub id: MessageId,
    /// Verified sender.
    pub from: PeerId,
    /// Recipients (already admitted).
    pub to: Vec<PeerId>,
    /// Group, for a broadcast.
    pub group: Option<GroupName>,
    /// Summary.
    pub summary: Option<String>,
    /// Text.
    pub body: String,
    /// Answered message.
    pub in_reply_to: Option<MessageId>,
    /// Acceptance time.
    pub sent_at: Timestamp,
    /// How much may wait for the hub; a message for other hosts beyond it
    /// is refused.
    pub outbox_room: super::OutboxRoom,
}

/// What the store remembers of every accepted id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenRecord {
    /// The sender.
    pub from: PeerId,
    /// The recipients.
    pub to: Vec<PeerId>,
    /// The sender's sequence number.
    pub seq: u64,
    /// When it was accepted.
    pub sent_at: Timestamp,
}

/// The result of accepting a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptOutcome {
    /// Stored now.
    Stored(SeenRecord),
    /// The id was accepted before; nothing new was stored.
    Duplicate(SeenRecord),
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StoredMessage {
    pub(crate) message: Message,
    /// How many inboxes still hold it (plus one while it waits for the hub).
    pub(crate) pending: u32,
}

/// Accepts one message inside a write transaction, its tables open; a
/// message for other hosts goes to `fed` (with its outbox position) as
/// soon as it can no longer be refused, when the hub link takes forwards
/// before the commit.
pub(crate) fn accept(
    t: &mut MailTables<'_>,
    m: NewMessage,
    fed: Option<&mut GroupFeed<'_>>,
) -> Result<AcceptOutcome, StoreError> {
    let id = m.id.as_str().to_owned();
    if let Some(prev) = t.seen.get(id.as_str())? {
        let prev: SeenRecord = codec::decode(prev.value(), MESSAGE_LIMIT)?;
        if prev.from != m.from {
            return Err(StoreError::Rejected(format!(
                "message id {id} was already used by another sender; pick a new id"
            )));
        }
        return Ok(AcceptOutcome::Duplicate(prev));
    }
    // Recipients on other hosts are the hub's to check; local ones must
    // still be registered.
    let (local, remote): (Vec<PeerId>, Vec<PeerId>) =
        m.to.iter().cloned().partition(|p| p.host == m.from.host);
    for who in std::iter::once(&m.from).chain(local.iter()) {
        if t.peers.get(who.to_string().as_str())?.is_none() {
            return Err(StoreError::Rejected(format!(
                "{who} is no longer registered"
            )));
        }
    }
    if !remote.is_empty() {
        super::outbox::check_room(t, &m.outbox_room, m.body.len())?;
    }
    // Every rule is checked: from here on only a storage failure, which
    // fails the whole group, stops the message.
    let seq = bump(&mut t.sender_seq, &m.from.to_string())?;
    let record = SeenRecord {
        from: m.from.clone(),
        to: m.to.clone(),
        seq,
        sent_at: m.sent_at,
    };
    let message = Message {
        id: m.id,
        from: m.from,
        to: m.to,
        group: m.group,
        summary: m.summary,
        body: m.body,
        sent_at: m.sent_at,
        seq,
        in_reply_to: m.in_reply_to,
    };
    let out_seq = super::outbox::take_position(t, &remote)?;
    if let (Some(fed), Some(pos)) = (fed, out_seq) {
        let to = remote.clone();
        fed.push(
            pos,
            Forward {
                message: message.clone(),
                to,
            },
        );
    }
    t.seen
        .insert(id.as_str(), codec::encode(&record)?.as_slice())?;
    retention::remembered(t, id.as_str(), "", retention::IDS_KEEP)?;
    if !message.to.is_empty() {
        if !local.is_empty() {
            let host_seq = bump(&mut t.meta, HOST_SEQ_KEY)?;
            for r in &local {
                let r = r.to_string();
                t.inbox.insert((r.as_str(), host_seq), id.as_str())?;
                retention::inbox_added(&mut t.inbox_depth, &r, 1)?;
            }
        }
        let pending = local.len() as u32 + u32::from(!remote.is_empty());
        super::outbox::record_sent(t, &message, &remote, out_seq)?;
        let bytes = codec::encode(&StoredMessage { message, pending })?;
        t.messages.insert(id.as_str(), bytes.as_slice())?;
    }
    Ok(AcceptOutcome::Stored(record))
}

pub(crate) fn bump(table: &mut redb::Table<&str, u64>, key: &str) -> Result<u64, StoreError> {
    let next = table.get(key)?.map(|v| v.value()).unwrap_or(0) + 1;
    table.insert(key, next)?;
    Ok(next)
}

/// The inbox sequence numbers of one peer, oldest first.
pub(crate) fn inbox_keys(txn: &WriteTransaction, peer: &str) -> Result<Vec<u64>, StoreError> {
    let inbox = txn.open_table(INBOX)?;
    let mut keys = Vec::new();
    for row in inbox.range((peer, 0)..=(peer, u64::MAX))? {
        keys.push(row?.0.value().1);
    }
    Ok(keys)
}

/// Removes every inbox entry of a peer, releasing the messages.
pub(crate) fn drop_inbox(txn: &WriteTransaction, peer: &str) -> Result<(), StoreError> {
    let seqs = inbox_keys(txn, peer)?;
    retention::inbox_removed(txn, peer, seqs.len() as u64)?;
    for seq in seqs {
        let id = txn
            .open_table(INBOX)?
            .remove((peer, seq))?
            .map(|v| v.value().to_owned());
        if let Some(id) = id {
            release(txn, &id)?;
        }
    }
    Ok(())
}

/// One holder of message `id` let go of it (an inbox read it, or the
/// hub took it); the message goes once none holds it. The length of its
/// body, if it was held.
pub(crate) fn release(txn: &WriteTransaction, id: &str) -> Result<Option<usize>, StoreError> {
    let mut messages = txn.open_table(MESSAGES)?;
    let stored = messages
        .get(id)?
        .map(|v| codec::decode::<StoredMessage>(v.value(), MESSAGE_LIMIT))
        .transpose()?;
    let Some(mut s) = stored else {
        return Ok(None);
    };
    let body = s.message.body.len();
    if s.pending > 1 {
        s.pending -= 1;
        messages.insert(id, codec::encode(&s)?.as_slice())?;
    } else {
        messages.remove(id)?;
    }
    Ok(Some(body))
}

/// Acknowledges messages of one inbox; returns how many were removed.
pub(crate) fn ack(
    txn: &WriteTransaction,
    peer: &PeerId,
    ids: &[MessageId],
) -> Result<u64, StoreError> {
    let key = peer.to_string();
    // An id names one entry per time it is given: two senders' messages
    // with the same id take the id twice, oldest first.
    let mut wanted: BTreeMap<&str, usize> = BTreeMap::new();
    for id in ids {
        *wanted.entry(id.as_str()).or_default() += 1;
    }
    let mut found = Vec::new();
    {
        let inbox = txn.open_table(INBOX)?;
        for row in inbox.range((key.as_str(), 0)..=(key.as_str(), u64::MAX))? {
            if wanted.is_empty() {
                break;
            }
            let (k, v) = row?;
            let id = super::received::id_of_key(v.value());
            if let Some(n) = wanted.get_mut(id) {
                *n -= 1;
                if *n == 0 {
                    wanted.remove(id);
                }
                found.push((k.value().1, v.value().to_owned()));
            }
        }
    }
    for (seq, id) in &found {
        txn.open_table(INBOX)?.remove((key.as_str(), *seq))?;
        release(txn, id)?;
    }
    retention::inbox_removed(txn, &key, found.len() as u64)?;
    Ok(found.len() as u64)
}

impl Store {
    /// The oldest messages of a peer's inbox, at most `limit`, and no more
    /// than `byte_budget` of bodies (always at least one); and how many remain.
    pub fn fetch_inbox(
        &self,
        peer: &PeerId,
        limit: usize,
        byte_budget: usize,
    ) -> Result<(Vec<Message>, u64), StoreError> {
        let txn = self.db()?.begin_read()?;
        let inbox = txn.open_table(INBOX)?;
        let messages = txn.open_table(MESSAGES)?;
        let key = peer.to_string();
        let total = txn
            .open_table(INBOX_DEPTH)?
            .get(key.as_str())?
            .map_or(0, |v| v.value());
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        for row in inbox.range((key.as_str(), 0)..=(key.as_str(), u64::MAX))? {
            let (_, id) = row?;
            if out.len() >= limit || (bytes >= byte_budget && !out.is_empty()) {
                break;
            }
            if let Some(v) = messages.get(id.value())? {
                let stored: StoredMessage = codec::decode(v.value(), MESSAGE_LIMIT)?;
                bytes += stored.message.body.len();
                out.push(stored.message);
            }
        }
        let remaining = total.saturating_sub(out.len() as u64);
        Ok((out, remaining))
    }

    /// What the store remembers of an accepted id.
    pub fn seen(&self, id: &MessageId) -> Result<Option<SeenRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(SEEN)?;
        let got = table.get(id.as_str())?;
        Ok(match got {
            Some(v) => Some(codec::decode(v.value(), MESSAGE_LIMIT)?),
            None => None,
        })
    }

    /// Unacknowledged messages per peer.
    pub fn inbox_depths(&self) -> Result<BTreeMap<String, u64>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let mut out = BTreeMap::new();
        for row in txn.open_table(INBOX_DEPTH)?.iter()? {
            let (k, v) = row?;
            out.insert(k.value().to_owned(), v.value());
        }
        Ok(out)
    }

    /// Unacknowledged inbox entries in all.
    pub fn queued(&self) -> Result<u64, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(INBOX)?.len()?)
    }

    /// Reads every record and checks that inboxes, messages and their
    /// reference counts agree. Returns a one-line report.
    pub fn verify(&self) -> Result<String, StoreError> {
        let txn = self.db()?.begin_read()?;
        let mut refs: BTreeMap<String, u32> = BTreeMap::new();
        let mut depths: BTreeMap<String, u64> = BTreeMap::new();
        let inbox = txn.open_table(INBOX)?;
        for row in inbox.iter()? {
            let (k, v) = row?;
            *refs.entry(v.value().to_owned()).or_insert(0) += 1;
            *depths.entry(k.value().0.to_owned()).or_insert(0) += 1;
        }
        if depths != self.inbox_depths()? {
            return Err(StoreError::Rejected(
                "the inbox counts do not match the inboxes".into(),
            ));
        }
        for row in txn.open_table(super::schema::OUTBOX)?.iter()? {
            *refs.entry(row?.1.value().to_owned()).or_insert(0) += 1;
        }
        let messages = txn.open_table(MESSAGES)?;
        for row in messages.iter()? {
            let (k, v) = row?;
            let stored: StoredMessage = codec::decode(v.value(), MESSAGE_LIMIT)?;
            let held = refs.remove(k.value()).unwrap_or(0);
            if held != stored.pending {
                return Err(StoreError::Rejected(format!(
                    "message {} is held by {held} inboxes but counts {}",
                    k.value(),
                    stored.pending
                )));
            }
        }
        if let Some((id, _)) = refs.into_iter().next() {
            return Err(StoreError::Rejected(format!(
                "an inbox holds missing message {id}"
            )));
        }
        let peers = self.load_peers()?.len();
        Ok(format!(
            "{} tables, {peers} peers, {} messages, {} inbox entries, {} ids seen: consistent",
            table_names().len(),
            messages.len()?,
            inbox.len()?,
            txn.open_table(SEEN)?.len()?
        ))
    }
}
