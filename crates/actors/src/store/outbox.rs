//! Messages that cross hosts, in the host's store: what each sender sent
//! and what became of it at every recipient (the outbox), and the queue of
//! messages still to hand to the hub. (Messages the hub delivers from
//! other hosts are accepted in `received`.)
//!
//! Owns the tables `outbox`, `outgoing` and `sent_by` (schema version 3).
//! A message for remote peers is held (its body counted once in
//! `messages`) until the hub has it on disk or refuses it; states only
//! move forward: accepted, queued at the hub, then delivered or dropped.
//! Must not decide who may receive what (the directory and the hub do).
//! Its reads are `outbox_reads`'.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::mail::{StoredMessage, release};
use super::mail_tables::{BytesTable, CountTable, MailTables};
use super::outbox_verdict::Verdict;
use super::schema::{MESSAGES, META, OUTBOX, OUTGOING, SENT_BY};
use crate::codec;
use crate::federation::{ForwardOutcome, Receipt, ReceiptState};
use crate::model::{Message, Timestamp};
use crate::names::{MessageId, PeerId};

pub(super) const RECORD_LIMIT: usize = codec::HARD_LIMIT;
/// Outbox entries kept per sender; older ones in a final state are pruned.
pub const OUTBOX_KEEP: u64 = 1000;
/// How many of a sender's oldest entries one message looks at to prune.
const PRUNE_SCAN: usize = 16;
/// An entry the hub took but never answered for is pruned after 30 days.
const OUTBOX_STALE_MS: u64 = 30 * 24 * 3600 * 1000;
const OUT_SEQ_KEY: &str = "out_seq";
/// `meta` key: the bytes of bodies waiting for the hub (since version 5).
pub(crate) const OUT_BYTES_KEY: &str = "out_bytes";

/// How much may wait for the hub on this host (`outbox_max_messages`,
/// `outbox_max_bytes`): while the hub is away, messages for other hosts
/// beyond it are refused, not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxRoom {
    /// Messages waiting.
    pub messages: u64,
    /// Bytes of their bodies.
    pub bytes: u64,
}

impl Default for OutboxRoom {
    fn default() -> Self {
        Self {
            messages: 100_000,
            bytes: 512 * 1024 * 1024,
        }
    }
}

/// Refuses a message of `body` bytes for other hosts when the queue to the
/// hub is full.
pub(crate) fn check_room(
    t: &MailTables<'_>,
    room: &OutboxRoom,
    body: usize,
) -> Result<(), StoreError> {
    use redb::ReadableTableMetadata;
    let waiting = t.outbox.len()?;
    let bytes = t.meta.get(OUT_BYTES_KEY)?.map_or(0, |v| v.value());
    if waiting >= room.messages || bytes.saturating_add(body as u64) > room.bytes {
        return Err(StoreError::OutboxFull(format!(
            "{waiting} messages ({bytes} bytes) already wait for the hub, the most this host \
             keeps (outbox_max_messages = {}, outbox_max_bytes = {}); \
             send again once the hub link is back (flotilla status shows it)",
            room.messages, room.bytes
        )));
    }
    Ok(())
}

fn add_out_bytes(meta: &mut CountTable<'_>, delta: i64) -> Result<(), StoreError> {
    let now = meta.get(OUT_BYTES_KEY)?.map_or(0, |v| v.value());
    meta.insert(OUT_BYTES_KEY, now.saturating_add_signed(delta))?;
    Ok(())
}

/// Where a message stands for one recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// On this host's disk, not yet taken by the hub (the link is down, the
    /// hub has not answered, or it could not store it for now and the
    /// message is sent again; `reason` then says why).
    Accepted,
    /// On the hub's disk, waiting for the recipient's host.
    Queued,
    /// In the recipient's inbox.
    Delivered,
    /// Never to be delivered; `reason` says why.
    Dropped,
}

impl DeliveryState {
    fn is_final(self) -> bool {
        matches!(self, Self::Delivered | Self::Dropped)
    }
}

/// One recipient of a sent message and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecipientState {
    /// The recipient.
    pub peer: PeerId,
    /// Where the message stands for it.
    pub state: DeliveryState,
    /// Why it was dropped (refused by the hub, expired, the peer left), or
    /// why it still waits for the hub.
    pub reason: Option<String>,
}

