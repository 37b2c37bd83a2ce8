//! Admitting a forward in the hub's core: the roster's rules, then the
//! quota of each host it is for, then the queue writer (which queues a
//! message once per host however often it comes). When a queue is at its
//! limit the repeat check comes first, so a forward repeated while its
//! host's queue is full is answered `queued` rather than refused
//! `quota_exceeded` for a message the hub holds. The queue writer commits
//! groups of forwards durably on its own thread while the core goes on
//! (the quota counts a forward from the moment it is handed over); the
//! forward is answered when its outcome comes back ([`CoreState::on_queued`]),
//! so nothing is acknowledged before it is on disk, and outcomes come back
//! in the order the forwards came, so each sender's order holds.

use std::collections::BTreeMap;

use flotilla_actors::federation::{Forward, ForwardOutcome, ForwardRefusal, Forwarded, Frame};
use flotilla_actors::names::{HostName, PeerId};

use super::{CoreState, QueueLimits};
use crate::queue_writer::{QueueDone, QueueWork, WriterWork};
use crate::roster::Refused;
use crate::store::{Depth, Enqueue, size_of_message};

impl CoreState {
    /// Takes a forward from `host` on link `link_id`: handed to the queue
    /// writer (answered when it is on disk), or refused now with why.
    pub(super) fn on_forward(&mut self, host: &HostName, link_id: u64, forward: Forward) {
        let (id, from) = (forward.message.id.clone(), forward.message.from.clone());
        flotilla_actors::federation::stage::reached("hub.forward", &id);
        let admitted = self
            .holds
            .check(host, &forward.message)
            .and_then(|lifts_hold| self.admit(host, link_id, forward, lifts_hold));
        match admitted {
            Ok(true) => {}
            Ok(false) => self.answer(host, id, ForwardOutcome::Queued),
            Err((code, reason)) => {
                tracing::info!(%host, %id, ?code, "forward refused: {reason}");
                self.holds.refused(host, &from, &id, code);
                self.answer(host, id, ForwardOutcome::Refused { code, reason });
            }
        }
    }

    fn answer(
        &self,
        host: &HostName,
        id: flotilla_actors::names::MessageId,
        outcome: ForwardOutcome,
    ) {
        self.send(host, Frame::Forwarded(Forwarded { id, outcome }));
    }

    /// Hands a forward from `host` to the queue writer (`true`), finds it
    /// queued already for every host it is for (`false`), or says why not.
    fn admit(
        &mut self,
        host: &HostName,
        link_id: u64,
        forward: Forward,
        lifts_hold: bool,
    ) -> Result<bool, Refused> {
        let mut by_host = self.roster.admit(host, &forward)?;
        let size = size_of_message(&forward.message);
        // A host that has the message in the store (queued or delivered)
        // is not sent it again, and its queue's limit does not count it.
        let repeats = self
            .store
            .repeats(&forward.message, by_host.keys())
            .map_err(|e| unavailable(&e))?;
        by_host.retain(|target, _| !repeats.contains(target));
        if by_host.is_empty() {
            return Ok(false);
        }
        over_quota(&self.depths, &self.limits, &by_host, size)?;
        reserve(&mut self.depths, by_host.keys(), size, true);
        let targets: Vec<HostName> = by_host.keys().cloned().collect();
        let seqs = self.fresh.number(&forward.message, &by_host);
        let work = QueueWork {
            link_id,
            host: host.clone(),
            enqueue: Enqueue {
                message: forward.message,
                by_host,
                now: self.store.now(),
            },
            seqs,
            lifts_hold,
        };
        if let Err(work) = self.writer.submit(WriterWork::Forward(Box::new(work))) {
            if let WriterWork::Forward(work) = *work {
                reserve(&mut self.depths, work.enqueue.by_host.keys(), size, false);
                self.fresh
                    .settled(work.enqueue.by_host.keys(), &work.seqs, false);
            }
            let why = "the hub's queue writer has stopped".to_owned();
            return Err(unavailable(&crate::store::HubStoreError::Stopped(why)));
        }
        // Pushed now, while the queue writer stores it (see `fresh`).
        for target in targets {
            self.pump(&target);
        }
        Ok(true)
    }

