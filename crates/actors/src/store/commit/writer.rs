//! The commit queue's writer thread: takes every write waiting, logs the
//! group (or commits it durably), applies it in one redb transaction,
//! hands the hub link what it accepted for other hosts, commits, waits for
//! the log's sync and only then answers each writer.
//!
//! Owns the order of those steps; what a write does is `write_op`'s, what
//! the log keeps is `logged`'s. Must not answer anyone before the group's
//! record is synced.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::{mpsc, watch};

use super::{Cmd, CommitStats, MAX_GROUP, Reply};
use crate::federation::stage::{self, micros};
use crate::store::forward_feed::{ForwardFeed, GroupFeed};
use crate::store::logged;
use crate::store::mail::AcceptOutcome;
use crate::store::write_op::{WriteDone, WriteOp, apply_feeding};
use crate::store::{Store, StoreError};
use crate::wal_sync::{SyncWait, WalSyncer};

/// What a writer is told when its group's commit failed: the disk being
/// full is named as such, with what to do. `handed_on`: the group's
/// messages for other hosts went to the hub link before the commit.
fn failed_write(e: &StoreError, handed_on: bool) -> String {
    let full = match e {
        StoreError::Db(db) => match db.as_ref() {
            redb::Error::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        },
        _ => false,
    };
    let hub = if handed_on {
        "; a message for another host may have reached the hub already, so send it \
         again with the same id (`--id ID`) to have it delivered once"
    } else {
        ""
    };
    if full {
        return format!(
            "the disk holding the store is full ({e}); nothing of this was stored here: \
             free space there and try again (everything acknowledged before is kept){hub}"
        );
    }
    format!(
        "the store could not write ({e}); nothing of this was stored here: see the daemon's log{hub}"
    )
}

pub(super) struct Writer {
    pub(super) store: Arc<Store>,
    pub(super) rx: mpsc::Receiver<Cmd>,
    pub(super) mail_epoch: watch::Sender<u64>,
    pub(super) forwards: watch::Sender<u64>,
    pub(super) feed: Arc<ForwardFeed>,
    pub(super) stats: Arc<CommitStats>,
    pub(super) syncer: WalSyncer,
    /// Test hook (with `FLOTILLA_TEST_HOOKS=1`): `FLOTILLA_TEST_COMMIT_GATE`
    /// names a file that each group which handed messages on before its
    /// commit waits for, once applied.
    pub(super) gate: Option<std::path::PathBuf>,
}

impl Writer {
    pub(super) fn run(mut self) {
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
        let GroupOutcome {
            results,
            outcome,
            handed_on,
        } = self.apply_group(group);
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
                let text = failed_write(&e, handed_on);
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
    fn apply_group(&self, group: Vec<(WriteOp, Reply)>) -> GroupOutcome {
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
                return GroupOutcome {
                    results,
                    outcome: Err(e),
                    handed_on: false,
                };
            }
        };
        stage::reached_all("commit.logged", &traced);
        let mut fatal = None;
        let mut mail = None;
        // Only a group whose log record is written hands on early: a crash
        // of the daemon replays it. A durable group has nothing on disk
        // before its commit.
        let early = accepts && !pending.durable() && self.feed.is_open();
        if accepts && !early {
            // Else the link, woken by this commit, would take the feed's
            // last position for the outbox's end and wait for the next
            // acceptance to hand these on.
            self.feed.passed_over();
        }
        let mut fed = early.then(|| GroupFeed::new(&self.feed));
        for (op, reply) in group {
            if fatal.is_some() {
                results.push((Ok(WriteDone::Nothing), reply));
                continue;
            }
            match apply_feeding(&txn, &mut mail, op, fed.as_mut()) {
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
        // The hub link may hand these on now, while the group commits and
        // its record syncs; a failed commit takes them back.
        let first_fed = match fed {
            Some(fed) if fatal.is_none() => fed.applied(),
            Some(fed) => fed.failed(),
            None => None,
        };
        if let (true, Some(gate)) = (first_fed.is_some(), &self.gate) {
            crate::test_hook::wait_for_gate(gate);
        }
        let committing = std::time::Instant::now();
        let outcome = match fatal {
            Some(e) => Err(e),
            None => logged::Log::mark(&txn, &pending)
                .and_then(|()| txn.commit().map_err(StoreError::from)),
        };
        let handed_on = outcome.is_err() && first_fed.is_some();
        if let (Err(_), Some(first)) = (&outcome, first_fed) {
            self.feed.rewind(first);
        }
        stage::reached_all("commit.committed", &traced);
        if pending.durable() && outcome.is_ok() {
            stage::durable_commit("host", committing.elapsed());
        }
        if accepts && outcome.is_ok() {
            self.forwards.send_modify(|e| *e += 1);
        }
        if deliveries && outcome.is_ok() {
            self.mail_epoch.send_modify(|e| *e += 1);
        }
        // Nobody is answered before the record is synced.
        let waiting = std::time::Instant::now();
        if let Some(Err(e)) = syncing.map(SyncWait::wait) {
            logged::sync_failed(&log, &e);
        }
        stage::sync_waited("host", waiting.elapsed());
        match &outcome {
            Ok(()) => log.committed(&pending),
            Err(_) => log.refused(&pending),
        }
        let stats = &self.stats;
        stats
            .apply_us
            .fetch_add(micros(applied - logged), Ordering::Relaxed);
        stats.sync_us.fetch_add(
            micros(applied.elapsed() + (logged - started)),
            Ordering::Relaxed,
        );
        GroupOutcome {
            results,
            outcome,
            handed_on,
        }
    }
}

/// What a group's writes answer, whether its commit succeeded, and whether
/// a failed group had handed messages on to the hub link.
struct GroupOutcome {
    results: Vec<(Result<WriteDone, StoreError>, Reply)>,
    outcome: Result<(), StoreError>,
    handed_on: bool,
}
