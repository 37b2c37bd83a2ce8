//! The hub's queue writer: the one thread that queues forwards, many to a
//! durable commit. The core hands it each admitted forward and goes on;
//! the thread takes every forward waiting at that moment, queues them in
//! one transaction, commits it durably (one fsync for the group), and only
//! then reports each outcome, in the order the forwards came. The core
//! answers a forward when its outcome arrives, so nothing is acknowledged
//! before it is on disk, and each sender's order holds.
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

use crate::store::{Enqueue, HubStore};

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
    /// It is the message a hold of its sender waits for.
    pub lifts_hold: bool,
}

/// What became of one forward.
#[derive(Debug)]
pub struct QueueDone {
    /// The work, as handed over.
    pub work: QueueWork,
    /// The deliveries it made (none for hosts it was queued for already),
    /// or why it was not queued.
    pub outcome: Result<crate::store::Made, String>,
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

/// The writer's handle: forwards go in, outcomes come out through the
/// callback given to [`QueueWriter::start`].
#[derive(Debug, Clone)]
pub struct QueueWriter {
    tx: mpsc::UnboundedSender<QueueWork>,
}

impl QueueWriter {
    /// Starts the thread; `done` gets every outcome, in order. The thread
    /// ends when every handle is dropped, after what was handed over.
    pub fn start(
        store: Arc<HubStore>,
        mut done: impl FnMut(QueueDone) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (tx, mut rx) = mpsc::unbounded_channel::<QueueWork>();
        std::thread::Builder::new()
            .name("hub-queue-writer".into())
            .spawn(move || {
                let mut poisoned = Poisoned::default();
                while let Some(first) = rx.blocking_recv() {
                    let mut group = vec![first];
                    while group.len() < MAX_GROUP {
                        match rx.try_recv() {
                            Ok(work) => group.push(work),
                            Err(_) => break,
                        }
                    }
                    for outcome in commit_group(&store, &mut poisoned, group) {
                        done(outcome);
                    }
                }
            })?;
        Ok(Self { tx })
    }

    /// Hands `work` over; `Err` gives it back when the thread has ended.
    pub fn submit(&self, work: QueueWork) -> Result<(), Box<QueueWork>> {
        self.tx.send(work).map_err(|e| Box::new(e.0))
    }
}

/// Queues what of `group` may be tried, in one commit; the outcomes in
/// the group's order.
fn commit_group(
    store: &HubStore,
    poisoned: &mut Poisoned,
    group: Vec<QueueWork>,
) -> Vec<QueueDone> {
    let verdicts: Vec<Option<String>> = group.iter().map(|w| poisoned.check(w)).collect();
    let tried = group
        .iter()
        .zip(&verdicts)
        .filter(|(_, held)| held.is_none())
        .map(|(w, _)| &w.enqueue);
    let mut made = match store.enqueue_group(tried) {
        Ok(made) => Ok(made.into_iter()),
        Err(e) => {
            tracing::error!("cannot queue messages: {e}");
            Err(format!(
                "the hub could not store the message ({e}); it will be retried"
            ))
        }
    };
    group
        .into_iter()
        .zip(verdicts)
        .map(|(work, held)| {
            let outcome = match (held, &mut made) {
                (Some(why), _) => Err(why),
                (None, Ok(made)) => made.next().ok_or_else(|| "lost in the group".to_owned()),
                (None, Err(why)) => {
                    poisoned.failed(&work);
                    Err(why.clone())
                }
            };
            QueueDone { work, outcome }
        })
        .collect()
}

#[cfg(test)]
#[path = "queue_writer_tests.rs"]
mod tests;
