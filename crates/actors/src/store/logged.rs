//! The store's write-ahead log: how a group of writes becomes durable with
//! one append and one `fdatasync` instead of a redb commit that waits for
//! the disk, and how the log is replayed when the store opens.
//!
//! The message path's writes (acceptances, deliveries, acks, the hub's
//! verdicts and receipts, last-seen times, lane notices) are appended to
//! `<store>.wal` as one record per group and synced before the group's
//! transaction commits without waiting for the disk; the transaction
//! records the log position it reached (`wal_seq` in `meta`). Any other
//! write, and one group at least every [`DURABLE_EVERY`] or
//! [`DURABLE_BYTES`] of log, commits durably as before, after which the
//! log is emptied. When the store opens, every record after the position
//! the file holds is applied again, in order: the writes are deterministic
//! (their times and limits travel in them), so replay rebuilds exactly the
//! state that was acknowledged. Owns the log and the record format; the
//! rules of each write stay in `write_op` and the tables' modules, and the
//! order of groups in the commit queue.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::mail::NewMessage;
use super::schema::{META, WAL_ID_KEY, WAL_SEQ_KEY};
use super::write_op::{WriteOp, apply};
use crate::codec;
use crate::federation::{Deliver, ForwardOutcome, Receipt};
use crate::model::Timestamp;
use crate::names::{MessageId, PeerId};
use crate::wal::{MAX_RECORD, WalFile, WalRecord};

/// A durable commit at least this often while writes go on, so the log
/// stays short and redb can reuse the pages it freed.
pub(super) const DURABLE_EVERY: Duration = Duration::from_secs(1);
/// ...or once the log holds this many bytes.
pub(super) const DURABLE_BYTES: u64 = 32 * 1024 * 1024;

/// A logged write as appended (borrowed from the queue's op).
#[derive(Serialize)]
enum LoggedRef<'a> {
    Accept(&'a NewMessage),
    Ack {
        peer: &'a PeerId,
        ids: &'a [MessageId],
    },
    Touch(&'a [(PeerId, Timestamp)]),
    NoticeSent {
        lane: &'a str,
        turn: u32,
    },
    Forwarded(&'a MessageId, &'a ForwardOutcome),
    Receipt(&'a Receipt),
    AcceptDelivery(&'a Deliver),
}

/// A logged write as read back: the same variants in the same order.
#[derive(Deserialize)]
enum Logged {
    Accept(NewMessage),
    Ack { peer: PeerId, ids: Vec<MessageId> },
    Touch(Vec<(PeerId, Timestamp)>),
    NoticeSent { lane: String, turn: u32 },
    Forwarded(MessageId, ForwardOutcome),
    Receipt(Receipt),
    AcceptDelivery(Deliver),
}

fn logged(op: &WriteOp) -> Option<LoggedRef<'_>> {
    Some(match op {
        WriteOp::Accept(m) => LoggedRef::Accept(m),
        WriteOp::Ack { peer, ids } => LoggedRef::Ack { peer, ids },
        WriteOp::Touch(seen) => LoggedRef::Touch(seen),
        WriteOp::NoticeSent { lane, turn } => LoggedRef::NoticeSent { lane, turn: *turn },
        WriteOp::Forwarded(id, outcome) => LoggedRef::Forwarded(id, outcome),
        WriteOp::Receipt(r) => LoggedRef::Receipt(r),
        WriteOp::AcceptDelivery(d) => LoggedRef::AcceptDelivery(d),
        _ => return None,
    })
}

impl From<Logged> for WriteOp {
    fn from(op: Logged) -> Self {
        match op {
            Logged::Accept(m) => Self::Accept(m),
            Logged::Ack { peer, ids } => Self::Ack { peer, ids },
            Logged::Touch(seen) => Self::Touch(seen),
            Logged::NoticeSent { lane, turn } => Self::NoticeSent { lane, turn },
            Logged::Forwarded(id, outcome) => Self::Forwarded(id, outcome),
            Logged::Receipt(r) => Self::Receipt(r),
            Logged::AcceptDelivery(d) => Self::AcceptDelivery(d),
        }
    }
}

/// Version 11: gives the store the id its log carries.
pub(super) fn create_v11(txn: &WriteTransaction) -> Result<(), StoreError> {
    let (high, low) = uuid::Uuid::new_v4().as_u64_pair();
    let mut meta = txn.open_table(META)?;
    meta.insert(WAL_ID_KEY, high ^ low)?;
    meta.insert(WAL_SEQ_KEY, 0)?;
    Ok(())
}

/// How one group is made durable, decided before its transaction.
#[derive(Debug)]
pub(super) struct Pending {
    /// The log position the transaction records.
    seq: u64,
    /// Where the group's record starts in the log; `None` when the group
    /// commits durably instead.
    start: Option<u64>,
}

impl Pending {
    /// Whether the transaction must wait for the disk (no log record).
    pub(super) fn durable(&self) -> bool {
        self.start.is_none()
    }
}

/// The open log of a store.
#[derive(Debug)]
pub(super) struct Log {
    wal: WalFile,
    path: PathBuf,
    last_seq: u64,
    durable_at: Instant,
}

/// The log's file next to the store's: `<store>.wal`.
pub fn wal_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".wal");
    PathBuf::from(name)
}

