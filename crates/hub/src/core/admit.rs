//! Admitting a forward in the hub's core: the roster's rules, then the
//! repeat check (a message queued or handled already for a host is answered
//! `queued` again and not queued twice), then the quota of each host it is
//! new for, then the store. A repeat is checked before the quota, so a
//! forward repeated while its host's queue is full is not refused
//! `quota_exceeded` for a message the hub holds. The durable commit runs on
//! a blocking thread, so its fsync does not hold an async worker thread
//! (the links' sessions keep running on it); the core waits for it before
//! it answers, so nothing is acknowledged before it is on disk and each
//! sender's order holds.

use std::collections::BTreeMap;

use flotilla_actors::federation::{Forward, ForwardOutcome, ForwardRefusal, Forwarded, Frame};
use flotilla_actors::names::{HostName, PeerId};

use super::{CoreState, QueueLimits};
use crate::roster::Refused;
use crate::store::{Depth, size_of_message};

impl CoreState {
    /// Answers a forward from `host`: queued, or refused with why.
    pub(super) async fn on_forward(&mut self, host: &HostName, forward: Forward) {
        let id = forward.message.id.clone();
        let admitted = match self.holds.check(host, &forward.message) {
            Ok(()) => self.admit(host, &forward).await,
            Err(refused) => Err(refused),
        };
        let outcome = match admitted {
            Ok(()) => ForwardOutcome::Queued,
            Err((code, reason)) => {
                tracing::info!(%host, %id, ?code, "forward refused: {reason}");
                self.holds.refused(host, &forward.message, code);
                ForwardOutcome::Refused { code, reason }
            }
        };
        self.send(host, Frame::Forwarded(Forwarded { id, outcome }));
    }

    /// Queues a forward from `host`, or says why not.
    async fn admit(&mut self, host: &HostName, forward: &Forward) -> Result<(), Refused> {
        let mut by_host = self.roster.admit(host, forward)?;
        let repeats = self
            .store
            .repeats(&forward.message, by_host.keys())
            .map_err(|e| unavailable(&e))?;
        by_host.retain(|target, _| !repeats.contains(target));
        if by_host.is_empty() {
            return Ok(());
        }
        let size = size_of_message(&forward.message);
        over_quota(&self.depths, &self.limits, &by_host, size)?;
        let (store, message, now) = (
            self.store.clone(),
            forward.message.clone(),
            self.store.now(),
        );
        let made = tokio::task::spawn_blocking(move || store.enqueue(&message, &by_host, now))
            .await
            .map_err(|e| unavailable(&crate::store::HubStoreError::Stopped(e.to_string())))?
            .map_err(|e| unavailable(&e))?;
        for (target, _) in made {
            let depth = self.depths.entry(target.clone()).or_default();
            depth.messages += 1;
            depth.bytes += size;
            self.pump(&target);
        }
        Ok(())
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
