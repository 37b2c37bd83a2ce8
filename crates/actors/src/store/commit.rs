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
use std::sync::atomic::AtomicU64;
use std::thread::JoinHandle;

use tokio::sync::{mpsc, oneshot, watch};

use super::forward_feed::ForwardFeed;
use super::mail::{AcceptOutcome, NewMessage};
use super::write_op::{WriteDone, WriteOp};
use super::{Store, StoreError};
use crate::names::{MessageId, PeerId};
use crate::wal_sync::WalSyncer;

mod writer;

use writer::Writer;

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
    feed: Arc<ForwardFeed>,
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
        let feed = Arc::new(ForwardFeed::default());
        let writer = Writer {
            store,
            rx,
            mail_epoch,
            forwards: forwards_tx,
            feed: feed.clone(),
            stats: stats.clone(),
            syncer: WalSyncer::start()?,
            gate: crate::test_hook::path("FLOTILLA_TEST_COMMIT_GATE"),
        };
        let handle = std::thread::Builder::new()
            .name("flotilla-commit".into())
            .spawn(move || writer.run())?;
        Ok((
            Self {
                tx,
                stats,
                forwards,
                feed,
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

    /// Messages for the hub handed on as soon as they are accepted,
    /// before their group commits (see `forward_feed`).
    pub fn forward_feed(&self) -> &ForwardFeed {
        &self.feed
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

pub(super) fn stopped() -> StoreError {
    StoreError::Rejected("the store is shutting down".into())
}

pub(super) fn unexpected(done: WriteDone) -> StoreError {
    StoreError::Rejected(format!("the writer answered with {done:?}"))
}
