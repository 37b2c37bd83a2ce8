//! The hub's queue writer: the one thread that writes queues, many writes
//! to a commit. The core hands it each admitted forward, each delivery a
//! host acknowledged and each receipt acknowledgement, and goes on; the
//! thread takes every write waiting at that moment, applies them in one
//! transaction, commits it (durably when it queues a message: one fsync
//! for the group), and only then reports the group's outcomes, in the
//! order the writes came. The core answers a forward when its outcome
//! arrives, so nothing is acknowledged before it is on disk, and each
//! sender's order holds. The core numbers a forward's deliveries and
//! pushes them before handing it here (a host stores a message once, so
//! one pushed from a commit that then fails does no harm: its sender is
//! told `unavailable` and sends it again); this thread stores them under
//! those numbers.
//!
//! A group that fails fails every forward in it. A later forward of a
//! sender whose earlier one failed on the same link fails too, without
//! being tried, until the core sends the failed one again (then marked
//! [`QueueWork::lifts_hold`]): the core's holds refuse the sender from the
//! moment it hears of the failure, and this covers what was already on its
//! way here. Must not decide routing or quotas (the core does).

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_actors::names::{HostName, MessageId, PeerId};
use tokio::sync::mpsc;

use crate::store::{Enqueue, HubStore, QueueOp, QueueOpDone};

/// Most forwards queued in one commit.
const MAX_GROUP: usize = 512;

/// One admitted forward.
#[derive(Debug)]
pub struct QueueWork {
    /// The link it came on.
    pub link_id: u64,
    /// Its host.
    pub host: HostName,
    /// What to queue.
    pub enqueue: Enqueue,
    /// Its delivery seqs, one per host of `enqueue.by_host`, in order.
    pub seqs: Vec<u64>,
    /// It is the message a hold of its sender waits for.
    pub lifts_hold: bool,
}

/// One write for the queue writer.
#[derive(Debug)]
pub enum WriterWork {
    /// Queue an admitted forward.
    Forward(Box<QueueWork>),
    /// `host` stored delivery `seq`.
    Delivered {
        /// The host.
        host: HostName,
        /// The delivery.
        seq: u64,
        /// Recipients no longer there.
        gone: Vec<PeerId>,
    },
    /// `host` has the receipts up to `seq`.
    AckReceipts {
        /// The host.
        host: HostName,
        /// The last receipt it has.
        seq: u64,
    },
}

/// What became of one write.
#[derive(Debug)]
pub enum WriterDone {
    /// A forward, queued or not.
    Forward(QueueDone),
    /// A delivery taken off `host`'s queue (`None`: it was not there, or
    /// the write failed, which is logged).
    Delivered {
        /// The host.
        host: HostName,
        /// What it was.
        done: Option<crate::store::DeliveryDone>,
    },
}

/// What became of one forward.
#[derive(Debug)]
pub struct QueueDone {
    /// The work, as handed over.
    pub work: Box<QueueWork>,
    /// The hosts it was queued for now (none that had it already), or
    /// why it was not queued.
    pub outcome: Result<Vec<HostName>, String>,
}

/// Senders whose forward failed, by link, with the failed message: their
/// later forwards fail untried until the failed one comes again.
#[derive(Debug, Default)]
pub(crate) struct Poisoned {
    held: HashMap<(u64, PeerId), MessageId>,
}

impl Poisoned {
    /// Why `work` must fail untried, if it must.
    pub(crate) fn check(&mut self, work: &QueueWork) -> Option<String> {
        let key = (work.link_id, work.enqueue.message.from.clone());
        if work.lifts_hold {
            self.held.remove(&key);
            return None;
        }
        self.held.get(&key).map(|id| {
            format!(
                "held behind {}'s earlier message {id}, which the hub could not store; \
                 it will be retried in order",
                key.1
            )
        })
    }

    /// `work` was tried and failed.
    pub(crate) fn failed(&mut self, work: &QueueWork) {
        let key = (work.link_id, work.enqueue.message.from.clone());
        self.held
            .entry(key)
            .or_insert_with(|| work.enqueue.message.id.clone());
    }
}

