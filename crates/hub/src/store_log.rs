//! The hub store's write-ahead log: a group of queue writes is durable
//! with one append and one `fdatasync`, and its redb commit does not wait
//! for the disk; opening the store applies again what its last durable
//! commit lacks. The same log and rules as the host's store
//! (`flotilla_actors::wal_log`): the position applied (`wal_seq` in
//! `meta`) commits with the writes, and a durable commit every so often
//! empties the log ([`HubStore::flush`] makes one at once). Owns the
//! record format of queue writes and the replay; what each write does
//! stays in `store_queue`.

use flotilla_actors::codec;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::{HostName, PeerId};
use flotilla_actors::wal::MAX_RECORD;
use flotilla_actors::wal_log::{Pending, WalLog};
use redb::{Database, ReadableDatabase, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::queue::apply_ops;
use super::{Enqueue, HubStore, HubStoreError, META, QueueOp};

/// A forward with a body larger than this commits durably, not through
/// the log (as on hosts: writing it twice costs more than the fsync saved).
const LOGGED_BODY_MAX: usize = 64 * 1024;

/// The log's id, kept in the store.
const WAL_ID: &str = "wal_id";
/// The last record the store holds.
const WAL_SEQ: &str = "wal_seq";

/// A group as appended: its writes and the hub's clock when it ran.
#[derive(Serialize)]
struct GroupRef<'a> {
    now: Timestamp,
    ops: &'a [QueueOp<'a>],
}

/// A group as read back: the fields of `GroupRef` and the variants of
/// `QueueOp`, owned, in the same order.
#[derive(Deserialize)]
struct Group {
    now: Timestamp,
    ops: Vec<Op>,
}

#[derive(Deserialize)]
enum Op {
    Enqueue(Enqueue),
    Delivered {
        host: HostName,
        seq: u64,
        gone: Vec<PeerId>,
    },
    AckReceipts {
        host: HostName,
        seq: u64,
    },
    EnqueueAt {
        enqueue: Enqueue,
        seqs: Vec<u64>,
    },
}

/// Gives a new store its log's id (in the transaction that creates it).
pub(super) fn ensure_id(txn: &WriteTransaction) -> Result<(), HubStoreError> {
    let mut meta = txn.open_table(META)?;
    if meta.get(WAL_ID)?.is_none() {
        meta.insert(WAL_ID, flotilla_actors::wal_log::new_id())?;
    }
    Ok(())
}

/// Opens the log of the store `db` (at `path`) and applies, in one durable
/// commit, every group after the position the store holds.
pub(super) fn open(db: &Database, path: &std::path::Path) -> Result<WalLog, HubStoreError> {
    let (id, pos) = {
        let txn = db.begin_read()?;
        let meta = txn.open_table(META)?;
        let get = |key| meta.get(key).map(|v| v.map(|v| v.value()).unwrap_or(0));
        (get(WAL_ID)?, get(WAL_SEQ)?)
    };
    let (mut log, todo) = WalLog::open(path, id, pos)?;
    let mut writes = 0;
    if let Some(last) = todo.last().map(|r| r.seq) {
        let txn = db.begin_write()?;
        for record in &todo {
            let group: Group = codec::decode(&record.payload, MAX_RECORD)?;
            writes += group.ops.len();
            let ops = group.ops.iter().map(|op| match op {
                Op::Enqueue(e) => QueueOp::Enqueue(e),
                Op::Delivered { host, seq, gone } => QueueOp::Delivered {
                    host,
                    seq: *seq,
                    gone,
                },
                Op::AckReceipts { host, seq } => QueueOp::AckReceipts { host, seq: *seq },
                Op::EnqueueAt { enqueue, seqs } => QueueOp::EnqueueAt { enqueue, seqs },
            });
            apply_ops(&txn, ops, group.now)?;
        }
        mark(&txn, last)?;
        txn.commit()?;
        log.replayed(last, writes, todo.len());
    } else {
        log.replayed(pos, 0, 0);
    }
    Ok(log)
}

/// What [`append`] made of a group.
pub(super) struct Appended {
    /// Its record, or a durable commit.
    pub(super) pending: Pending,
    /// The log could not take the record (a full disk): once the durable
    /// commit has emptied the log, its room goes back to the disk.
    pub(super) refused: bool,
}

/// Appends a group's record, not yet synced (the caller syncs it while it
/// applies the group), or decides a durable commit when one is due, when a
/// write outside the log was made without waiting for the disk since the
/// last (`lazy_before`), or the log cannot take the record (a full disk).
pub(super) fn append(
    log: &mut WalLog,
    ops: &[QueueOp<'_>],
    now: Timestamp,
    lazy_before: bool,
) -> Appended {
    let durable = |log: &WalLog, refused| Appended {
        pending: log.unlogged(),
        refused,
    };
    let large = ops
        .iter()
        .filter_map(QueueOp::enqueue)
        .any(|e| e.message.body.len() > LOGGED_BODY_MAX);
    if large || lazy_before || log.durable_due() {
        return durable(log, false);
    }
    let group = GroupRef { now, ops };
    let Some(payload) = codec::encode(&group).ok().filter(|p| p.len() <= MAX_RECORD) else {
        return durable(log, false);
    };
    match log.append(&payload, false) {
        Ok(pending) => Appended {
            pending,
            refused: false,
        },
        Err(e) => {
            tracing::warn!(error = %e, log = %log.path().display(), "the write-ahead log could not take a group; it commits durably instead");
            durable(log, true)
        }
    }
}

/// Records in a transaction the last log record it holds.
pub(super) fn mark(txn: &WriteTransaction, seq: u64) -> Result<(), HubStoreError> {
    txn.open_table(META)?.insert(WAL_SEQ, seq)?;
    Ok(())
}

impl HubStore {
    /// Makes every earlier write durable and empties the write-ahead log.
    pub fn flush(&self) -> Result<(), HubStoreError> {
        self.flush_locked(&mut self.log())
    }

    /// [`Self::flush`], the log already held.
    pub(super) fn flush_locked(
        &self,
        log: &mut flotilla_actors::wal_log::WalLog,
    ) -> Result<(), HubStoreError> {
        let pending = log.unlogged();
        let txn = self.db.begin_write()?;
        mark(&txn, pending.seq())?;
        txn.commit()?;
        log.committed(&pending);
        Ok(())
    }
}