impl RecipientState {
    pub(super) fn set(&mut self, state: DeliveryState, reason: Option<String>) {
        self.state = state;
        self.reason = reason;
    }
}

/// A sent message in its sender's outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutboxEntry {
    /// The message id.
    pub id: MessageId,
    /// The sender's sequence number.
    pub seq: u64,
    /// When this host accepted it.
    pub sent_at: Timestamp,
    /// Its summary.
    pub summary: Option<String>,
    /// Every recipient and its state.
    pub recipients: Vec<RecipientState>,
    /// While waiting for the hub: the position in this host's queue.
    pub out_seq: Option<u64>,
}

/// The next position in the queue for the hub, taken now, when a message
/// has `remote` recipients.
pub(crate) fn take_position(
    t: &mut MailTables<'_>,
    remote: &[PeerId],
) -> Result<Option<u64>, StoreError> {
    if remote.is_empty() {
        return Ok(None);
    }
    let next = t.meta.get(OUT_SEQ_KEY)?.map(|v| v.value()).unwrap_or(0) + 1;
    t.meta.insert(OUT_SEQ_KEY, next)?;
    Ok(Some(next))
}

/// Records a newly accepted message in its sender's outbox; `remote`
/// recipients are queued for the hub at `out_seq` (from [`take_position`];
/// the message's body stays held).
pub(crate) fn record_sent(
    t: &mut MailTables<'_>,
    message: &Message,
    remote: &[PeerId],
    out_seq: Option<u64>,
) -> Result<(), StoreError> {
    if let Some(pos) = out_seq {
        t.outbox.insert(pos, message.id.as_str())?;
        add_out_bytes(&mut t.meta, message.body.len() as i64)?;
    }
    let recipients = message
        .to
        .iter()
        .map(|peer| RecipientState {
            peer: peer.clone(),
            state: if remote.contains(peer) {
                DeliveryState::Accepted
            } else {
                DeliveryState::Delivered
            },
            reason: None,
        })
        .collect();
    let entry = OutboxEntry {
        id: message.id.clone(),
        seq: message.seq,
        sent_at: message.sent_at,
        summary: message.summary.clone(),
        recipients,
        out_seq,
    };
    put_entry(&mut t.outgoing, &entry)?;
    let from = message.from.to_string();
    t.sent_by
        .insert((from.as_str(), message.seq), message.id.as_str())?;
    if let Some(old_seq) = message.seq.checked_sub(OUTBOX_KEEP) {
        prune(t, &from, old_seq, message.sent_at)?;
    }
    Ok(())
}

/// Prunes the sender's entries numbered `upto` and below, oldest first,
/// looking at most at [`PRUNE_SCAN`] of them: those in a final state, and
/// those older than [`OUTBOX_STALE_MS`] that no longer hold a body for the
/// hub (a receipt that never came). An entry left now is looked at again
/// at the sender's next message, so none stays for good.
fn prune(t: &mut MailTables<'_>, from: &str, upto: u64, now: Timestamp) -> Result<(), StoreError> {
    let mut old = Vec::new();
    for row in t.sent_by.range((from, 0)..=(from, upto))?.take(PRUNE_SCAN) {
        let (k, v) = row?;
        old.push((k.value().1, v.value().to_owned()));
    }
    for (seq, id) in old {
        let gone = match entry(&t.outgoing, &id)? {
            None => true,
            Some(e) => {
                e.recipients.iter().all(|r| r.state.is_final())
                    || (e.out_seq.is_none() && now.0.saturating_sub(e.sent_at.0) > OUTBOX_STALE_MS)
            }
        };
        if gone {
            t.sent_by.remove((from, seq))?;
            t.outgoing.remove(id.as_str())?;
        }
    }
    Ok(())
}

fn put_entry(outgoing: &mut BytesTable<'_>, entry: &OutboxEntry) -> Result<(), StoreError> {
    outgoing.insert(entry.id.as_str(), codec::encode(entry)?.as_slice())?;
    Ok(())
}

