//! The group-commit queue: the one writer of a store.
//!
//! Writes from any task go into a channel; a dedicated thread takes every
//! write waiting at that moment, makes them durable with one fsync for
//! the whole group (a write-ahead log record, or a durable redb commit: see
//! `logged`), applies them in one redb transaction and only then answers
//! each writer. So an acknowledgement always means "on disk", and many
//! concurrent senders share fsyncs. [`CommitQueue::shutdown`] lets the thread
//! finish the group in progress and everything queued before it, then stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use tokio::sync::{mpsc, oneshot, watch};

use super::logged;
use super::mail::{AcceptOutcome, NewMessage};
use super::write_op::apply;
use super::write_op::{WriteDone, WriteOp};
use super::{Store, StoreError};
use crate::federation::stage;
use crate::names::{MessageId, PeerId};
use crate::wal_sync::{SyncWait, WalSyncer};

/// Most writes applied in one transaction.
const MAX_GROUP: usize = 1024;
/// Queue depth before writers wait.
const QUEUE_DEPTH: usize = 8192;

type Reply = oneshot::Sender<Result<WriteDone, StoreError>>;

#[derive(Debug)]
enum Cmd {
    Write(Box<WriteOp>, Reply),
    Stop,
}

/// Counters of the writer, for status and benchmarks.
#[derive(Debug, Default)]
pub struct CommitStats {
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Writes applied.
    pub writes: AtomicU64,
    /// Messages newly stored.
    pub accepted: AtomicU64,
    /// Microseconds spent applying writes to transactions.
    pub apply_us: AtomicU64,
    /// Microseconds spent committing them (writing pages and the fsync).
    pub sync_us: AtomicU64,
}

/// A handle on the writer; cheap to clone.
#[derive(Debug, Clone)]
pub struct CommitQueue {
    tx: mpsc::Sender<Cmd>,
    stats: Arc<CommitStats>,
    forwards: watch::Receiver<u64>,
}

impl CommitQueue {
    /// Starts the writer thread. `mail_epoch` is bumped after every commit
    /// that changed an inbox or a lane, so readers waiting for mail, lane
    /// events or results wake up.
    pub fn start(
        store: Arc<Store>,
        mail_epoch: watch::Sender<u64>,
    ) -> std::io::Result<(Self, JoinHandle<()>)> {
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let stats = Arc::new(CommitStats::default());
        let (forwards_tx, forwards) = watch::channel(0);
        let writer = Writer {
            store,
            rx,
            mail_epoch,
            forwards: forwards_tx,
            stats: stats.clone(),
            syncer: WalSyncer::start()?,
        };
        let handle = std::thread::Builder::new()
            .name("flotilla-commit".into())
            .spawn(move || writer.run())?;
        Ok((
            Self {
                tx,
                stats,
                forwards,
            },
            handle,
        ))
    }

    /// Bumped as soon as a group that accepted messages has committed,
    /// while its log record may still be syncing: the hub link may hand
    /// those messages on at once (the hub stores them once, by id), but no
    /// one is answered, and no inbox reader woken, before the sync.
    pub fn forwards_ready(&self) -> watch::Receiver<u64> {
        self.forwards.clone()
    }

    /// The writer's counters.
    pub fn stats(&self) -> &CommitStats {
        &self.stats
    }

    /// Asks the writer to stop once everything queued so far is committed.
    pub async fn shutdown(&self) {
        let _ = self.tx.send(Cmd::Stop).await;
    }