/// The writer's handle: writes go in, outcomes come out through the
/// callback given to [`QueueWriter::start`].
#[derive(Debug, Clone)]
pub struct QueueWriter {
    tx: mpsc::UnboundedSender<WriterWork>,
}

impl QueueWriter {
    /// Starts the thread; `done` gets the outcomes of each group, in
    /// order. The thread ends when every handle is dropped, after what was
    /// handed over.
    pub fn start(
        store: Arc<HubStore>,
        done: impl Fn(Vec<WriterDone>) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (tx, mut rx) = mpsc::unbounded_channel::<WriterWork>();
        std::thread::Builder::new()
            .name("hub-queue-writer".into())
            .spawn(move || {
                let mut poisoned = Poisoned::default();
                let gate = test_gate();
                while let Some(first) = rx.blocking_recv() {
                    if let Some(gate) = &gate {
                        flotilla_actors::test_hook::wait_for_gate(gate);
                    }
                    let mut group = vec![first];
                    while group.len() < MAX_GROUP {
                        match rx.try_recv() {
                            Ok(work) => group.push(work),
                            Err(_) => break,
                        }
                    }
                    let outcomes = commit_group(&store, &mut poisoned, group);
                    done(outcomes);
                }
            })?;
        Ok(Self { tx })
    }

    /// Hands `work` over; `Err` gives it back when the thread has ended.
    pub fn submit(&self, work: WriterWork) -> Result<(), Box<WriterWork>> {
        self.tx.send(work).map_err(|e| Box::new(e.0))
    }
}

/// Test hook (with `FLOTILLA_TEST_HOOKS=1`): `FLOTILLA_TEST_HUB_WRITER_GATE`
/// names a file each group waits for before it is written, so a test can
/// hold the hub's queue writes.
fn test_gate() -> Option<std::path::PathBuf> {
    flotilla_actors::test_hook::path("FLOTILLA_TEST_HUB_WRITER_GATE")
}

/// Applies what of `group` may be tried, in one commit; the outcomes in
/// the group's order.
fn commit_group(
    store: &HubStore,
    poisoned: &mut Poisoned,
    group: Vec<WriterWork>,
) -> Vec<WriterDone> {
    let held: Vec<Option<String>> = group
        .iter()
        .map(|w| match w {
            WriterWork::Forward(f) => poisoned.check(f),
            _ => None,
        })
        .collect();
    let tried = group
        .iter()
        .zip(&held)
        .filter(|(_, h)| h.is_none())
        .map(|(w, _)| match w {
            WriterWork::Forward(f) => QueueOp::EnqueueAt {
                enqueue: &f.enqueue,
                seqs: &f.seqs,
            },
            WriterWork::Delivered { host, seq, gone } => QueueOp::Delivered {
                host,
                seq: *seq,
                gone,
            },
            WriterWork::AckReceipts { host, seq } => QueueOp::AckReceipts { host, seq: *seq },
        });
    let mut applied = match store.apply_group(tried) {
        Ok(done) => Ok(done.into_iter()),
        Err(e) => {
            tracing::error!("cannot write the hub's queues: {e}");
            Err(format!(
                "the hub could not store the message ({e}); it will be retried"
            ))
        }
    };
    let mut out = Vec::with_capacity(group.len());
    for (work, held) in group.into_iter().zip(held) {
        let result = match (held, &mut applied) {
            (Some(why), _) => Err(why),
            (None, Ok(done)) => done.next().ok_or_else(|| "lost in the group".to_owned()),
            (None, Err(why)) => Err(why.clone()),
        };
        match work {
            WriterWork::Forward(work) => {
                let outcome = match result {
                    Ok(QueueOpDone::Made(made)) => Ok(made.into_iter().map(|(h, _)| h).collect()),
                    Ok(_) => Err("a forward was answered as another write".to_owned()),
                    Err(why) => {
                        poisoned.failed(&work);
                        Err(why)
                    }
                };
                out.push(WriterDone::Forward(QueueDone { work, outcome }));
            }
            WriterWork::Delivered { host, .. } => {
                let done = match result {
                    Ok(QueueOpDone::Delivered(done)) => done,
                    _ => None,
                };
                out.push(WriterDone::Delivered { host, done });
            }
            WriterWork::AckReceipts { .. } => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "queue_writer_tests.rs"]
mod tests;
