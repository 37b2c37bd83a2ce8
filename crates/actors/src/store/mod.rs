//! The durable store: one redb file per host (and, later, per hub).
//!
//! Owns the schema (tables, version, migrations), the reads, and the writes
//! that the group-commit queue ([`commit`]) applies. Only the daemon opens a
//! store; redb's file lock makes a second opener fail. When a write's reply
//! is sent, it is on disk: in a durable redb commit, or for the message
//! path's writes in the write-ahead log (`logged`) that opening replays.

pub mod commit;
mod commit_link;
mod fleets;
pub mod forward_feed;
mod lanes;
mod logged;
mod mail;
mod mail_tables;
mod outbox;
mod outbox_reads;
mod outbox_verdict;
mod peers;
mod received;
mod remote;
mod retention;
mod schema;
#[cfg(test)]
mod tests;
mod upgrade_v7;
mod upgrade_v9;
mod write_op;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase};

pub use crate::wal_log::wal_path;
pub use lanes::LaneWrite;
pub use mail::{AcceptOutcome, NewMessage, SeenRecord};
pub use outbox::{DeliveryState, OUTBOX_KEEP, OutboxEntry, OutboxRoom, RecipientState};
pub use outbox_verdict::Verdict;
pub use schema::SCHEMA_VERSION;

use crate::codec::CodecError;

/// Why the store could not do something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file was written by a newer Flotilla.
    #[error(
        "the store {path} has schema version {found}, newer than the {supported} this flotilla understands; \
         nothing was changed. Run a flotilla release at least as new as the one that wrote it"
    )]
    TooNew {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: u64,
        /// The newest this build knows.
        supported: u64,
    },
    /// The file is a redb database but not a Flotilla store.
    #[error("{path} is not a flotilla store (it has tables but no schema version); move it away")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// Another process holds the file.
    #[error("the store {path} is open in another process; only the daemon opens it")]
    Locked {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be created or made private.
    #[error("cannot use the store {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A record could not be decoded (corruption, or a bug).
    #[error("a stored record could not be read: {0}")]
    Codec(#[from] CodecError),
    /// A JSON record (a fleet's) could not be written or read.
    #[error("a stored fleet record could not be used: {0}")]
    Record(String),
    /// A rule of the data was broken (for example, a recipient vanished).
    #[error("{0}")]
    Rejected(String),
    /// The queue to the hub is full (the hub has been away): retry later.
    #[error("{0}")]
    OutboxFull(String),
    /// The group commit holding this write failed (a full disk, an I/O
    /// error): nothing of it was stored.
    #[error("{0}")]
    WriteFailed(String),
    /// redb failed.
    #[error("store: {0}")]
    Db(Box<redb::Error>),
    /// The write-ahead log could not be opened or does not follow the
    /// store (records missing): nothing was replayed.
    #[error("{0}")]
    Log(#[from] crate::wal_log::WalError),
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                Self::Db(Box::new(e.into()))
            }
        }
    )*};
}
from_redb!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

fn refuse_newer(found: u64, path: &Path) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn locked_or(e: redb::DatabaseError, path: &Path) -> StoreError {
    match e {
        redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Locked {
            path: path.to_owned(),
        },
        other => other.into(),
    }
}

/// What the integrity check at open found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    /// The file was consistent.
    Clean,
    /// The file was damaged and redb repaired it.
    Repaired,
}

/// What a read-only look at a store found ([`Store::probe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The store reads; its schema version.
    Readable(u64),
    /// It was not closed cleanly; the daemon repairs it when it opens it.
    NeedsRepair,
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    /// `None` only while a reopen after a failed write could not open the
    /// file again.
    db: RwLock<Option<Arc<Database>>>,
    /// The write-ahead log; the commit queue's writer holds it while it
    /// writes a group.
    log: Mutex<logged::Log>,
    /// A write outside the commit queue committed without waiting for the
    /// disk: the queue's next group commits durably (not through the log,
    /// which does not carry that write).
    lazy: std::sync::atomic::AtomicBool,
    path: PathBuf,
    integrity: Integrity,
}

