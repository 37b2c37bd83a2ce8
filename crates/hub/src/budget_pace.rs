//! A link's budget applied (see [`crate::budget`] for the rule): the link
//! session waits out what is over the budget before it reads on, and the
//! changes are reported (slowed at most once a second, within again, cut).
//! Owns only the pacing; must not close the connection (the session does).

use std::time::{Duration, Instant};

use crate::budget::{BudgetEvent, BudgetLimits, Charge, LinkBudget};

/// A link's budget applied: waits out what is over it and reports the
/// changes (slowed at most once a second).
pub(crate) struct BudgetPace {
    budget: LinkBudget,
    slowed: Duration,
    reported: Instant,
    is_slow: bool,
}

impl BudgetPace {
    pub(crate) fn new(limits: BudgetLimits) -> Self {
        Self {
            budget: LinkBudget::new(limits, Instant::now()),
            slowed: Duration::ZERO,
            reported: Instant::now(),
            is_slow: false,
        }
    }

    /// Charges a frame of `size` bytes; the reason when the host is cut.
    pub(crate) async fn pace(
        &mut self,
        size: usize,
        report: impl Fn(BudgetEvent),
    ) -> Option<String> {
        match self.budget.charge(Instant::now(), size) {
            // Within for this frame, and no longer over (not merely a
            // frame let in by a long wait): the operator sees it.
            Charge::Within => {
                if self.is_slow && !self.budget.is_over() {
                    report(BudgetEvent::Slowed(std::mem::take(&mut self.slowed)));
                    report(BudgetEvent::Within);
                    self.is_slow = false;
                }
                None
            }
            Charge::Slow(wait) => {
                tokio::time::sleep(wait).await;
                self.slowed += wait;
                self.is_slow = true;
                if self.reported.elapsed() >= Duration::from_secs(1) {
                    report(BudgetEvent::Slowed(std::mem::take(&mut self.slowed)));
                    self.reported = Instant::now();
                }
                None
            }
            Charge::Cut(reason) => {
                report(BudgetEvent::Slowed(std::mem::take(&mut self.slowed)));
                report(BudgetEvent::Cut(reason.clone()));
                Some(reason)
            }
        }
    }
}
