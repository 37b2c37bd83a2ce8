//! Queuing messages for their hosts: one forward's deliveries, or a group
//! of forwards in one durable commit (one fsync for all of them, as the
//! host's store groups its writes). A message already queued or handled
//! for a host is not queued for it again. Must not decide routing or
//! quotas (the core does, before it asks).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use flotilla_actors::codec;
use flotilla_actors::federation::Deliver;
use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{HostName, PeerId};
use redb::{ReadableTable, WriteTransaction};

use super::size_of_message;
use super::{BY_AGE, HubStore, HubStoreError, QUEUE, QUEUED_IDS, Queued, handled, next_seq};

/// One forward to queue: the message and its recipients by host.
#[derive(Debug)]
pub struct Enqueue {
    /// The message.
    pub message: Message,
    /// Its recipients, by their host.
    pub by_host: BTreeMap<HostName, Vec<PeerId>>,
    /// When it was queued, on the hub's clock.
    pub now: Timestamp,
}

/// The deliveries one forward made, by host.
pub type Made = Vec<(HostName, Deliver)>;

impl HubStore {
    /// Queues `message` for each host of `by_host`, in one transaction.
    /// Returns the deliveries made now (for hosts to push to), by host.
    pub fn enqueue(
        &self,
        message: &Message,
        by_host: &BTreeMap<HostName, Vec<PeerId>>,
        now: Timestamp,
    ) -> Result<Made, HubStoreError> {
        let txn = self.db.begin_write()?;
        let made = enqueue_in(&txn, message, by_host, now)?;
        txn.commit()?;
        Ok(made)
    }

    /// Queues every forward of `group` in one durable commit, in order:
    /// what each made, or the one error that failed them all (nothing of
    /// the group is then stored).
    pub fn enqueue_group<'a>(
        &self,
        group: impl IntoIterator<Item = &'a Enqueue>,
    ) -> Result<Vec<Made>, HubStoreError> {
        let txn = self.db.begin_write()?;
        let made = group
            .into_iter()
            .map(|e| enqueue_in(&txn, &e.message, &e.by_host, e.now))
            .collect::<Result<Vec<_>, _>>()?;
        txn.commit()?;
        self.queue_commits.fetch_add(1, Ordering::Relaxed);
        Ok(made)
    }

    /// Durable commits [`HubStore::enqueue_group`] has made.
    pub fn queue_commits(&self) -> u64 {
        self.queue_commits.load(Ordering::Relaxed)
    }
}

fn enqueue_in(
    txn: &WriteTransaction,
    message: &Message,
    by_host: &BTreeMap<HostName, Vec<PeerId>>,
    now: Timestamp,
) -> Result<Made, HubStoreError> {
    let mut made = Vec::new();
    let mut ids = txn.open_table(QUEUED_IDS)?;
    let mut queue = txn.open_table(QUEUE)?;
    let mut by_age = txn.open_table(BY_AGE)?;
    let from = message.from.to_string();
    for (host, to) in by_host {
        let key = (host.as_str(), from.as_str(), message.id.as_str());
        if ids.get(key)?.is_some() || handled::was_handled(txn, host, message)? {
            continue;
        }
        let seq = next_seq(txn)?;
        let queued = Queued {
            message: message.clone(),
            to: to.clone(),
            queued_at: now,
            bytes: size_of_message(message),
        };
        queue.insert((host.as_str(), seq), codec::encode(&queued)?.as_slice())?;
        ids.insert(key, seq)?;
        by_age.insert((now.0, host.as_str(), seq), ())?;
        let deliver = Deliver {
            seq,
            message: message.clone(),
            to: to.clone(),
        };
        made.push((host.clone(), deliver));
    }
    Ok(made)
}
