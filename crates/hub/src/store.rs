//! The hub's durable state, in one redb file: the last roster of every
//! host (so peers of an offline host stay reachable), the queue of
//! deliveries per host, and the receipts owed to senders' hosts.
//!
//! Owns the tables and every write to them. Queuing a message is durable
//! before it returns (its write-ahead log record synced, see `store_log`),
//! so the hub acknowledges a forward only once it is on disk, and a restart
//! (even `kill -9`) loses nothing acknowledged. The bookkeeping after
//! that (a delivery taken off a queue with its receipt, receipts
//! acknowledged) is appended to the log without its own sync, and rosters
//! and grants commit without one (the next group that queues a message
//! then commits durably); each becomes durable with the next sync or
//! durable commit ([`flush`] at the latest): losing it to a crash only
//! repeats idempotent steps (a
//! delivery the host stores once, a receipt it applies once, a roster every
//! host sends again when it links). Only the hub process opens the file.
//! Must not decide routing (the roster does).
//!
//! [`flush`]: HubStore::flush

use std::collections::HashMap;
use std::path::Path;

use flotilla_actors::codec::{self, CodecError};
use flotilla_actors::federation::{Deliver, Receipt};
use flotilla_actors::model::{Message, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, PeerId};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::roster::HostEntry;

/// Host name to encoded [`StoredHost`].
const HOSTS: TableDefinition<&str, &[u8]> = TableDefinition::new("hosts");
/// (host, delivery seq) to encoded [`Queued`]: each host's queue, in order.
const QUEUE: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("queue");
/// (host, sender, message id) to its delivery seq: a message is queued
/// once. Ids are chosen by clients, so an id names a message only together
/// with its sender. Replaces `queued_ids` (keyed by host and id alone),
/// which [`upgrade`] rebuilds from the queue at open.
const QUEUED_IDS: TableDefinition<(&str, &str, &str), u64> =
    TableDefinition::new("queued_by_sender");
/// (queued at, host, delivery seq): the queues by age on the hub's running
/// clock ([`clock`]), so expiry reads only what expires.
const BY_AGE: TableDefinition<(u64, &str, u64), ()> = TableDefinition::new("queue_by_age");
/// (sender's host, receipt seq) to encoded [`Receipt`].
const RECEIPTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("receipts");
/// (peer id, private group): memberships in another host's private group
/// that the hub granted when it relayed a lane start ([`crate::grants`]).
const GRANTS: TableDefinition<(&str, &str), ()> = TableDefinition::new("session_grants");
/// Counters: `seq` (deliveries and receipts share it); `hub_clock`, the
/// hub's running clock ([`clock`]).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// Largest stored record accepted when reading back.
const RECORD_LIMIT: usize = codec::HARD_LIMIT;

/// Why the hub's store failed or refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubStoreError {
    /// Another process holds the file.
    #[error(
        "the hub store {0} is open in another process; is another `flotilla hub run` running from this home?"
    )]
    Locked(String),
    /// The file could not be created or made private.
    #[error("cannot use the hub store {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A record could not be decoded.
    #[error("a record of the hub store could not be read: {0}")]
    Codec(#[from] CodecError),
    /// redb failed.
    #[error("hub store: {0}")]
    Db(Box<redb::Error>),
    /// The thread that ran a commit ended before it answered.
    #[error("the hub store's writer stopped: {0}")]
    Stopped(String),
    /// The write-ahead log could not be opened or does not follow the
    /// store (records missing): nothing was replayed.
    #[error("hub store: {0}")]
    Log(#[from] flotilla_actors::wal_log::WalError),
    /// A forward came with fewer delivery seqs than hosts (a defect of
    /// the caller): nothing of its group was stored.
    #[error("hub store: a forward came without a delivery seq for each of its hosts")]
    Unnumbered,
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for HubStoreError {
            fn from(e: $t) -> Self {
                Self::Db(Box::new(e.into()))
            }
        }
    )*};
}
from_redb!(
    redb::Error,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// A host as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredHost {
    peers: Vec<PeerRecord>,
    last_seen: Timestamp,
    version: String,
}

/// A delivery waiting for its host.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Queued {
    message: Message,
    to: Vec<PeerId>,
    queued_at: Timestamp,
    bytes: u64,
}

