//! Rotation that acts mid-turn: lanes report `context_used_pct` on their
//! `usage` events while a turn runs, and the host feeds each new figure of
//! a running member turn here. At the rotation threshold the member is
//! marked to rotate when this turn ends (whatever figure the turn's end
//! carries, or none). At the hard ceiling (`rotate_now_at_pct`) the turn is
//! cut short: the daemon interrupts it, and the interrupted turn is no
//! bounce and no failure: the member hands over (its note, or the
//! skeleton) and its successor runs the same step again. A successor's
//! first turn (a fresh session) is never cut short, so a prompt that is
//! itself past the ceiling cannot loop. A turn that completed before the
//! interrupt landed counts as it is. Pure, like the rest of
//! [`super::run`].

use super::rotation::should_rotate;
use super::run::{Action, FleetRun, Rules, SUPERVISOR, TurnEnd};

impl FleetRun {
    /// `role`'s running lane turn `turn` reports its context at `pct`.
    pub fn context_seen(&mut self, role: &str, turn: u32, pct: f64, r: &Rules<'_>) -> Vec<Action> {
        let Some((running, fresh)) = self.running_turn(role) else {
            return Vec::new();
        };
        if running != turn || self.cut_short.contains(role) {
            return Vec::new();
        }
        if !fresh && should_rotate(Some(pct), r.rotate_now_at_pct) {
            self.cut_short.insert(role.to_owned());
            self.rotate.insert(role.to_owned());
            self.note(
                r,
                format!(
                    "{role}'s context reached {pct:.0}% mid-turn (cut at {:.0}%): its turn is \
                     interrupted, and a fresh session runs it again with the handoff note",
                    r.rotate_now_at_pct
                ),
            );
            return vec![Action::Interrupt(role.to_owned())];
        }
        if should_rotate(Some(pct), r.rotate_at_pct) && self.rotate.insert(role.to_owned()) {
            self.note(
                r,
                format!("{role}'s context reached {pct:.0}% mid-turn: it rotates after this turn"),
            );
        }
        Vec::new()
    }

    /// The lane turn `role` runs now for the fleet (a step, a plan, a
    /// service request), once started, and whether it is a fresh
    /// session's first; never a handoff note's turn.
    fn running_turn(&self, role: &str) -> Option<(u32, bool)> {
        if self.noting.contains_key(role) {
            return None;
        }
        if let Some(ask) = self.serving.get(role) {
            return ask.turn.map(|t| (t, false));
        }
        if role == SUPERVISOR {
            let asked = self.supervisor.as_ref()?;
            return asked.turn.map(|t| (t, asked.fresh));
        }
        let a = self.working.get(role)?;
        a.turn.map(|t| (t, a.fresh))
    }

    /// `role`'s turn ended after the daemon cut it short: `true` when it
    /// was put back to run again (it did not complete), so the end is not
    /// judged.
    pub(super) fn was_cut_short(&mut self, role: &str, end: &TurnEnd, r: &Rules<'_>) -> bool {
        if !self.cut_short.remove(role) || end.ok {
            return false;
        }
        self.note(
            r,
            format!("{role}'s turn was cut short for its context; it rotates and runs again"),
        );
        self.again(role);
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::fleet::run::tests::{Fixture, ONE_STEP, ok, prompt_of, task};
    use crate::fleet::run::{Action, FleetRun, TurnEnd};

    /// A run whose worker-1 runs step s1 as lane turn 1.
    fn working(f: &Fixture) -> FleetRun {
        let r = f.rules();
        let mut run = FleetRun::default();
        run.give(task(), &r).unwrap();
        run.started("supervisor", 1);
        run.ended("supervisor", ok(ONE_STEP), &r);
        run.started("worker-1", 1);
        run
    }

    #[test]
    fn a_member_past_the_threshold_mid_turn_rotates_after_it_even_without_a_figure_at_its_end() {
        let f = Fixture::new(1);
        let r = f.rules();
        let mut run = working(&f);
        assert!(run.context_seen("worker-1", 1, 40.0, &r).is_empty());
        assert!(!run.rotate.contains("worker-1"));
        assert!(run.context_seen("worker-1", 1, 65.0, &r).is_empty());
        assert!(run.rotate.contains("worker-1"));
        assert!(run.log.last().unwrap().text.contains("65% mid-turn"));
        // An old turn's figure, or another member's, changes nothing.
        assert!(run.context_seen("worker-1", 7, 99.0, &r).is_empty());
        assert!(run.context_seen("supervisor", 1, 99.0, &r).is_empty());
    }

    #[test]
    fn at_the_ceiling_the_turn_is_interrupted_and_its_step_runs_again_after_the_handoff() {
        let f = Fixture::new(1);
        let r = f.rules();
        let mut run = working(&f);
        let cut = run.context_seen("worker-1", 1, 91.0, &r);
        assert_eq!(cut, vec![Action::Interrupt("worker-1".into())]);
        assert!(run.context_seen("worker-1", 1, 95.0, &r).is_empty(), "once");
        let interrupted = TurnEnd {
            ok: false,
            text: "interrupted".into(),
            class: Some("interrupted".into()),
            ..TurnEnd::default()
        };
        let next = run.ended("worker-1", interrupted, &r);
        // No bounce: the note is asked for, then the same step runs fresh.
        assert_eq!(run.ledger.steps.get("s1").map_or(0, |s| s.bounces), 0);
        assert!(prompt_of(&next, "worker-1").contains("handoff note"));
        run.started("worker-1", 2);
        let again = run.ended(
            "worker-1",
            ok("## Done\na\n## In progress\nb\n## Next\nc"),
            &r,
        );
        let step = prompt_of(&again, "worker-1");
        assert!(
            step.contains("Handoff note") && step.contains("Step s1"),
            "{step}"
        );
        assert!(
            again
                .iter()
                .any(|a| matches!(a, Action::Run { fresh: true, .. }))
        );
        // The successor's first turn is never cut short: no loop.
        run.started("worker-1", 3);
        assert!(run.context_seen("worker-1", 3, 99.0, &r).is_empty());
        assert!(!run.cut_short.contains("worker-1"));
    }

    #[test]
    fn a_turn_that_completed_before_the_interrupt_landed_counts_as_it_is() {
        let f = Fixture::new(1);
        let r = f.rules();
        let mut run = working(&f);
        run.context_seen("worker-1", 1, 92.0, &r);
        let next = run.ended("worker-1", ok("done"), &r);
        assert!(
            next.iter().any(|a| matches!(a, Action::Judge { .. })),
            "{next:?}"
        );
    }
}
