//! The store's write-ahead log: how a group of writes becomes durable with
//! one append and one `fdatasync` instead of a redb commit that waits for
//! the disk, and how the log is replayed when the store opens.
//!
//! Every write of the commit queue (messages, deliveries, acks, the hub's
//! verdicts and receipts, last-seen times, peers, lanes and their events,
//! fleets) is appended to `<store>.wal` as one record per group and synced
//! (on another thread, while the group's transaction is applied and
//! committed without waiting for the disk) before anyone is answered; the
//! transaction records the log position it reached (`wal_seq` in `meta`).
//! A group holding a large body, and one group every so often (`wal_log`),
//! commits durably as before, after which the log is emptied. When the store opens, every record after the
//! position the file holds is applied again, in order: the writes are
//! deterministic (their times and limits travel in them), so replay
//! rebuilds exactly the state that was acknowledged. Owns the log and which
//! writes it carries; a record is the group's `WriteOp`s themselves, so
//! their variants are its format (`store::tests::log_format` pins it). The
//! rules of each write stay in `write_op` and the tables' modules, and the
//! order of groups in the commit queue.

use std::path::Path;

use redb::{Database, ReadableDatabase, WriteTransaction};

use super::StoreError;
use super::schema::{META, WAL_ID_KEY, WAL_SEQ_KEY};
use super::write_op::{WriteOp, apply};
use crate::codec;
use crate::wal::{MAX_RECORD, WalRecord};
use crate::wal_log::{Pending, WalLog};

/// A message body larger than this commits durably, not through the log:
/// writing it twice costs more than the fsync saved, and a large write is
/// where a full disk shows first, so the log never holds space a durable
/// commit then lacks.
const LOGGED_BODY_MAX: usize = 64 * 1024;

/// Whether the log carries `op`: all but a large body.
fn logged(op: &WriteOp) -> bool {
    match op {
        WriteOp::Accept(m) => m.body.len() <= LOGGED_BODY_MAX,
        WriteOp::AcceptDelivery(d) => d.message.body.len() <= LOGGED_BODY_MAX,
        WriteOp::PutFleet { json, .. } => json.len() <= LOGGED_BODY_MAX,
        _ => true,
    }
}

/// A group's record: every write of it encoded, or `None` when one of
/// them is not logged or the record would be over [`MAX_RECORD`].
pub(super) fn encode_group(ops: &[&WriteOp]) -> Option<Vec<u8>> {
    if !ops.iter().all(|op| logged(op)) {
        return None;
    }
    codec::encode(&ops).ok().filter(|p| p.len() <= MAX_RECORD)
}

/// The writes of a group's record, in order.
pub(super) fn decode_group(payload: &[u8]) -> Result<Vec<WriteOp>, codec::CodecError> {
    codec::decode(payload, MAX_RECORD)
}

/// Version 11: gives the store the id its log carries.
pub(super) fn create_v11(txn: &WriteTransaction) -> Result<(), StoreError> {
    let mut meta = txn.open_table(META)?;
    meta.insert(WAL_ID_KEY, crate::wal_log::new_id())?;
    meta.insert(WAL_SEQ_KEY, 0)?;
    Ok(())
}

/// The open log of a store.
#[derive(Debug)]
pub(super) struct Log(WalLog);

impl Log {
    /// Opens the log of the store `db` (at `store`), applies every record
    /// after the position the store holds, commits that durably and
    /// empties the log.
    pub(super) fn open(db: &Database, store: &Path) -> Result<Self, StoreError> {
        let (id, pos) = {
            let txn = db.begin_read()?;
            let meta = txn.open_table(META)?;
            let get = |key| meta.get(key).map(|v| v.map(|v| v.value()).unwrap_or(0));
            (get(WAL_ID_KEY)?, get(WAL_SEQ_KEY)?)
        };
        let (mut log, todo) = WalLog::open(store, id, pos)?;
        let (last, writes) = replay(db, pos, &todo, log.path())?;
        log.replayed(last, writes, todo.len());
        Ok(Self(log))
    }

