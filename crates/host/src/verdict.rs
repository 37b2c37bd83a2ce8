//! The hub's verdict on a send, for the sender: a message for peers of
//! other hosts is answered once the hub has it on disk (or refused it), so
//! a full queue at the hub is an error the sender sees at once. While the
//! hub link is down the message waits here and the answer says so.
//!
//! The verdict is read from the [`HeardVerdicts`] as soon as the link
//! hears it, so the sender does not wait for the host to write it down
//! (that write is the outbox's own bookkeeping, and it may be lost in a
//! crash: the outbox then hands the message over again, and the hub queues
//! it once).
//!
//! Reads only (the outbox, the verdicts heard and whether the link runs); the
//! hub link records the verdict. Must not retry or resend anything.

use std::collections::HashMap;
use std::sync::Mutex;

use flotilla_actors::federation::ForwardOutcome;
use flotilla_actors::names::MessageId;
use flotilla_actors::protocol::{ControlError, ErrorCode, SendReply};
use flotilla_actors::store::{DeliveryState, OutboxEntry};
use serde_json::json;
use tokio::sync::watch;

use crate::context::HostContext;

/// The hub's verdicts the link heard and the store has not yet recorded,
/// by message; a change is announced on a watch channel.
#[derive(Debug)]
pub struct HeardVerdicts {
    heard: Mutex<HashMap<MessageId, ForwardOutcome>>,
    changed: watch::Sender<u64>,
}

impl Default for HeardVerdicts {
    fn default() -> Self {
        Self {
            heard: Mutex::default(),
            changed: watch::Sender::new(0),
        }
    }
}

impl HeardVerdicts {
    /// The link heard `outcome` for `id` (kept until [`Self::recorded`]).
    pub(crate) fn heard(&self, id: &MessageId, outcome: &ForwardOutcome) {
        if let Ok(mut heard) = self.heard.lock() {
            heard.insert(id.clone(), outcome.clone());
        }
        self.changed.send_modify(|n| *n += 1);
    }

    /// The store has recorded `outcome` for `id`, or failed to (the link
    /// then ends, and the message is handed over again). A different
    /// verdict heard since for the same message stays until its own
    /// record lands.
    pub(crate) fn recorded(&self, id: &MessageId, outcome: &ForwardOutcome) {
        if let Ok(mut heard) = self.heard.lock()
            && heard.get(id) == Some(outcome)
        {
            heard.remove(id);
        }
    }

    fn get(&self, id: &MessageId) -> Option<ForwardOutcome> {
        self.heard.lock().ok()?.get(id).cloned()
    }
}

/// The store's outbox entry of `id`.
fn stored_entry(ctx: &HostContext, id: &MessageId) -> Result<Option<OutboxEntry>, ControlError> {
    ctx.store
        .outbox_entry(id)
        .map_err(crate::registry::store_error)
}

/// `stored` with the verdict heard for `id`, if the store has not recorded
/// that yet.
fn as_heard(
    ctx: &HostContext,
    id: &MessageId,
    stored: &Option<OutboxEntry>,
) -> Option<OutboxEntry> {
    let mut entry = stored.clone();
    if let (Some(e), Some(outcome)) = (entry.as_mut(), ctx.verdicts.get(id)) {
        e.apply_verdict(&outcome);
    }
    entry
}

/// What woke a sender waiting for the hub's verdict.
enum Wake {
    /// A commit: the verdict may be on disk.
    Stored,
    /// A verdict was heard (perhaps another message's), or the link came
    /// up or ended: what is heard and whether the link runs are read again.
    LookAgain,
}