impl Log {
    /// Opens the log of the store `db` (at `store`), applies every record
    /// after the position the store holds, commits that durably and
    /// empties the log.
    pub(super) fn open(db: &Database, store: &Path) -> Result<Self, StoreError> {
        let path = wal_path(store);
        let (id, pos) = {
            let txn = db.begin_read()?;
            let meta = txn.open_table(META)?;
            let get = |key| meta.get(key).map(|v| v.map(|v| v.value()).unwrap_or(0));
            (get(WAL_ID_KEY)?, get(WAL_SEQ_KEY)?)
        };
        let opened = WalFile::open(&path, id).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        if let Some(aside) = &opened.set_aside {
            tracing::warn!(log = %aside.display(), "a write-ahead log of another store was set aside, not applied");
        }
        if opened.cut > 0 {
            tracing::warn!(
                bytes = opened.cut,
                "the write-ahead log ended in a torn record (a crash while writing it, never acknowledged); it was cut off"
            );
        }
        let last_seq = replay(db, pos, opened.records)?;
        let mut log = Self {
            wal: opened.wal,
            path,
            last_seq,
            durable_at: Instant::now(),
        };
        log.checkpoint(db)?;
        Ok(log)
    }

    /// Writes a group's record before its transaction, synced unless every
    /// write of it may wait for the disk. A group with a write the log does
    /// not carry, or one due for a durable commit, is not logged.
    pub(super) fn begin(&mut self, ops: &[&WriteOp]) -> Result<Pending, StoreError> {
        let due = self.durable_at.elapsed() >= DURABLE_EVERY || self.wal.len() >= DURABLE_BYTES;
        let refs: Option<Vec<LoggedRef<'_>>> = ops.iter().map(|op| logged(op)).collect();
        let payload = match refs {
            Some(refs) if !due => codec::encode(&refs).ok().filter(|p| p.len() <= MAX_RECORD),
            _ => None,
        };
        let Some(payload) = payload else {
            return Ok(Pending {
                seq: self.last_seq,
                start: None,
            });
        };
        let seq = self.last_seq + 1;
        let start = self.wal.append(seq, &payload).map_err(|e| self.io(e))?;
        let lazy = ops.iter().all(|op| op.may_wait_for_the_disk());
        if !lazy && let Err(e) = self.wal.sync() {
            let _ = self.wal.truncate(start);
            return Err(self.io(e));
        }
        Ok(Pending {
            seq,
            start: Some(start),
        })
    }

    /// Records in the group's transaction how far the log it includes goes.
    pub(super) fn mark(txn: &WriteTransaction, pending: &Pending) -> Result<(), StoreError> {
        txn.open_table(META)?.insert(WAL_SEQ_KEY, pending.seq)?;
        Ok(())
    }

    /// The group's transaction committed.
    pub(super) fn committed(&mut self, pending: &Pending) {
        if pending.durable() {
            self.emptied();
        } else {
            self.last_seq = pending.seq;
        }
    }

    /// The group's transaction failed: its record must never be replayed.
    pub(super) fn refused(&mut self, pending: &Pending) {
        if let Some(start) = pending.start
            && let Err(e) = self.wal.truncate(start)
        {
            tracing::error!(error = %e, "the failed group's log record could not be taken back");
        }
    }

    /// Commits durably whatever the log holds and empties it (at open,
    /// after a replay, and when the writer stops).
    pub(super) fn checkpoint(&mut self, db: &Database) -> Result<(), StoreError> {
        let txn = db.begin_write()?;
        Self::mark(
            &txn,
            &Pending {
                seq: self.last_seq,
                start: None,
            },
        )?;
        txn.commit()?;
        self.emptied();
        Ok(())
    }

    fn emptied(&mut self) {
        self.durable_at = Instant::now();
        if let Err(e) = self.wal.clear() {
            tracing::warn!(error = %e, "the write-ahead log could not be emptied; it is read again at the next open");
        }
    }

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// Applies the records after `pos` in one transaction; returns the last
/// position applied.
fn replay(db: &Database, pos: u64, records: Vec<WalRecord>) -> Result<u64, StoreError> {
    let todo: Vec<WalRecord> = records.into_iter().filter(|r| r.seq > pos).collect();
    let Some(last) = todo.last().map(|r| r.seq) else {
        return Ok(pos);
    };
    if todo[0].seq != pos + 1 {
        return Err(StoreError::Rejected(format!(
            "the write-ahead log starts at record {} but the store stopped at {pos}; \
             records are missing, so nothing was replayed: keep the store and its .wal file \
             and report this",
            todo[0].seq
        )));
    }
    let txn = db.begin_write()?;
    let mut mail = None;
    let mut writes = 0usize;
    for record in &todo {
        let ops: Vec<Logged> = codec::decode(&record.payload, MAX_RECORD)?;
        for op in ops {
            writes += 1;
            // A write that broke a rule broke it the first time too.
            if let Err(e @ (StoreError::Db(_) | StoreError::Codec(_))) =
                apply(&txn, &mut mail, op.into())
            {
                return Err(e);
            }
        }
    }
    drop(mail);
    txn.open_table(META)?.insert(WAL_SEQ_KEY, last)?;
    txn.commit()?;
    tracing::info!(
        records = todo.len(),
        writes,
        "writes acknowledged after the last durable commit were applied again from the write-ahead log"
    );
    Ok(last)
}