    /// Appends a group's record before its transaction; the second value
    /// says whether the caller must sync it before answering anyone (unless
    /// every write of it may wait for the disk). The sync runs on its own
    /// thread while the group is applied and committed without waiting for
    /// the disk; a failed sync stops the daemon ([`sync_failed`]). A group with a write the log does
    /// not carry, one due for a durable commit, or one after a write made
    /// outside the queue without waiting for the disk (`lazy_before`) is
    /// not logged: it commits durably.
    ///
    /// When the log cannot take the record (a full disk), what it holds is
    /// first committed durably and the log emptied, giving its space back
    /// to redb, and the group then commits durably; if even that commit
    /// fails, its error refuses the group.
    pub(super) fn begin(
        &mut self,
        db: &Database,
        ops: &[&WriteOp],
        lazy_before: bool,
    ) -> Result<(Pending, bool), StoreError> {
        let payload = if self.0.durable_due() || lazy_before {
            None
        } else {
            encode_group(ops)
        };
        let Some(payload) = payload else {
            return Ok((self.0.unlogged(), false));
        };
        let sync = !ops.iter().all(|op| op.may_wait_for_the_disk());
        match self.0.append(&payload, false) {
            Ok(pending) => Ok((pending, sync)),
            Err(e) => {
                tracing::warn!(error = %e, log = %self.0.path().display(), "the write-ahead log could not take a group; the log is emptied into the store and the group commits durably");
                self.checkpoint(db)?;
                self.0.release();
                Ok((self.0.unlogged(), false))
            }
        }
    }

    /// The log's file, to sync the record [`Self::begin`] appended (when it
    /// says so) on the syncing thread while the group is applied.
    pub(super) fn file(&self) -> std::sync::Arc<std::fs::File> {
        self.0.file()
    }

    /// Records in the group's transaction how far the log it includes goes.
    pub(super) fn mark(txn: &WriteTransaction, pending: &Pending) -> Result<(), StoreError> {
        txn.open_table(META)?.insert(WAL_SEQ_KEY, pending.seq())?;
        Ok(())
    }

    /// The group's transaction committed.
    pub(super) fn committed(&mut self, pending: &Pending) {
        self.0.committed(pending);
    }

    /// The group's transaction failed: its record must never be replayed.
    pub(super) fn refused(&mut self, pending: &Pending) {
        self.0.refused(pending);
    }

    /// Commits durably whatever the log holds and empties it (when the
    /// writer stops).
    pub(super) fn checkpoint(&mut self, db: &Database) -> Result<(), StoreError> {
        let txn = db.begin_write()?;
        let pending = self.0.unlogged();
        Self::mark(&txn, &pending)?;
        txn.commit()?;
        self.0.committed(&pending);
        Ok(())
    }
}

/// Applies the records (which follow `pos`) in one durable transaction;
/// returns the last position applied and how many writes it held.
fn replay(
    db: &Database,
    pos: u64,
    todo: &[WalRecord],
    path: &Path,
) -> Result<(u64, usize), StoreError> {
    let Some(last) = todo.last().map(|r| r.seq) else {
        return Ok((pos, 0));
    };
    let txn = db.begin_write()?;
    let mut mail = None;
    let mut writes = 0usize;
    for record in todo {
        let ops =
            decode_group(&record.payload).map_err(|e| crate::wal_log::WalError::Unreadable {
                path: path.to_owned(),
                seq: record.seq,
                reason: e.to_string(),
            })?;
        for op in ops {
            writes += 1;
            // A write that broke a rule broke it the first time too.
            if let Err(e @ (StoreError::Db(_) | StoreError::Codec(_))) = apply(&txn, &mut mail, op)
            {
                return Err(e);
            }
        }
    }
    drop(mail);
    txn.open_table(META)?.insert(WAL_SEQ_KEY, last)?;
    txn.commit()?;
    Ok((last, writes))
}

/// The log's record of a group could not be synced, after the group's
/// redb transaction committed without waiting for the disk: the daemon
/// stops at once, answering no one. After a failed `fdatasync` the page
/// cache can no longer be trusted to reach the disk (PostgreSQL stops the
/// same way, for the same reason). An abort drops redb's commits that did
/// not wait for the disk with the process, so the next start holds the last
/// durable commit plus the log as the disk has it: every acknowledged write,
/// and perhaps the unacknowledged group (its writes are all retried by id
/// and stored once). The service manager starts the daemon again.
pub(super) fn sync_failed(log: &Log, e: &std::io::Error) -> ! {
    let path = log.0.path().display();
    tracing::error!(error = %e, log = %path, "the write-ahead log could not be synced; the daemon stops now and recovers from the log at its next start");
    eprintln!(
        "flotilla: the write-ahead log {path} could not be synced ({e}); stopping at once. \
         Check the disk (dmesg), then start the daemon again: it recovers from the log."
    );
    std::process::abort()
}