/// Waits (bounded) for the hub's verdict on `reply`'s remote recipients;
/// fills `reply.remote`, or fails when the hub refused them.
pub(crate) async fn await_hub(
    ctx: &HostContext,
    mut reply: SendReply,
    sender: &flotilla_actors::names::PeerName,
) -> Result<SendReply, ControlError> {
    let mut epoch = ctx.mail_epoch.clone();
    let mut heard = ctx.verdicts.changed.subscribe();
    // The link's lane-call channel is there exactly while the link runs:
    // it is both whether the hub can answer and the wake when that changes.
    let mut link = ctx.hub_calls.subscribe();
    let deadline = tokio::time::Instant::now() + ctx.config.hub_verdict_wait();
    epoch.borrow_and_update();
    // The store is read again only after a commit: a verdict heard for
    // another message (many are, with many sends in flight) costs this
    // waiter a look into the map, not a read of the store.
    let mut stored = stored_entry(ctx, &reply.id)?;
    let entry = loop {
        let entry = as_heard(ctx, &reply.id, &stored);
        let waiting = entry.as_ref().is_some_and(|e| {
            e.recipients
                .iter()
                .any(|r| r.state == DeliveryState::Accepted)
        });
        if !waiting || link.borrow_and_update().is_none() {
            break entry;
        }
        let changed = async {
            tokio::select! {
                r = epoch.changed() => r.ok().map(|()| Wake::Stored),
                r = heard.changed() => r.ok().map(|()| Wake::LookAgain),
                r = link.changed() => r.ok().map(|()| Wake::LookAgain),
            }
        };
        match tokio::time::timeout_at(deadline, changed).await {
            Ok(Some(Wake::Stored)) => stored = stored_entry(ctx, &reply.id)?,
            Ok(Some(Wake::LookAgain)) => {}
            _ => break entry,
        }
    };
    reply.remote = entry
        .map(|e| {
            e.recipients
                .into_iter()
                .filter(|r| !ctx.is_local(&r.peer))
                .collect()
        })
        .unwrap_or_default();
    let refused: Vec<_> = reply
        .remote
        .iter()
        .filter(|r| r.state == DeliveryState::Dropped)
        .collect();
    if let Some(first) = refused.first() {
        let reason = first.reason.clone().unwrap_or_default();
        let ids: Vec<String> = refused.iter().map(|r| r.peer.to_string()).collect();
        return Err(ControlError::new(
            ErrorCode::TargetsRefused,
            format!(
                "message {} was not delivered to {}: {reason}",
                reply.id,
                ids.join(", ")
            ),
        )
        .with_hint(format!(
            "recipients on this host (if any) got it; `flotilla outbox --as {sender}` shows each recipient"
        ))
        .with_details(json!({ "id": reply.id, "remote": reply.remote })));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heard_verdict_is_announced_and_kept_until_recorded() {
        let verdicts = HeardVerdicts::default();
        let changed = verdicts.changed.subscribe();
        let id = MessageId::new("m1").expect("id");
        assert_eq!(verdicts.get(&id), None);
        verdicts.heard(&id, &ForwardOutcome::Queued);
        assert!(changed.has_changed().expect("open"), "waiters are woken");
        assert_eq!(verdicts.get(&id), Some(ForwardOutcome::Queued));
        verdicts.recorded(&id, &ForwardOutcome::Queued);
        assert_eq!(verdicts.get(&id), None, "the store has it from now on");
    }

    #[test]
    fn a_later_verdict_outlives_the_record_of_an_earlier_one() {
        let verdicts = HeardVerdicts::default();
        let id = MessageId::new("m1").expect("id");
        let busy = ForwardOutcome::Refused {
            code: flotilla_actors::federation::ForwardRefusal::Unavailable,
            reason: "the hub's queue is busy".into(),
        };
        verdicts.heard(&id, &busy);
        verdicts.heard(&id, &ForwardOutcome::Queued);
        verdicts.recorded(&id, &busy);
        assert_eq!(
            verdicts.get(&id),
            Some(ForwardOutcome::Queued),
            "the newer verdict waits for its own record"
        );
        verdicts.recorded(&id, &ForwardOutcome::Queued);
        assert_eq!(verdicts.get(&id), None);
    }
}