    pub(super) async fn submit(
        &self,
        op: WriteOp,
    ) -> Result<oneshot::Receiver<Result<WriteDone, StoreError>>, StoreError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Write(Box::new(op), reply))
            .await
            .map_err(|_| stopped())?;
        Ok(rx)
    }

    pub(super) async fn write(&self, op: WriteOp) -> Result<WriteDone, StoreError> {
        self.submit(op).await?.await.map_err(|_| stopped())?
    }

    /// Accepts a message durably (or recognises a retry).
    pub async fn accept(&self, m: NewMessage) -> Result<AcceptOutcome, StoreError> {
        self.submit_accept(m).await?.await
    }

    /// Queues a message for acceptance and returns at once with a future of
    /// the outcome: writes queued one after another commit in that order, so
    /// a caller that must keep order queues in order and awaits elsewhere.
    pub async fn submit_accept(
        &self,
        m: NewMessage,
    ) -> Result<impl Future<Output = Result<AcceptOutcome, StoreError>> + Send + 'static, StoreError>
    {
        let rx = self.submit(WriteOp::Accept(m)).await?;
        Ok(async move {
            match rx.await.map_err(|_| stopped())?? {
                WriteDone::Accepted(o) => Ok(o),
                other => Err(unexpected(other)),
            }
        })
    }

    /// Acknowledges messages; returns how many were removed.
    pub async fn ack(&self, peer: PeerId, ids: Vec<MessageId>) -> Result<u64, StoreError> {
        self.count(WriteOp::Ack { peer, ids }).await
    }

    pub(super) async fn count(&self, op: WriteOp) -> Result<u64, StoreError> {
        match self.write(op).await? {
            WriteDone::Count(n) => Ok(n),
            other => Err(unexpected(other)),
        }
    }
}

/// What a writer is told when its group's commit failed: the disk being
/// full is named as such, with what to do.
fn failed_write(e: &StoreError) -> String {
    let full = match e {
        StoreError::Db(db) => match db.as_ref() {
            redb::Error::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        },
        _ => false,
    };
    if full {
        return format!(
            "the disk holding the store is full ({e}); nothing of this was stored: \
             free space there and try again (everything acknowledged before is kept)"
        );
    }
    format!("the store could not write ({e}); nothing of this was stored: see the daemon's log")
}

pub(super) fn stopped() -> StoreError {
    StoreError::Rejected("the store is shutting down".into())
}

pub(super) fn unexpected(done: WriteDone) -> StoreError {
    StoreError::Rejected(format!("the writer answered with {done:?}"))
}

struct Writer {
    store: Arc<Store>,
    rx: mpsc::Receiver<Cmd>,
    mail_epoch: watch::Sender<u64>,
    forwards: watch::Sender<u64>,
    stats: Arc<CommitStats>,
    syncer: WalSyncer,
}

impl Writer {
    fn run(mut self) {
        while let Some(first) = self.rx.blocking_recv() {
            let mut group = Vec::new();
            let mut stop = false;
            let mut next = Some(first);
            while let Some(cmd) = next {
                match cmd {
                    Cmd::Write(op, reply) => group.push((*op, reply)),
                    Cmd::Stop => {
                        stop = true;
                        break;
                    }
                }
                next = if group.len() < MAX_GROUP {
                    self.rx.try_recv().ok()
                } else {
                    None
                };
            }
            if !group.is_empty() {
                self.commit_group(group);
            }
            if stop {
                self.rx.close();
                while let Ok(Cmd::Write(op, reply)) = self.rx.try_recv() {
                    self.commit_group(vec![(*op, reply)]);
                }
                break;
            }
        }
        // What the log holds goes into the store itself, so a clean stop
        // leaves an empty log.
        if let Err(e) = self
            .store
            .db()
            .and_then(|db| self.store.log().checkpoint(&db))
        {
            tracing::warn!(error = %e, "the last durable commit failed; the write-ahead log is applied at the next start");
        }
        tracing::debug!("commit queue stopped");
    }

    fn commit_group(&self, group: Vec<(WriteOp, Reply)>) {
        let mail_changed = group.iter().any(|(op, _)| op.wakes_readers());
        let (results, outcome) = self.apply_group(group);
        self.stats.commits.fetch_add(1, Ordering::Relaxed);
        self.stats
            .writes
            .fetch_add(results.len() as u64, Ordering::Relaxed);
        match outcome {
            Ok(()) => {
                for (result, reply) in results {
                    if let Ok(WriteDone::Accepted(AcceptOutcome::Stored(_))) = &result {
                        self.stats.accepted.fetch_add(1, Ordering::Relaxed);
                    }
                    let _ = reply.send(result);
                }
                if mail_changed {
                    self.mail_epoch.send_modify(|e| *e += 1);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "store commit failed; the whole group was refused");
                let text = failed_write(&e);
                // redb takes no write after a failed commit until the file
                // is opened again; reads go on meanwhile.
                match self.store.reopen() {
                    Ok(()) => tracing::warn!("store opened again after the failed commit"),
                    Err(e) => tracing::error!(error = %e, "store could not be opened again"),
                }
                for (_, reply) in results {
                    let _ = reply.send(Err(StoreError::WriteFailed(text.clone())));
                }
            }
        }
    }

