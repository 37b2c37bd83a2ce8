//! The tables a group of queue writes touches, opened once for the whole
//! group (opening and closing a redb table cost about as much as a write,
//! and one forward touches up to seven), and the bookkeeping every queue
//! write shares on them: the hub's sequence, taking a delivery off its
//! queue, and the receipts for its sender. Must not decide routing or
//! quotas; while a `QueueTables` lives nothing else may open these tables
//! in the same transaction.

use flotilla_actors::codec;
use flotilla_actors::federation::{Receipt, ReceiptState};
use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{HostName, PeerId};
use redb::{ReadableTable, Table, WriteTransaction};

use super::handled::{HANDLED, HANDLED_BY_AGE};
use super::{BY_AGE, HubStoreError, META, QUEUE, QUEUED_IDS, Queued, RECEIPTS, RECORD_LIMIT};

/// Every table of the queues, open in one write transaction.
pub(super) struct QueueTables<'t> {
    pub(super) meta: Table<'t, &'static str, u64>,
    pub(super) queue: Table<'t, (&'static str, u64), &'static [u8]>,
    pub(super) queued_ids: Table<'t, (&'static str, &'static str, &'static str), u64>,
    pub(super) by_age: Table<'t, (u64, &'static str, u64), ()>,
    pub(super) receipts: Table<'t, (&'static str, u64), &'static [u8]>,
    pub(super) handled: Table<'t, (&'static str, &'static str, &'static str), u64>,
    pub(super) handled_by_age: Table<'t, (u64, &'static str, &'static str, &'static str), ()>,
}

impl<'t> QueueTables<'t> {
    /// Opens them all.
    pub(super) fn open(txn: &'t WriteTransaction) -> Result<Self, HubStoreError> {
        Ok(Self {
            meta: txn.open_table(META)?,
            queue: txn.open_table(QUEUE)?,
            queued_ids: txn.open_table(QUEUED_IDS)?,
            by_age: txn.open_table(BY_AGE)?,
            receipts: txn.open_table(RECEIPTS)?,
            handled: txn.open_table(HANDLED)?,
            handled_by_age: txn.open_table(HANDLED_BY_AGE)?,
        })
    }

    /// The hub's next sequence number for a receipt (and, in records
    /// logged before the core numbered deliveries, for a delivery).
    pub(super) fn next_seq(&mut self) -> Result<u64, HubStoreError> {
        let next = self.meta.get(SEQ)?.map(|v| v.value()).unwrap_or(0) + 1;
        self.meta.insert(SEQ, next)?;
        Ok(next)
    }

    /// Delivery `seq`, numbered by the core, was queued or skipped: the
    /// hub's sequence is raised to it, so the core starts above it after a
    /// restart (and an older hub, which numbers deliveries from this
    /// sequence, never reuses it).
    pub(super) fn note_delivery_seq(&mut self, seq: u64) -> Result<(), HubStoreError> {
        if self.meta.get(SEQ)?.is_none_or(|v| v.value() < seq) {
            self.meta.insert(SEQ, seq)?;
        }
        Ok(())
    }
}

/// The meta key of the hub's sequence: every delivery and receipt seq is at
/// most this.
pub(super) const SEQ: &str = "seq";

/// Takes `host`'s delivery `seq` off its queue (remembered as handled at
/// `now`); `None` if it was not queued.
pub(super) fn take_queued(
    t: &mut QueueTables<'_>,
    host: &HostName,
    seq: u64,
    now: Timestamp,
) -> Result<Option<Queued>, HubStoreError> {
    let Some(bytes) = t.queue.remove((host.as_str(), seq))? else {
        return Ok(None);
    };
    let queued: Queued = codec::decode(bytes.value(), RECORD_LIMIT)?;
    drop(bytes);
    let from = queued.message.from.to_string();
    t.queued_ids
        .remove((host.as_str(), from.as_str(), queued.message.id.as_str()))?;
    t.by_age.remove((queued.queued_at.0, host.as_str(), seq))?;
    super::handled::record(t, host, &queued.message, now.0)?;
    Ok(Some(queued))
}

/// Records receipts of `message` owed to `sender`'s host; the receipts.
pub(super) fn add_receipts(
    t: &mut QueueTables<'_>,
    sender: &HostName,
    message: &Message,
    receipts: Vec<(Vec<PeerId>, ReceiptState)>,
) -> Result<Vec<Receipt>, HubStoreError> {
    let mut made = Vec::new();
    for (to, state) in receipts {
        let seq = t.next_seq()?;
        let receipt = Receipt {
            seq,
            id: message.id.clone(),
            to,
            state,
        };
        t.receipts
            .insert((sender.as_str(), seq), codec::encode(&receipt)?.as_slice())?;
        made.push(receipt);
    }
    Ok(made)
}