/// How much is queued for one host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Depth {
    /// Messages.
    pub messages: u64,
    /// Bytes of their bodies and summaries.
    pub bytes: u64,
}

/// A delivery taken off a queue.
#[derive(Debug, Clone)]
pub struct DeliveryDone {
    /// The host of the message's sender, which the receipts are for.
    pub sender: HostName,
    /// What became of the message.
    pub receipts: Vec<Receipt>,
    /// The bytes it counted against the queue.
    pub bytes: u64,
}

/// The hub's open store.
#[derive(Debug)]
pub struct HubStore {
    db: Database,
    clock: crate::hub_clock::HubClock,
    /// Groups of forwards made durable so far ([`HubStore::apply_group`]).
    queue_commits: std::sync::atomic::AtomicU64,
    /// The write-ahead log of queue writes; the queue writer holds it
    /// while it writes a group.
    log: std::sync::Mutex<flotilla_actors::wal_log::WalLog>,
    /// A write committed without waiting for the disk ([`Self::lazy_write`])
    /// since the last group that queued a message: the next such group
    /// commits durably, so it carries that write to the disk as before.
    lazy: std::sync::atomic::AtomicBool,
    /// Syncs the log while a group is applied.
    syncer: flotilla_actors::wal_sync::WalSyncer,
}