fn entry(outgoing: &BytesTable<'_>, id: &str) -> Result<Option<OutboxEntry>, StoreError> {
    let got = outgoing.get(id)?;
    Ok(match got {
        Some(v) => Some(codec::decode(v.value(), RECORD_LIMIT)?),
        None => None,
    })
}

/// A sender was renamed: its outbox entries move to the new name (an
/// entry of an earlier holder of that name with the same number gives
/// way), and the messages it queued for the hub, not yet taken, are sent
/// under the new name (the hub no longer knows the old one).
pub(crate) fn rename_sender(
    txn: &WriteTransaction,
    old: &PeerId,
    new: &PeerId,
) -> Result<(), StoreError> {
    let (old_key, new_key) = (old.to_string(), new.to_string());
    let mut sent_by = txn.open_table(SENT_BY)?;
    let mut moved = Vec::new();
    for row in sent_by.range((old_key.as_str(), 0)..=(old_key.as_str(), u64::MAX))? {
        let (k, v) = row?;
        moved.push((k.value().1, v.value().to_owned()));
    }
    let mut outgoing = txn.open_table(OUTGOING)?;
    for (seq, id) in moved {
        sent_by.remove((old_key.as_str(), seq))?;
        let replaced = sent_by
            .insert((new_key.as_str(), seq), id.as_str())?
            .map(|v| v.value().to_owned());
        if let Some(replaced) = replaced
            && entry(&outgoing, &replaced)?
                .is_some_and(|e| e.recipients.iter().all(|r| r.state.is_final()))
        {
            outgoing.remove(replaced.as_str())?;
        }
    }
    drop((sent_by, outgoing));
    let waiting: Vec<String> = {
        let outbox = txn.open_table(OUTBOX)?;
        let mut out = Vec::new();
        for row in outbox.iter()? {
            out.push(row?.1.value().to_owned());
        }
        out
    };
    let mut messages = txn.open_table(MESSAGES)?;
    for key in waiting {
        let stored = messages
            .get(key.as_str())?
            .map(|v| codec::decode::<StoredMessage>(v.value(), RECORD_LIMIT));
        if let Some(mut stored) = stored.transpose()?
            && stored.message.from == *old
        {
            stored.message.from = new.clone();
            messages.insert(key.as_str(), codec::encode(&stored)?.as_slice())?;
        }
    }
    Ok(())
}

/// The hub answered a forward: the message leaves the queue, and its
/// remote recipients are queued at the hub or dropped; after a transient
/// refusal it stays in the queue, to be sent again, and its recipients
/// say why they wait.
pub(crate) fn forwarded(
    txn: &WriteTransaction,
    id: &MessageId,
    outcome: &ForwardOutcome,
) -> Result<(), StoreError> {
    let mut outgoing = txn.open_table(OUTGOING)?;
    let Some(mut e) = entry(&outgoing, id.as_str())? else {
        return Ok(());
    };
    let Some(verdict) = e.apply_verdict(outcome) else {
        return Ok(());
    };
    put_entry(&mut outgoing, &e)?;
    drop(outgoing);
    let Verdict::Left(out_seq) = verdict else {
        return Ok(());
    };
    txn.open_table(OUTBOX)?.remove(out_seq)?;
    let body = release(txn, id.as_str())?.unwrap_or(0);
    add_out_bytes(&mut txn.open_table(META)?, -(body as i64))
}

/// A receipt from the hub: the named recipients got the message, or never
/// will.
pub(crate) fn receipt(txn: &WriteTransaction, receipt: &Receipt) -> Result<(), StoreError> {
    let mut outgoing = txn.open_table(OUTGOING)?;
    let Some(mut e) = entry(&outgoing, receipt.id.as_str())? else {
        return Ok(());
    };
    for r in e
        .recipients
        .iter_mut()
        .filter(|r| receipt.to.contains(&r.peer))
    {
        if !r.state.is_final() {
            match &receipt.state {
                ReceiptState::Delivered => r.set(DeliveryState::Delivered, None),
                ReceiptState::Dropped { reason } => {
                    r.set(DeliveryState::Dropped, Some(reason.clone()))
                }
            }
        }
    }
    put_entry(&mut outgoing, &e)
}
