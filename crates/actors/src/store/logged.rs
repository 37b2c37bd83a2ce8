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
//! rebuilds exactly the state that was acknowledged. Owns the log and the
//! record format; the rules of each write stay in `write_op` and the
//! tables' modules, and the order of groups in the commit queue.

use std::path::Path;

use redb::{Database, ReadableDatabase, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::lanes::{LaneWrite, events_json};
use super::mail::NewMessage;
use super::schema::{META, WAL_ID_KEY, WAL_SEQ_KEY};
use super::write_op::{WriteOp, apply};
use crate::codec;
use crate::federation::{Deliver, ForwardOutcome, Receipt};
use crate::lane::LaneRecord;
use crate::lane::events::EventKind;
use crate::model::{PeerRecord, Timestamp};
use crate::names::{MessageId, PeerId};
use crate::wal::{MAX_RECORD, WalRecord};
use crate::wal_log::{Pending, WalLog};

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
    PutPeer(&'a PeerRecord),
    RemovePeer {
        id: &'a PeerId,
        force: bool,
    },
    RenamePeer {
        old: &'a PeerId,
        new: &'a PeerId,
    },
    PutLane(&'a LaneRecord),
    PutFleet {
        name: &'a str,
        json: &'a [u8],
    },
    RemoveFleet(&'a str),
    WriteLane(&'a LaneWrite, Timestamp),
    RemoveLane {
        name: &'a str,
        peer: &'a PeerId,
        force: bool,
    },
    AppendEvents {
        lane: &'a str,
        turn: u32,
        at: Timestamp,
        #[serde(serialize_with = "events_json::serialize")]
        kinds: &'a [EventKind],
    },
}

/// A logged write as read back: the same variants in the same order. New
/// variants go at the end, so a log written before them still reads.
#[derive(Deserialize)]
enum Logged {
    Accept(NewMessage),
    Ack {
        peer: PeerId,
        ids: Vec<MessageId>,
    },
    Touch(Vec<(PeerId, Timestamp)>),
    NoticeSent {
        lane: String,
        turn: u32,
    },
    Forwarded(MessageId, ForwardOutcome),
    Receipt(Receipt),
    AcceptDelivery(Deliver),
    PutPeer(PeerRecord),
    RemovePeer {
        id: PeerId,
        force: bool,
    },
    RenamePeer {
        old: PeerId,
        new: PeerId,
    },
    PutLane(Box<LaneRecord>),
    PutFleet {
        name: String,
        json: Vec<u8>,
    },
    RemoveFleet(String),
    WriteLane(Box<LaneWrite>, Timestamp),
    RemoveLane {
        name: String,
        peer: PeerId,
        force: bool,
    },
    AppendEvents {
        lane: String,
        turn: u32,
        at: Timestamp,
        #[serde(deserialize_with = "events_json::deserialize")]
        kinds: Vec<EventKind>,
    },
}

/// A message body larger than this commits durably, not through the log:
/// writing it twice costs more than the fsync saved, and a large write is
/// where a full disk shows first, so the log never holds space a durable
/// commit then lacks.
const LOGGED_BODY_MAX: usize = 64 * 1024;

fn logged(op: &WriteOp) -> Option<LoggedRef<'_>> {
    Some(match op {
        WriteOp::Accept(m) if m.body.len() > LOGGED_BODY_MAX => return None,
        WriteOp::AcceptDelivery(d) if d.message.body.len() > LOGGED_BODY_MAX => return None,
        WriteOp::Accept(m) => LoggedRef::Accept(m),
        WriteOp::Ack { peer, ids } => LoggedRef::Ack { peer, ids },
        WriteOp::Touch(seen) => LoggedRef::Touch(seen),
        WriteOp::NoticeSent { lane, turn } => LoggedRef::NoticeSent { lane, turn: *turn },
        WriteOp::Forwarded(id, outcome) => LoggedRef::Forwarded(id, outcome),
        WriteOp::Receipt(r) => LoggedRef::Receipt(r),
        WriteOp::AcceptDelivery(d) => LoggedRef::AcceptDelivery(d),
        WriteOp::PutPeer(p) => LoggedRef::PutPeer(p),
        WriteOp::RemovePeer { id, force } => LoggedRef::RemovePeer { id, force: *force },
        WriteOp::RenamePeer { old, new } => LoggedRef::RenamePeer { old, new },
        WriteOp::PutLane(lane) => LoggedRef::PutLane(lane),
        WriteOp::PutFleet { json, .. } if json.len() > LOGGED_BODY_MAX => return None,
        WriteOp::PutFleet { name, json } => LoggedRef::PutFleet { name, json },
        WriteOp::RemoveFleet(name) => LoggedRef::RemoveFleet(name),
        WriteOp::WriteLane(w, at) => LoggedRef::WriteLane(w, *at),
        WriteOp::RemoveLane { name, peer, force } => LoggedRef::RemoveLane {
            name,
            peer,
            force: *force,
        },
        WriteOp::AppendEvents {
            lane,
            turn,
            at,
            kinds,
        } => LoggedRef::AppendEvents {
            lane,
            turn: *turn,
            at: *at,
            kinds,
        },
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
            Logged::PutPeer(p) => Self::PutPeer(p),
            Logged::RemovePeer { id, force } => Self::RemovePeer { id, force },
            Logged::RenamePeer { old, new } => Self::RenamePeer { old, new },
            Logged::PutLane(lane) => Self::PutLane(lane),
            Logged::PutFleet { name, json } => Self::PutFleet { name, json },
            Logged::RemoveFleet(name) => Self::RemoveFleet(name),
            Logged::WriteLane(w, at) => Self::WriteLane(w, at),
            Logged::RemoveLane { name, peer, force } => Self::RemoveLane { name, peer, force },
            Logged::AppendEvents {
                lane,
                turn,
                at,
                kinds,
            } => Self::AppendEvents {
                lane,
                turn,
                at,
                kinds,
            },
        }
    }
}

/// A group's record: every write of it encoded, or `None` when one of
/// them is not logged or the record would be over [`MAX_RECORD`].
pub(super) fn encode_group(ops: &[&WriteOp]) -> Option<Vec<u8>> {
    let refs: Vec<LoggedRef<'_>> = ops.iter().map(|op| logged(op)).collect::<Option<_>>()?;
    codec::encode(&refs).ok().filter(|p| p.len() <= MAX_RECORD)
}

/// The writes of a group's record, in order.
pub(super) fn decode_group(payload: &[u8]) -> Result<Vec<WriteOp>, codec::CodecError> {
    let ops: Vec<Logged> = codec::decode(payload, MAX_RECORD)?;
    Ok(ops.into_iter().map(WriteOp::from).collect())
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