impl Store {
    /// Opens (or creates) the store at `path`, checks redb's integrity,
    /// refuses a newer schema without writing, and migrates an older one.
    /// The file is private to the user (0600) from the moment it exists.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        // An empty file is one whose creation stopped before redb wrote its
        // header: it is created again.
        let existed = crate::private_file::has_content(path);
        if existed {
            // Read the version through a read-only handle first: a store
            // written by a newer flotilla is refused without a single write.
            // (A file left by a crash cannot be opened read-only; it is
            // repaired by the normal open and checked again below.)
            match redb::ReadOnlyDatabase::open(path) {
                Ok(ro) => refuse_newer(schema::read_version(&ro.begin_read()?, path)?, path)?,
                Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                    return Err(StoreError::Locked {
                        path: path.to_owned(),
                    });
                }
                Err(_) => {}
            }
        }
        crate::private_file::ensure(path).map_err(|source| StoreError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut db = if existed {
            Database::open(path)
        } else {
            Database::create(path)
        }
        .map_err(|e| locked_or(e, path))?;
        let integrity = if db.check_integrity()? {
            Integrity::Clean
        } else {
            Integrity::Repaired
        };
        let found = schema::read_version(&db.begin_read()?, path)?;
        refuse_newer(found, path)?;
        if found < SCHEMA_VERSION {
            let txn = db.begin_write()?;
            schema::migrate(&txn, found)?;
            txn.commit()?;
        }
        let log = logged::Log::open(&db, path)?;
        Ok(Self {
            db: RwLock::new(Some(Arc::new(db))),
            log: Mutex::new(log),
            lazy: Default::default(),
            path: path.to_owned(),
            integrity,
        })
    }

    /// Looks at the store at `path` read-only, for `flotilla doctor` when
    /// no daemon runs: nothing is written, not even a repair. The error is
    /// the store's own (damaged, open in another process, newer schema).
    pub fn probe(path: &Path) -> Result<Probe, StoreError> {
        match redb::ReadOnlyDatabase::open(path) {
            Ok(ro) => {
                let found = schema::read_version(&ro.begin_read()?, path)?;
                refuse_newer(found, path)?;
                Ok(Probe::Readable(found))
            }
            Err(redb::DatabaseError::RepairAborted) => Ok(Probe::NeedsRepair),
            Err(e) => Err(locked_or(e, path)),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the check at open found.
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// The schema version on disk.
    pub fn schema_version(&self) -> Result<u64, StoreError> {
        schema::read_version(&self.db()?.begin_read()?, &self.path)
    }

    pub(crate) fn db(&self) -> Result<Arc<Database>, StoreError> {
        let slot = self.db.read().unwrap_or_else(PoisonError::into_inner);
        slot.clone().ok_or_else(|| {
            StoreError::WriteFailed(format!(
                "the store {} could not be opened again after a failed write; \
                 see the daemon's log, free space on its disk and restart the daemon",
                self.path.display()
            ))
        })
    }

    /// The write-ahead log, for the commit queue's writer.
    fn log(&self) -> MutexGuard<'_, logged::Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a write committed without waiting for the disk outside the
    /// commit queue.
    fn lazy_written(&self) {
        self.lazy.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether such a write was made since the last call.
    fn take_lazy(&self) -> bool {
        self.lazy.swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    /// After a failed commit (a full disk) redb refuses every later write
    /// until the file is opened again: drops this handle and opens the
    /// file again, waiting up to 2 s for reads still open on the old one,
    /// then applies the write-ahead log again (the file may have gone back
    /// to its last durable commit).
    pub(crate) fn reopen(&self) -> Result<(), StoreError> {
        let mut slot = self.db.write().unwrap_or_else(PoisonError::into_inner);
        drop(slot.take());
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match Database::open(&self.path) {
                Ok(db) => {
                    *self.log() = logged::Log::open(&db, &self.path)?;
                    *slot = Some(Arc::new(db));
                    return Ok(());
                }
                Err(redb::DatabaseError::DatabaseAlreadyOpen) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(locked_or(e, &self.path)),
            }
        }
    }
}