    /// Applies every write in one transaction and commits it. A write that
    /// breaks a rule only fails itself; a storage failure fails the group.
    #[allow(clippy::type_complexity)]
    fn apply_group(
        &self,
        group: Vec<(WriteOp, Reply)>,
    ) -> (
        Vec<(Result<WriteDone, StoreError>, Reply)>,
        Result<(), StoreError>,
    ) {
        let mut results = Vec::with_capacity(group.len());
        let db = self.store.db().or_else(|_| {
            self.store.reopen()?;
            self.store.db()
        });
        let started = std::time::Instant::now();
        let traced = WriteOp::traced(group.iter().map(|(op, _)| op));
        stage::reached_all("commit.taken", &traced);
        let mut log = self.store.log();
        let ops: Vec<&WriteOp> = group.iter().map(|(op, _)| op).collect();
        let accepts = ops.iter().any(|op| matches!(op, WriteOp::Accept(_)));
        let deliveries = ops.iter().any(|op| op.readable_before_sync());
        let txn = db.and_then(|db| {
            let (pending, sync) = log.begin(&db, &ops, self.store.take_lazy())?;
            // The disk syncs the record while the group is applied.
            let syncing = sync.then(|| self.syncer.sync(log.file()));
            let txn = db
                .begin_write()
                .map_err(StoreError::from)
                .and_then(|mut txn| {
                    if !pending.durable() {
                        txn.set_durability(redb::Durability::None)?;
                    }
                    Ok(txn)
                });
            match txn {
                Ok(txn) => Ok((txn, pending, syncing)),
                Err(e) => {
                    let _ = syncing.map(SyncWait::wait);
                    log.refused(&pending);
                    Err(e)
                }
            }
        });
        drop(ops);
        let logged = std::time::Instant::now();
        let (txn, pending, syncing) = match txn {
            Ok(txn) => txn,
            Err(e) => {
                let results = group
                    .into_iter()
                    .map(|(_, r)| (Ok(WriteDone::Nothing), r))
                    .collect();
                return (results, Err(e));
            }
        };
        stage::reached_all("commit.logged", &traced);
        let mut fatal = None;
        let mut mail = None;
        for (op, reply) in group {
            if fatal.is_some() {
                results.push((Ok(WriteDone::Nothing), reply));
                continue;
            }
            match apply(&txn, &mut mail, op) {
                Err(e @ (StoreError::Db(_) | StoreError::Codec(_))) => {
                    fatal = Some(e);
                    results.push((Ok(WriteDone::Nothing), reply));
                }
                other => results.push((other, reply)),
            }
        }
        drop(mail);
        let applied = std::time::Instant::now();
        stage::reached_all("commit.applied", &traced);
        let outcome = match fatal {
            Some(e) => Err(e),
            None => logged::Log::mark(&txn, &pending)
                .and_then(|()| txn.commit().map_err(StoreError::from)),
        };
        stage::reached_all("commit.committed", &traced);
        if accepts && outcome.is_ok() {
            self.forwards.send_modify(|e| *e += 1);
        }
        if deliveries && outcome.is_ok() {
            self.mail_epoch.send_modify(|e| *e += 1);
        }
        // Nobody is answered before the record is synced.
        if let Some(Err(e)) = syncing.map(SyncWait::wait) {
            logged::sync_failed(&log, &e);
        }
        match &outcome {
            Ok(()) => log.committed(&pending),
            Err(_) => log.refused(&pending),
        }
        let micros = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let stats = &self.stats;
        stats
            .apply_us
            .fetch_add(micros(applied - logged), Ordering::Relaxed);
        stats.sync_us.fetch_add(
            micros(applied.elapsed() + (logged - started)),
            Ordering::Relaxed,
        );
        (results, outcome)
    }
}
