//! The daemon watches the supervisor: a supervisor turn that ended without
//! an answer (its deadline passed, its CLI crashed, or its native session
//! is gone) is no bad plan. The daemon restarts the supervisor: a fresh
//! session of the same CLI takes the same turn again, starting with the
//! daemon's skeleton of where the task stands (as at a rotation without a
//! note). Three restarts in a row fall back to the plan's bounces, so a
//! supervisor that never answers still blocks the task. A frozen turn is
//! the lane watchdog's (it restarts it in place first); a failure the
//! network explains is [`super::offline`]'s. Pure, like [`super::run`].

use super::handoff::Handoff;
use super::run::{Asked, FleetRun, Queued, Rules, SUPERVISOR, TurnEnd};

/// Restarts in a row before a silent supervisor counts as bad plans.
pub const MAX_RESTARTS: u32 = 3;

/// The error classes of a supervisor turn that did not answer at all.
const SILENT: [&str; 3] = ["timed_out", "cli_crash", "session_not_found"];

/// Whether the supervisor's turn that ended like `end` gave no answer.
pub fn stopped_answering(end: &TurnEnd) -> bool {
    !end.ok && end.class.as_deref().is_some_and(|c| SILENT.contains(&c))
}

impl FleetRun {
    /// The supervisor's turn `asked` ended like `end`: restart the
    /// supervisor when it stopped answering and restarts are left; `false`
    /// when the end is for the plan's rules to judge.
    pub(super) fn restart_supervisor(
        &mut self,
        asked: &Asked,
        end: &TurnEnd,
        r: &Rules<'_>,
    ) -> bool {
        if end.ok {
            self.supervisor_restarts = 0;
            return false;
        }
        if !stopped_answering(end) || self.supervisor_restarts >= MAX_RESTARTS {
            return false;
        }
        self.supervisor_restarts += 1;
        let class = end.class.as_deref().unwrap_or_default();
        self.note(
            r,
            format!(
                "the supervisor stopped answering ({class}); the daemon restarts it in a fresh \
                 session ({} of {MAX_RESTARTS})",
                self.supervisor_restarts
            ),
        );
        let held = Queued::Supervisor(asked.prompt.clone());
        let note = self.skeleton(SUPERVISOR, &held);
        self.successors.insert(SUPERVISOR.to_owned(), note.render());
        self.handoffs.push(Handoff {
            role: SUPERVISOR.to_owned(),
            at_ms: r.now_ms,
            note,
        });
        self.queue.push_front(held);
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::fleet::run::Action;
    use crate::fleet::run::tests::{Fixture, ONE_STEP, ok, prompt_of, task};

    fn silent(class: &str) -> TurnEnd {
        TurnEnd {
            text: "the turn's deadline passed".into(),
            class: Some(class.into()),
            ..TurnEnd::default()
        }
    }

    fn fresh_of(actions: &[Action]) -> bool {
        actions
            .iter()
            .any(|a| matches!(a, Action::Run { role, fresh: true, .. } if role == SUPERVISOR))
    }

    #[test]
    fn a_supervisor_that_stops_answering_restarts_fresh_with_the_skeleton_and_no_bounce() {
        let f = Fixture::new(1);
        let mut run = FleetRun::default();
        run.give(task(), &f.rules()).unwrap();
        let a = run.ended(SUPERVISOR, silent("timed_out"), &f.rules());
        assert!(fresh_of(&a), "a fresh session: {a:?}");
        let prompt = prompt_of(&a, SUPERVISOR);
        assert!(prompt.contains("## Next"), "the skeleton first: {prompt}");
        assert!(prompt.contains("a report"), "then the same turn: {prompt}");
        assert!(run.ledger.steps.is_empty(), "no plan bounce");
        assert_eq!(run.handoffs.len(), 1);
        let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
        assert!(!prompt_of(&a, "worker-1").is_empty(), "then it leads again");
        assert_eq!(run.supervisor_restarts, 0, "an answer resets the count");
    }

    #[test]
    fn three_restarts_in_a_row_then_the_silence_counts_as_bad_plans() {
        let f = Fixture::new(1);
        let mut run = FleetRun::default();
        run.give(task(), &f.rules()).unwrap();
        for _ in 0..MAX_RESTARTS {
            run.ended(SUPERVISOR, silent("cli_crash"), &f.rules());
        }
        assert!(run.ledger.steps.is_empty());
        run.ended(SUPERVISOR, silent("cli_crash"), &f.rules());
        assert_eq!(run.ledger.steps["plan"].bounces, 1, "now a bounce");
    }

    #[test]
    fn a_bad_answer_or_a_wall_is_not_a_silence() {
        assert!(!stopped_answering(&ok("not a plan")));
        assert!(!stopped_answering(&silent("rate_limited")));
        assert!(!stopped_answering(&silent("other")));
        assert!(stopped_answering(&silent("session_not_found")));
    }
}