    /// A forward handed to the queue writer was queued, or failed: its
    /// link (if still the same) is answered.
    pub(super) fn on_queued(&mut self, done: QueueDone) {
        let QueueDone { work, outcome } = done;
        let message = &work.enqueue.message;
        let size = size_of_message(message);
        let same_link = self
            .links
            .get(&work.host)
            .is_some_and(|l| l.id == work.link_id);
        let outcome = match outcome {
            Ok(queued_for) => {
                let repeat = |t: &&HostName| !queued_for.contains(*t);
                let repeats: Vec<_> = work.enqueue.by_host.keys().filter(repeat).collect();
                reserve(&mut self.depths, repeats.into_iter(), size, false);
                ForwardOutcome::Queued
            }
            Err(reason) => {
                reserve(&mut self.depths, work.enqueue.by_host.keys(), size, false);
                let code = ForwardRefusal::Unavailable;
                if same_link {
                    self.holds
                        .refused(&work.host, &message.from, &message.id, code);
                }
                ForwardOutcome::Refused { code, reason }
            }
        };
        if same_link {
            self.answer(&work.host, message.id.clone(), outcome);
        }
    }
}

/// Counts (`add`) or stops counting a message of `size` bytes against the
/// queues of `targets`.
pub(super) fn reserve<'a>(
    depths: &mut std::collections::HashMap<HostName, Depth>,
    targets: impl Iterator<Item = &'a HostName>,
    size: u64,
    add: bool,
) {
    for target in targets {
        let depth = depths.entry(target.clone()).or_default();
        if add {
            depth.messages += 1;
            depth.bytes += size;
        } else {
            depth.messages = depth.messages.saturating_sub(1);
            depth.bytes = depth.bytes.saturating_sub(size);
        }
    }
}

fn unavailable(e: &crate::store::HubStoreError) -> Refused {
    tracing::error!("cannot queue a message: {e}");
    let why = format!("the hub could not store the message ({e}); it will be retried");
    (ForwardRefusal::Unavailable, why)
}

/// Refuses a message of `size` bytes new for the hosts of `by_host` if
/// one of their queues would pass its limits.
pub(crate) fn over_quota(
    depths: &std::collections::HashMap<HostName, Depth>,
    limits: &QueueLimits,
    by_host: &BTreeMap<HostName, Vec<PeerId>>,
    size: u64,
) -> Result<(), Refused> {
    for target in by_host.keys() {
        let depth = depths.get(target).copied().unwrap_or_default();
        if depth.messages + 1 > limits.max_messages || depth.bytes + size > limits.max_bytes {
            let why = format!(
                "the hub's queue for {target} is full ({} messages, {} bytes; the limits are {} and {}); \
                 wait for {target} to come back, or raise queue_max_messages / queue_max_bytes in the hub's [hub_server]",
                depth.messages, depth.bytes, limits.max_messages, limits.max_bytes
            );
            return Err((ForwardRefusal::QuotaExceeded, why));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_at_its_limit_refuses_naming_the_keys() {
        let work = HostName::new("work").expect("host");
        let limits = QueueLimits {
            max_messages: 1,
            ..QueueLimits::default()
        };
        let mut by_host = BTreeMap::new();
        by_host.insert(work.clone(), Vec::new());
        let mut depths = std::collections::HashMap::new();
        assert!(over_quota(&depths, &limits, &by_host, 10).is_ok());
        depths.insert(
            work,
            Depth {
                messages: 1,
                bytes: 10,
            },
        );
        let (code, why) = over_quota(&depths, &limits, &by_host, 10).expect_err("full");
        assert_eq!(code, ForwardRefusal::QuotaExceeded);
        assert!(why.contains("queue_max_messages"), "{why}");
    }
}
