//! What the hub's verdict on a forward does to the sender's outbox entry,
//! as a pure function: the store saves its result, and a sender waiting
//! for the verdict reads it before the store has (`flotilla-host`'s
//! `verdict`). Must not touch the store.

use super::outbox::{DeliveryState, OutboxEntry};
use crate::federation::ForwardOutcome;

/// What the hub's verdict did to an outbox entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Refused for now: it stays queued, its recipients say why.
    StaysQueued,
    /// Taken or refused for good: it left this host's queue at this
    /// position.
    Left(u64),
}

impl OutboxEntry {
    /// Applies the hub's verdict (pure; the store saves the result, and a
    /// sender waiting for the verdict reads it before it is saved): after
    /// a transient refusal the recipients still waiting say why; otherwise
    /// they are queued at the hub or dropped. `None` when the entry no
    /// longer waits for the hub (a verdict heard twice changes nothing).
    pub fn apply_verdict(&mut self, outcome: &ForwardOutcome) -> Option<Verdict> {
        let waiting = self
            .recipients
            .iter_mut()
            .filter(|r| r.state == DeliveryState::Accepted);
        match outcome {
            ForwardOutcome::Refused { code, reason } if code.is_transient() => {
                self.out_seq?;
                for r in waiting {
                    r.reason = Some(format!("not yet taken by the hub: {reason}"));
                }
                Some(Verdict::StaysQueued)
            }
            ForwardOutcome::Queued => {
                let out_seq = self.out_seq.take()?;
                waiting.for_each(|r| r.set(DeliveryState::Queued, None));
                Some(Verdict::Left(out_seq))
            }
            ForwardOutcome::Refused { reason, .. } => {
                let out_seq = self.out_seq.take()?;
                let why = format!("refused by the hub: {reason}");
                waiting.for_each(|r| r.set(DeliveryState::Dropped, Some(why.clone())));
                Some(Verdict::Left(out_seq))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::federation::ForwardRefusal;
    use crate::model::Timestamp;
    use crate::names::{MessageId, PeerId};
    use crate::store::RecipientState;

    fn waiting() -> OutboxEntry {
        let peer = |s: &str| s.parse::<PeerId>().expect("peer");
        let state = |p: &str, state| RecipientState {
            peer: peer(p),
            state,
            reason: None,
        };
        OutboxEntry {
            id: MessageId::new("m1").expect("id"),
            seq: 1,
            sent_at: Timestamp::now(),
            summary: None,
            recipients: vec![
                state("here/b", DeliveryState::Delivered),
                state("work/c", DeliveryState::Accepted),
            ],
            out_seq: Some(7),
        }
    }

    fn states(e: &OutboxEntry) -> Vec<DeliveryState> {
        e.recipients.iter().map(|r| r.state).collect()
    }

    #[test]
    fn queued_moves_only_the_waiting_recipients_and_leaves_the_queue_once() {
        let mut e = waiting();
        assert_eq!(
            e.apply_verdict(&ForwardOutcome::Queued),
            Some(Verdict::Left(7))
        );
        assert_eq!(
            states(&e),
            [DeliveryState::Delivered, DeliveryState::Queued]
        );
        assert_eq!(e.out_seq, None);
        assert_eq!(
            e.apply_verdict(&ForwardOutcome::Queued),
            None,
            "heard twice"
        );
    }

    #[test]
    fn a_refusal_for_good_drops_and_one_for_now_keeps_it_waiting_with_why() {
        let refused = |code| ForwardOutcome::Refused {
            code,
            reason: "full".into(),
        };
        let mut e = waiting();
        let now = refused(ForwardRefusal::Unavailable);
        assert_eq!(e.apply_verdict(&now), Some(Verdict::StaysQueued));
        assert_eq!(
            states(&e),
            [DeliveryState::Delivered, DeliveryState::Accepted]
        );
        assert_eq!(e.out_seq, Some(7));
        assert!(
            e.recipients[1]
                .reason
                .as_deref()
                .is_some_and(|r| r.contains("full"))
        );
        let mut e = waiting();
        let never = refused(ForwardRefusal::QuotaExceeded);
        assert_eq!(e.apply_verdict(&never), Some(Verdict::Left(7)));
        assert_eq!(
            states(&e),
            [DeliveryState::Delivered, DeliveryState::Dropped]
        );
    }
}
