//! When the hub link sends the outbox again after a transient refusal
//! (the hub could not store a message): the refused messages stay in the
//! outbox, and once every forward on the link is answered and a backoff
//! has passed, the link hands the hub the whole outbox again from its
//! start, in order. The hub holds a sender's later messages meanwhile, so
//! each sender's order survives. No IO or clocks: the link passes `now`.

use std::time::{Duration, Instant};

/// The first delay before sending again.
const MIN: Duration = Duration::from_millis(500);
/// The longest delay.
const MAX: Duration = Duration::from_secs(30);

/// The retry state of one link.
#[derive(Debug, Default, Clone)]
pub(crate) struct Resend {
    /// Transient refusals in a row (reset by a message the hub queued while
    /// nothing waits to be sent again).
    failures: u32,
    /// When the outbox is to be sent again, if a refusal is waiting.
    at: Option<Instant>,
}

impl Resend {
    /// The hub refused a forward for now.
    pub(crate) fn refused(&mut self, now: Instant) {
        if self.at.is_none() {
            self.failures = self.failures.saturating_add(1);
            let doublings = (self.failures - 1).min(16);
            self.at = Some(now + MIN.saturating_mul(1 << doublings).min(MAX));
        }
    }

    /// The hub queued a forward.
    pub(crate) fn queued(&mut self) {
        if self.at.is_none() {
            self.failures = 0;
        }
    }

    /// Whether a resend is due at `now`: new messages then wait until the
    /// forwards in flight are answered and the outbox is sent again, so a
    /// steady stream cannot put the resend off.
    pub(crate) fn is_due(&self, now: Instant) -> bool {
        self.at.is_some_and(|at| now >= at)
    }

    /// When to look again, if a resend waits.
    pub(crate) fn due_at(&self) -> Option<Instant> {
        self.at
    }

    /// Whether to send the outbox again now (then it is no longer due):
    /// the delay has passed and no forward is unanswered.
    pub(crate) fn take_due(&mut self, now: Instant, inflight: usize) -> bool {
        let due = self.at.is_some_and(|at| now >= at) && inflight == 0;
        if due {
            self.at = None;
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_resends_after_the_backoff_once_nothing_is_in_flight() {
        let t0 = Instant::now();
        let mut r = Resend::default();
        assert!(!r.take_due(t0, 0), "nothing refused");
        r.refused(t0);
        r.refused(t0 + MIN / 2);
        assert_eq!(
            r.due_at(),
            Some(t0 + MIN),
            "one delay for refusals together"
        );
        assert!(!r.take_due(t0 + MIN / 2, 0), "too early");
        assert!(!r.is_due(t0 + MIN / 2));
        assert!(!r.take_due(t0 + MIN, 3), "forwards still unanswered");
        assert!(r.is_due(t0 + MIN), "new messages wait for the resend");
        assert!(r.take_due(t0 + MIN, 0));
        assert!(!r.take_due(t0 + MIN, 0), "once");
    }

    #[test]
    fn refusals_in_a_row_double_the_delay_up_to_the_cap_and_a_queued_one_resets_it() {
        let t0 = Instant::now();
        let mut r = Resend::default();
        let mut delays = Vec::new();
        for _ in 0..9 {
            r.refused(t0);
            delays.push(r.due_at().map(|at| at - t0));
            r.queued(); // another sender's message meanwhile: no reset
            assert!(r.take_due(t0 + MAX, 0));
        }
        let ms: Vec<u128> = delays.iter().flatten().map(Duration::as_millis).collect();
        assert_eq!(
            ms,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        r.queued();
        r.refused(t0);
        assert_eq!(r.due_at(), Some(t0 + MIN));
    }
}