impl HubStore {
    /// Opens or creates the store at `path`; the file is private to the
    /// user (0600) from the moment it exists.
    pub fn open(path: &Path) -> Result<Self, HubStoreError> {
        flotilla_actors::private_file::ensure(path).map_err(|source| HubStoreError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => {
                HubStoreError::Locked(path.display().to_string())
            }
            other => HubStoreError::Db(Box::new(other.into())),
        })?;
        let txn = db.begin_write()?;
        txn.open_table(HOSTS)?;
        txn.open_table(QUEUE)?;
        txn.open_table(QUEUED_IDS)?;
        txn.open_table(BY_AGE)?;
        txn.open_table(RECEIPTS)?;
        txn.open_table(META)?;
        txn.open_table(GRANTS)?;
        handled::create(&txn)?;
        upgrade::queued_by_sender(&txn)?;
        let clock = clock::resume(&txn)?;
        log::ensure_id(&txn)?;
        txn.commit()?;
        let log = log::open(&db, path)?;
        Ok(Self {
            db,
            clock,
            queue_commits: Default::default(),
            log: std::sync::Mutex::new(log),
            lazy: Default::default(),
            syncer: flotilla_actors::wal_sync::WalSyncer::start().map_err(|source| {
                HubStoreError::Io {
                    path: path.display().to_string(),
                    source,
                }
            })?,
        })
    }

    fn log(&self) -> std::sync::MutexGuard<'_, flotilla_actors::wal_log::WalLog> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every host's last roster.
    pub fn load_hosts(&self) -> Result<Vec<(HostName, HostEntry)>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(HOSTS)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (name, bytes) = row?;
            let Ok(name) = HostName::new(name.value()) else {
                continue;
            };
            let stored: StoredHost = codec::decode(bytes.value(), RECORD_LIMIT)?;
            let entry = HostEntry {
                peers: stored
                    .peers
                    .into_iter()
                    .map(|p| (p.id.clone(), p))
                    .collect(),
                online: false,
                last_seen: stored.last_seen,
                version: stored.version,
                ..HostEntry::default()
            };
            out.push((name, entry));
        }
        Ok(out)
    }

    /// The private-group grants, as pairs; a pair that no longer parses is
    /// skipped.
    pub fn load_grants(&self) -> Result<Vec<(PeerId, GroupName)>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in txn.open_table(GRANTS)?.iter()? {
            let (key, _) = row?;
            let (peer, group) = key.value();
            if let (Ok(peer), Ok(group)) = (PeerId::parse(peer), GroupName::new(group)) {
                out.push((peer, group));
            }
        }
        Ok(out)
    }

    /// Records a grant durably, before the lane start that needs it is
    /// relayed: a hub restart must not refuse the lane's roster entry.
    pub fn put_grant(&self, peer: &PeerId, group: &GroupName) -> Result<(), HubStoreError> {
        let txn = self.db.begin_write()?;
        txn.open_table(GRANTS)?
            .insert((peer.to_string().as_str(), group.as_str()), ())?;
        txn.commit()?;
        Ok(())
    }

    /// Forgets a grant.
    pub fn drop_grant(&self, peer: &PeerId, group: &GroupName) -> Result<(), HubStoreError> {
        let txn = self.lazy_write()?;
        txn.open_table(GRANTS)?
            .remove((peer.to_string().as_str(), group.as_str()))?;
        txn.commit()?;
        Ok(())
    }

    /// A write transaction whose commit does not wait for the disk (see
    /// the module's doc).
    fn lazy_write(&self) -> Result<WriteTransaction, HubStoreError> {
        let mut txn = self.db.begin_write()?;
        self.lazy.store(true, std::sync::atomic::Ordering::Release);
        txn.set_durability(redb::Durability::None)
            .map_err(|e| HubStoreError::Db(Box::new(e.into())))?;
        Ok(txn)
    }

    /// Records a host's roster.
    pub fn put_host(&self, name: &HostName, entry: &HostEntry) -> Result<(), HubStoreError> {
        let stored = StoredHost {
            peers: entry.peers.values().cloned().collect(),
            last_seen: entry.last_seen,
            version: entry.version.clone(),
        };
        let txn = self.lazy_write()?;
        txn.open_table(HOSTS)?
            .insert(name.as_str(), codec::encode(&stored)?.as_slice())?;
        txn.commit()?;
        Ok(())
    }

    /// What is queued for each host.
    pub fn depths(&self) -> Result<HashMap<HostName, Depth>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let mut out: HashMap<HostName, Depth> = HashMap::new();
        for row in txn.open_table(QUEUE)?.iter()? {
            let (key, bytes) = row?;
            let Ok(host) = HostName::new(key.value().0) else {
                continue;
            };
            let queued: Queued = codec::decode(bytes.value(), RECORD_LIMIT)?;
            let depth = out.entry(host).or_default();
            depth.messages += 1;
            depth.bytes += queued.bytes;
        }
        Ok(out)
    }

    /// The hub's sequence, at least every delivery seq ever used: the core
    /// numbers new deliveries above it.
    pub fn delivery_seq_floor(&self) -> Result<u64, HubStoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(tables::SEQ)?.map_or(0, |v| v.value()))
    }

    /// The oldest `limit` deliveries queued for `host` after `after`.
    pub fn queued(
        &self,
        host: &HostName,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Deliver>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(QUEUE)?;
        let range = (host.as_str(), after.saturating_add(1))..=(host.as_str(), u64::MAX);
        let mut out = Vec::new();
        for row in table.range(range)?.take(limit) {
            let (key, bytes) = row?;
            let queued: Queued = codec::decode(bytes.value(), RECORD_LIMIT)?;
            out.push(Deliver {
                seq: key.value().1,
                message: queued.message,
                to: queued.to,
            });
        }
        Ok(out)
    }

    /// Receipts owed to `host`, oldest first.
    pub fn receipts(&self, host: &HostName) -> Result<Vec<Receipt>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(RECEIPTS)?;
        let mut out = Vec::new();
        for row in table.range((host.as_str(), 0)..=(host.as_str(), u64::MAX))? {
            out.push(codec::decode(row?.1.value(), RECORD_LIMIT)?);
        }
        Ok(out)
    }
}

/// The bytes a message counts against a quota.
pub fn size_of_message(m: &Message) -> u64 {
    (m.body.len() + m.summary.as_ref().map_or(0, String::len)) as u64
}

#[path = "store_upgrade.rs"]
mod upgrade;

#[path = "store_clock.rs"]
mod clock;

#[path = "store_expire.rs"]
mod expire;
pub use expire::Expired;

#[path = "store_queue.rs"]
mod queue;

#[path = "store_log.rs"]
mod log;
pub use queue::{Enqueue, Made, QueueOp, QueueOpDone};

#[path = "store_handled.rs"]
mod handled;

#[path = "store_tables.rs"]
mod tables;
pub use handled::MAX_HANDLED;
use tables::{QueueTables, add_receipts, take_queued};

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "store_log_tests.rs"]
mod log_tests;
