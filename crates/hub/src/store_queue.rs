//! The queues' writes: queuing messages for their hosts (one forward's
//! deliveries, or a group of forwards and delivery bookkeeping in one
//! commit: one fsync for all of them, as the host's store groups its
//! writes), taking a delivery off its queue with its receipts, and
//! dropping acknowledged receipts. A message already queued or handled for
//! a host is not queued for it again. Must not decide routing or quotas
//! (the core does, before it asks).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use flotilla_actors::codec;
use flotilla_actors::federation::{Deliver, ReceiptState, stage};
use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{HostName, PeerId};
use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::size_of_message;
use super::{
    DeliveryDone, HubStore, HubStoreError, QueueTables, Queued, add_receipts, handled, take_queued,
};

/// One forward to queue: the message and its recipients by host.
#[derive(Debug, Serialize, Deserialize)]
pub struct Enqueue {
    /// The message.
    pub message: Message,
    /// Its recipients, by their host.
    pub by_host: BTreeMap<HostName, Vec<PeerId>>,
    /// When it was queued, on the hub's clock.
    pub now: Timestamp,
}

/// The deliveries one forward made, by host.
pub type Made = Vec<(HostName, Deliver)>;

/// One write of a group ([`HubStore::apply_group`]); serialized as is into
/// the write-ahead log (`store_log` reads it back as its owned twin).
#[derive(Debug, Clone, Copy, Serialize)]
pub enum QueueOp<'a> {
    /// Queue a forward.
    Enqueue(&'a Enqueue),
    /// `host` stored delivery `seq`.
    Delivered {
        /// The host.
        host: &'a HostName,
        /// The delivery.
        seq: u64,
        /// Recipients no longer there.
        gone: &'a [PeerId],
    },
    /// `host` has the receipts up to `seq`.
    AckReceipts {
        /// The host.
        host: &'a HostName,
        /// The last receipt it has.
        seq: u64,
    },
    /// Queue a forward under the delivery seqs the core gave it (one per
    /// host of `by_host`, in its order), already pushed to linked hosts.
    /// Last, so records logged with the variants above still read.
    EnqueueAt {
        /// The forward.
        enqueue: &'a Enqueue,
        /// Its delivery seqs.
        seqs: &'a [u64],
    },
}

impl<'a> QueueOp<'a> {
    /// The forward this op queues, if it queues one.
    pub(crate) fn enqueue(&self) -> Option<&'a Enqueue> {
        match *self {
            Self::Enqueue(e) | Self::EnqueueAt { enqueue: e, .. } => Some(e),
            _ => None,
        }
    }
}

/// What one op of a group did.
#[derive(Debug)]
pub enum QueueOpDone {
    /// The deliveries a forward made.
    Made(Made),
    /// The delivery taken off its queue, if it was there.
    Delivered(Option<super::DeliveryDone>),
    /// Receipts dropped.
    Acked,
}

