//! When a store's writes go to its write-ahead log and when they commit
//! durably instead: the position the log has reached, one record per group
//! of writes, a durable commit at least every [`DURABLE_EVERY`] or
//! [`DURABLE_BYTES`], and emptying the log after one.
//!
//! Shared by the host's store and the hub's. Each keeps the position its
//! file has applied (`wal_seq`) in the same transaction as the writes, so
//! whatever state a crash leaves, the records after that position are
//! exactly what it lacks. Owns neither the payloads (each store encodes its
//! own writes) nor the transactions.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::wal::{WalFile, WalRecord};

/// A durable commit at least this often while writes go on, so the log
/// stays short and redb can reuse the pages it freed.
pub const DURABLE_EVERY: Duration = Duration::from_secs(1);
/// ...or once the log holds this many bytes.
pub const DURABLE_BYTES: u64 = 32 * 1024 * 1024;

/// Why a log could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// Reading or writing the file failed.
    #[error("the write-ahead log {path}: {source}")]
    Io {
        /// The log.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The log's records do not follow the store's position.
    #[error(
        "the write-ahead log {path} starts at record {first} but its store stopped at {pos}: \
         records are missing, so nothing was replayed; keep the store and this file and report it"
    )]
    Gap {
        /// The log.
        path: PathBuf,
        /// Its first record after the position.
        first: u64,
        /// The store's position.
        pos: u64,
    },
    /// A record passed its checksum but holds writes this Flotilla cannot
    /// read (written by a newer one): nothing was replayed.
    #[error(
        "the write-ahead log {path}: record {seq} holds writes this Flotilla cannot read ({reason});          nothing was replayed: start the Flotilla that wrote it, or keep the store and this file and report it"
    )]
    Unreadable {
        /// The log.
        path: PathBuf,
        /// The record.
        seq: u64,
        /// What the decoder said.
        reason: String,
    },
}

/// How one group is made durable, decided before its commit.
#[derive(Debug)]
pub struct Pending {
    seq: u64,
    start: Option<u64>,
}

impl Pending {
    /// The position the group's transaction records.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether the transaction must wait for the disk (no log record).
    pub fn durable(&self) -> bool {
        self.start.is_none()
    }
}

/// A store's open log.
#[derive(Debug)]
pub struct WalLog {
    wal: WalFile,
    path: PathBuf,
    last_seq: u64,
    durable_at: Instant,
}

/// A fresh id for a store's log (kept in the store and in the log's
/// header: a log is applied only to its own store).
pub fn new_id() -> u64 {
    let (high, low) = uuid::Uuid::new_v4().as_u64_pair();
    high ^ low
}

/// The log's file next to its store's: `<store>.wal`.
pub fn wal_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".wal");
    PathBuf::from(name)
}

impl WalLog {
    /// Opens the log of the store at `store` (its id `id`, its position
    /// `pos`); returns it with the records after `pos`, to be applied
    /// again and then passed to [`Self::replayed`].
    pub fn open(store: &Path, id: u64, pos: u64) -> Result<(Self, Vec<WalRecord>), WalError> {
        let path = wal_path(store);
        let io = |source| WalError::Io {
            path: path.clone(),
            source,
        };
        let opened = WalFile::open(&path, id).map_err(io)?;
        if let Some(aside) = &opened.set_aside {
            tracing::warn!(log = %aside.display(), "a write-ahead log of another store was set aside, not applied");
        }
        let todo: Vec<WalRecord> = opened.records.into_iter().filter(|r| r.seq > pos).collect();
        if let Some(first) = todo.first()
            && first.seq != pos + 1
        {
            return Err(WalError::Gap {
                path,
                first: first.seq,
                pos,
            });
        }
        let log = Self {
            wal: opened.wal,
            path,
            last_seq: pos,
            durable_at: Instant::now(),
        };
        Ok((log, todo))
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the next group should commit durably (and empty the log).
    pub fn durable_due(&self) -> bool {
        self.durable_at.elapsed() >= DURABLE_EVERY || self.wal.len() >= DURABLE_BYTES
    }

    /// A group that commits durably, without a record.
    pub fn unlogged(&self) -> Pending {
        Pending {
            seq: self.last_seq,
            start: None,
        }
    }

    /// Appends a group's record, synced when `sync` (a group whose every
    /// write may wait for the disk is synced by a later one). When the log
    /// cannot take it (a full disk, an I/O error) the caller commits the
    /// group durably instead, which also empties the log.
    pub fn append(&mut self, payload: &[u8], sync: bool) -> io::Result<Pending> {
        let seq = self.last_seq + 1;
        let start = self.wal.append(seq, payload)?;
        if sync && let Err(e) = self.wal.sync() {
            let _ = self.wal.truncate(start);
            return Err(e);
        }
        Ok(Pending {
            seq,
            start: Some(start),
        })
    }

    /// The log's file, to sync elsewhere a record appended with
    /// `sync: false` (see `wal_sync`).
    pub fn file(&self) -> std::sync::Arc<std::fs::File> {
        self.wal.shared()
    }

    /// The group's transaction committed.
    pub fn committed(&mut self, pending: &Pending) {
        if pending.durable() {
            self.emptied();
        } else {
            self.last_seq = pending.seq;
        }
    }

    /// The group's transaction failed: its record must never be replayed.
    pub fn refused(&mut self, pending: &Pending) {
        if let Some(start) = pending.start
            && let Err(e) = self.wal.truncate(start)
        {
            tracing::error!(error = %e, "the failed group's log record could not be taken back");
        }
    }

    /// The records after the position were applied up to `last` and
    /// committed durably.
    pub fn replayed(&mut self, last: u64, writes: usize, records: usize) {
        if records > 0 {
            tracing::info!(
                records,
                writes,
                "writes acknowledged after the last durable commit were applied again from the write-ahead log"
            );
        }
        self.last_seq = self.last_seq.max(last);
        self.emptied();
    }

    /// Everything up to the last record is in a durable commit.
    pub fn emptied(&mut self) {
        self.durable_at = Instant::now();
        self.wal.clear();
    }

    /// After [`Self::emptied`]: gives the log's room back to the disk
    /// (it was full).
    pub fn release(&mut self) {
        if let Err(e) = self.wal.release() {
            tracing::warn!(error = %e, "the write-ahead log's room could not be given back");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wal::WalFile;

    fn log_with(store: &Path, seqs: &[u64]) {
        let mut wal = WalFile::open(&wal_path(store), 7).expect("open").wal;
        for seq in seqs {
            wal.append(*seq, b"w").expect("append");
        }
        wal.sync().expect("sync");
    }

    #[test]
    fn records_after_the_position_are_handed_out_and_a_gap_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("dir");
        let store = dir.path().join("s.redb");
        log_with(&store, &[5, 6]);
        let seqs = |pos| {
            let (_, todo) = WalLog::open(&store, 7, pos).expect("open");
            todo.iter().map(|r| r.seq).collect::<Vec<_>>()
        };
        assert_eq!(seqs(4), [5, 6]);
        assert_eq!(seqs(5), [6]);
        assert!(seqs(6).is_empty());
        // The store stopped at 3: record 4 is missing, nothing is replayed
        // and the file is kept for a look.
        let err = WalLog::open(&store, 7, 3).expect_err("gap");
        assert!(
            matches!(
                err,
                WalError::Gap {
                    first: 5,
                    pos: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("keep the store and this file"),
            "{err}"
        );
        assert_eq!(seqs(4), [5, 6], "the log is untouched");
    }
}
