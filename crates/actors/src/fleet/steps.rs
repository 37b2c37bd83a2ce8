//! A task's progress through its steps: bounces counted per step, three
//! bounces of the same step block the task, an accepted step is never
//! accepted (or bounced) again. The ledger is plain data, saved as it is,
//! so a daemon that restarts mid-task continues from it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::acceptance::{Evidence, Shortfall, Verdict};

/// Bounces of one step that block the task.
pub const MAX_BOUNCES: u32 = 3;

/// Where a task stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Work goes on.
    #[default]
    Running,
    /// Every artifact and check held.
    Completed,
    /// A step was bounced [`MAX_BOUNCES`] times.
    Blocked,
    /// A budget cap was reached before a dispatch.
    OutOfBudget,
}

impl TaskState {
    /// The task is over: nothing more is dispatched for it.
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Running)
    }
}

/// One step's record.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepRecord {
    /// Bounces so far.
    pub bounces: u32,
    /// The reasons of the last bounce.
    pub last_reasons: Vec<Shortfall>,
    /// The evidence, once accepted.
    pub accepted: Option<Evidence>,
}

/// What the daemon does after judging a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// Accepted: the evidence is recorded.
    Accepted(Evidence),
    /// Sent back to its worker with the exact reasons (`bounce` of
    /// [`MAX_BOUNCES`]).
    Bounced {
        /// Which bounce this is, from 1.
        bounce: u32,
        /// Why.
        reasons: Vec<Shortfall>,
    },
    /// The third bounce: the task is blocked and its owner is told.
    Blocked(Vec<Shortfall>),
    /// The step was already accepted (a repeat after a restart); nothing
    /// changes.
    AlreadyAccepted,
    /// The task is already over; nothing changes.
    TaskOver(TaskState),
}

/// Every step of one task and the task's state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepLedger {
    /// The task's state.
    pub state: TaskState,
    /// Each step by its id (the supervisor's name for it).
    pub steps: BTreeMap<String, StepRecord>,
}

impl StepLedger {
    /// Records the daemon's `verdict` on `step`.
    pub fn record(&mut self, step: &str, verdict: Verdict) -> StepOutcome {
        if self.state.is_final() {
            return StepOutcome::TaskOver(self.state);
        }
        let record = self.steps.entry(step.to_owned()).or_default();
        if record.accepted.is_some() {
            return StepOutcome::AlreadyAccepted;
        }
        match verdict {
            Verdict::Accepted(evidence) => {
                record.accepted = Some(evidence.clone());
                StepOutcome::Accepted(evidence)
            }
            Verdict::Bounced(reasons) => {
                record.bounces += 1;
                record.last_reasons = reasons.clone();
                if record.bounces >= MAX_BOUNCES {
                    self.state = TaskState::Blocked;
                    StepOutcome::Blocked(reasons)
                } else {
                    StepOutcome::Bounced {
                        bounce: record.bounces,
                        reasons,
                    }
                }
            }
        }
    }

    /// The whole task was judged: accepted completes it (its steps' work
    /// is done), bounced counts against the step `"final"`.
    pub fn record_final(&mut self, verdict: Verdict) -> StepOutcome {
        let outcome = self.record("final", verdict);
        if matches!(outcome, StepOutcome::Accepted(_)) {
            self.state = TaskState::Completed;
        }
        outcome
    }

    /// A budget cap stopped the next dispatch.
    pub fn out_of_budget(&mut self) {
        if !self.state.is_final() {
            self.state = TaskState::OutOfBudget;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn missing() -> Verdict {
        Verdict::Bounced(vec![Shortfall::Missing {
            path: "r.md".into(),
        }])
    }

    #[test]
    fn three_bounces_of_one_step_block_the_task() {
        let mut ledger = StepLedger::default();
        assert!(matches!(
            ledger.record("s1", missing()),
            StepOutcome::Bounced { bounce: 1, .. }
        ));
        assert!(matches!(
            ledger.record("s2", missing()),
            StepOutcome::Bounced { bounce: 1, .. }
        ));
        assert!(matches!(
            ledger.record("s1", missing()),
            StepOutcome::Bounced { bounce: 2, .. }
        ));
        assert!(matches!(
            ledger.record("s1", missing()),
            StepOutcome::Blocked(_)
        ));
        assert_eq!(ledger.state, TaskState::Blocked);
        assert_eq!(
            ledger.record("s2", Verdict::Accepted(Evidence::default())),
            StepOutcome::TaskOver(TaskState::Blocked)
        );
    }

    #[test]
    fn an_accepted_step_is_never_accepted_twice_even_after_a_restart() {
        let mut ledger = StepLedger::default();
        ledger.record("s1", missing());
        assert!(matches!(
            ledger.record("s1", Verdict::Accepted(Evidence::default())),
            StepOutcome::Accepted(_)
        ));
        let saved = serde_json::to_string(&ledger).unwrap();
        let mut reloaded: StepLedger = serde_json::from_str(&saved).unwrap();
        assert_eq!(reloaded, ledger);
        assert_eq!(
            reloaded.record("s1", Verdict::Accepted(Evidence::default())),
            StepOutcome::AlreadyAccepted
        );
        assert_eq!(
            reloaded.record("s1", missing()),
            StepOutcome::AlreadyAccepted
        );
    }

    #[test]
    fn the_final_acceptance_completes_and_a_budget_stop_ends_a_running_task_only() {
        let mut ledger = StepLedger::default();
        ledger.record_final(Verdict::Accepted(Evidence::default()));
        assert_eq!(ledger.state, TaskState::Completed);
        ledger.out_of_budget();
        assert_eq!(ledger.state, TaskState::Completed);
        let mut other = StepLedger::default();
        other.out_of_budget();
        assert_eq!(other.state, TaskState::OutOfBudget);
    }
}