impl HubStore {
    /// Applies every op of `group` in one transaction, in order: what
    /// each did, or the one error that failed them all (nothing of the
    /// group is then stored). A group that queues a message is durable
    /// before this returns: its record in the write-ahead log is synced
    /// (`store_log`) while the group is applied (the disk's wait and the
    /// CPU's work overlap, as on hosts), or the commit itself is durable;
    /// bookkeeping alone is appended unsynced and rides on the next sync
    /// (see the store's doc).
    pub fn apply_group<'a>(
        &self,
        group: impl IntoIterator<Item = QueueOp<'a>>,
    ) -> Result<Vec<QueueOpDone>, HubStoreError> {
        let ops: Vec<QueueOp<'a>> = group.into_iter().collect();
        let queues = ops.iter().any(|op| op.enqueue().is_some());
        let now = self.now();
        let mut log = self.log();
        // The write lock is held from here: no lazy write lands between
        // deciding how this group is made durable and its commit.
        let mut txn = self.db.begin_write()?;
        let lazy_before = queues && self.lazy.swap(false, Ordering::AcqRel);
        let appended = super::log::append(&mut log, &ops, now, lazy_before);
        let pending = appended.pending;
        let syncing = (queues && !pending.durable()).then(|| self.syncer.sync(log.file()));
        let applied = apply_ops(&txn, ops.iter().copied(), now).and_then(|done| {
            trace(&ops, "hub.applied");
            if !pending.durable() {
                txn.set_durability(redb::Durability::None)
                    .map_err(|e| HubStoreError::Db(Box::new(e.into())))?;
            }
            super::log::mark(&txn, pending.seq())?;
            let committing = std::time::Instant::now();
            txn.commit()?;
            if pending.durable() {
                stage::durable_commit("hub", committing.elapsed());
            }
            Ok(done)
        });
        let waiting = std::time::Instant::now();
        let synced = syncing.map(flotilla_actors::wal_sync::SyncWait::wait);
        stage::sync_waited("hub", waiting.elapsed());
        trace(&ops, "hub.synced");
        let done = match applied {
            Ok(done) => done,
            Err(e) => {
                log.refused(&pending);
                return Err(e);
            }
        };
        log.committed(&pending);
        if appended.refused {
            // The log is empty after the durable commit: its room goes back
            // to the disk, which was full.
            log.release();
        }
        if let Some(Err(e)) = synced {
            // Committed without waiting for the disk, and the record did not
            // reach it: a durable commit carries the group there instead.
            tracing::warn!(error = %e, log = %log.path().display(), "the write-ahead log could not be synced; the store commits durably instead");
            self.flush_locked(&mut log)?;
        }
        trace(&ops, "hub.committed");
        if queues {
            self.queue_commits.fetch_add(1, Ordering::Relaxed);
        }
        Ok(done)
    }

    /// Durable commits [`HubStore::apply_group`] has made.
    pub fn queue_commits(&self) -> u64 {
        self.queue_commits.load(Ordering::Relaxed)
    }
}

/// Each message queued by `ops` reached `stage` (the stage trace).
fn trace(ops: &[QueueOp<'_>], stage: &'static str) {
    if !flotilla_actors::federation::stage::on() {
        return;
    }
    for e in ops.iter().filter_map(QueueOp::enqueue) {
        flotilla_actors::federation::stage::reached(stage, &e.message.id);
    }
}

/// One op at a time, for the store's tests: each a group of one, through
/// the same [`HubStore::apply_group`] the queue writer uses.
#[cfg(test)]
impl HubStore {
    /// Queues `message` for each host of `by_host`; the deliveries made.
    pub(crate) fn enqueue(
        &self,
        message: &Message,
        by_host: &BTreeMap<HostName, Vec<PeerId>>,
        now: Timestamp,
    ) -> Result<Made, HubStoreError> {
        let e = Enqueue {
            message: message.clone(),
            by_host: by_host.clone(),
            now,
        };
        match self.apply_group([QueueOp::Enqueue(&e)])?.pop() {
            Some(QueueOpDone::Made(made)) => Ok(made),
            _ => Ok(Vec::new()),
        }
    }

    /// `host` stored delivery `seq` (`None`: it was not queued).
    pub(crate) fn delivered(
        &self,
        host: &HostName,
        seq: u64,
        gone: &[PeerId],
    ) -> Result<Option<DeliveryDone>, HubStoreError> {
        let op = QueueOp::Delivered { host, seq, gone };
        match self.apply_group([op])?.pop() {
            Some(QueueOpDone::Delivered(done)) => Ok(done),
            _ => Ok(None),
        }
    }

    /// `host` has the receipts up to `seq`.
    pub(crate) fn ack_receipts(&self, host: &HostName, seq: u64) -> Result<(), HubStoreError> {
        self.apply_group([QueueOp::AckReceipts { host, seq }])?;
        Ok(())
    }
}

/// Applies `ops` in `txn`, in order, on the hub's clock `now` (the
/// queue writer's group, or a group replayed from the log).
pub(super) fn apply_ops<'a>(
    txn: &WriteTransaction,
    ops: impl IntoIterator<Item = QueueOp<'a>>,
    now: Timestamp,
) -> Result<Vec<QueueOpDone>, HubStoreError> {
    let mut t = QueueTables::open(txn)?;
    let mut done = Vec::new();
    for op in ops {
        done.push(match op {
            QueueOp::Enqueue(e) => QueueOpDone::Made(enqueue_in(&mut t, e, None)?),
            QueueOp::EnqueueAt { enqueue, seqs } => {
                QueueOpDone::Made(enqueue_in(&mut t, enqueue, Some(seqs))?)
            }
            QueueOp::Delivered { host, seq, gone } => {
                QueueOpDone::Delivered(delivered_in(&mut t, host, seq, gone, now)?)
            }
            QueueOp::AckReceipts { host, seq } => {
                ack_receipts_in(&mut t, host, seq)?;
                QueueOpDone::Acked
            }
        });
    }
    Ok(done)
}

/// Queues `e` for each of its hosts that has not had it, under `seqs` (the
/// core's numbering, one per host in order) or, for a record logged before
/// the core numbered deliveries, the hub's sequence.
fn enqueue_in(
    t: &mut QueueTables<'_>,
    e: &Enqueue,
    seqs: Option<&[u64]>,
) -> Result<Made, HubStoreError> {
    let (message, now) = (&e.message, e.now);
    let mut made = Vec::new();
    let from = message.from.to_string();
    if let Some(last) = seqs.and_then(|s| s.iter().max()) {
        t.note_delivery_seq(*last)?;
    }
    for (i, (host, to)) in e.by_host.iter().enumerate() {
        let key = (host.as_str(), from.as_str(), message.id.as_str());
        if t.queued_ids.get(key)?.is_some() || handled::was_handled(t, host, message)? {
            continue;
        }
        let seq = match seqs {
            Some(seqs) => *seqs.get(i).ok_or(HubStoreError::Unnumbered)?,
            None => t.next_seq()?,
        };
        let queued = Queued {
            message: message.clone(),
            to: to.clone(),
            queued_at: now,
            bytes: size_of_message(message),
        };
        t.queue
            .insert((host.as_str(), seq), codec::encode(&queued)?.as_slice())?;
        t.queued_ids.insert(key, seq)?;
        t.by_age.insert((now.0, host.as_str(), seq), ())?;
        let deliver = Deliver {
            seq,
            message: message.clone(),
            to: to.clone(),
        };
        made.push((host.clone(), deliver));
    }
    Ok(made)
}

/// Takes delivery `seq` off `host`'s queue and records the receipts for
/// the sender's host; `None` if it was not queued (a repeated
/// acknowledgement).
pub(super) fn delivered_in(
    t: &mut QueueTables<'_>,
    host: &HostName,
    seq: u64,
    gone: &[PeerId],
    now: Timestamp,
) -> Result<Option<DeliveryDone>, HubStoreError> {
    let Some(queued) = take_queued(t, host, seq, now)? else {
        return Ok(None);
    };
    let sender = queued.message.from.host.clone();
    let (got, lost): (Vec<PeerId>, Vec<PeerId>) =
        queued.to.into_iter().partition(|p| !gone.contains(p));
    let mut receipts = Vec::new();
    if !got.is_empty() {
        receipts.push((got, ReceiptState::Delivered));
    }
    if !lost.is_empty() {
        let reason = "the peer left its host before the message arrived".to_owned();
        receipts.push((lost, ReceiptState::Dropped { reason }));
    }
    let made = add_receipts(t, &sender, &queued.message, receipts)?;
    Ok(Some(DeliveryDone {
        sender,
        receipts: made,
        bytes: queued.bytes,
    }))
}

/// Drops the receipts owed to `host` up to `seq`.
pub(super) fn ack_receipts_in(
    t: &mut QueueTables<'_>,
    host: &HostName,
    seq: u64,
) -> Result<(), HubStoreError> {
    let keys: Vec<u64> = t
        .receipts
        .range((host.as_str(), 0)..=(host.as_str(), seq))?
        .map(|row| row.map(|(k, _)| k.value().1))
        .collect::<Result<_, _>>()?;
    for k in keys {
        t.receipts.remove((host.as_str(), k))?;
    }
    Ok(())
}
