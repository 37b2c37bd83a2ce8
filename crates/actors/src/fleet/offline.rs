//! No restart while offline: a member's turn that failed (or was lost)
//! runs again only once its model endpoint answers. The host probes the
//! endpoint before feeding such an end (a TCP connection to the CLI's API
//! host and port, the lane watchdog's probe) and marks the end with the
//! endpoint it could not reach; the run then puts the turn back at the
//! front of the queue (no bounce, no attempt spent), pauses with the
//! reason, and resumes when the host finds the endpoint answering again.
//! Pure, like [`super::run`].

use super::run::{Action, FleetRun, Rules, TurnEnd};

/// The error classes after which the host probes the member's endpoint:
/// a turn that failed for any other reason (a wall, refused credentials,
/// a person's interrupt) would not be helped by the network.
const NOT_NETWORK: [&str; 4] = ["rate_limited", "usage_limit", "auth", "interrupted"];

/// Whether the host should probe the endpoint of the member whose turn
/// ended like `end`, before feeding it.
pub fn worth_a_probe(end: &TurnEnd) -> bool {
    !end.ok
        && !end
            .class
            .as_deref()
            .is_some_and(|c| NOT_NETWORK.contains(&c))
}

impl FleetRun {
    /// `role`'s turn failed while its model endpoint `endpoint` did not
    /// answer: the turn waits, the fleet pauses until the network is back.
    pub(super) fn offline_at(
        &mut self,
        role: &str,
        end: &TurnEnd,
        endpoint: &str,
        r: &Rules<'_>,
    ) -> Vec<Action> {
        self.again(role);
        let reason = format!(
            "offline: {role}'s model endpoint {endpoint} does not answer ({}); the turn runs \
             again when it does (no attempt spent)",
            end.text.lines().next().unwrap_or_default()
        );
        self.offline = Some(endpoint.to_owned());
        self.pause(reason.clone(), r);
        vec![Action::Paused(reason), Action::Probe(endpoint.to_owned())]
    }

    /// The host found the endpoint the fleet waits for answering: resume
    /// (once; a person's resume or a later pause wins).
    pub fn back_online(&mut self, r: &Rules<'_>) -> Vec<Action> {
        match self.offline.take() {
            Some(endpoint) if self.paused.is_some() => {
                self.note(r, format!("the model endpoint {endpoint} answers again"));
                self.resume(r)
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::fleet::run::SUPERVISOR;
    use crate::fleet::run::tests::{Fixture, ONE_STEP, ok, prompt_of, task};

    fn down(class: &str) -> TurnEnd {
        TurnEnd {
            text: "API Error: Connection error.".into(),
            class: Some(class.into()),
            offline: Some("127.0.0.1:9".into()),
            ..TurnEnd::default()
        }
    }

    #[test]
    fn only_failures_the_network_could_cause_are_worth_a_probe() {
        assert!(worth_a_probe(&down("other")));
        assert!(worth_a_probe(&TurnEnd {
            lost: true,
            ..TurnEnd::default()
        }));
        for class in NOT_NETWORK {
            assert!(!worth_a_probe(&down(class)), "{class}");
        }
        assert!(!worth_a_probe(&ok("fine")));
    }

    #[test]
    fn a_step_failed_offline_waits_unbounced_and_runs_again_when_the_network_is_back() {
        let f = Fixture::new(1);
        let mut run = FleetRun::default();
        run.give(task(), &f.rules()).unwrap();
        let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
        let first = prompt_of(&a, "worker-1");
        let a = run.ended("worker-1", down("model_error"), &f.rules());
        let [Action::Paused(reason), Action::Probe(endpoint)] = a.as_slice() else {
            panic!("{a:?}")
        };
        assert!(
            reason.starts_with("offline: worker-1's model endpoint 127.0.0.1:9"),
            "{reason}"
        );
        assert_eq!(endpoint, "127.0.0.1:9");
        assert!(run.ledger.steps.is_empty(), "no bounce was spent");
        let a = run.back_online(&f.rules());
        assert_eq!(prompt_of(&a, "worker-1"), first, "the same turn again");
        assert!(run.back_online(&f.rules()).is_empty(), "only once");
    }

    #[test]
    fn a_persons_pause_outlasts_the_network_coming_back() {
        let f = Fixture::new(1);
        let mut run = FleetRun::default();
        run.give(task(), &f.rules()).unwrap();
        run.ended(SUPERVISOR, down("other"), &f.rules());
        run.pause_by_person(&f.rules());
        assert!(
            run.back_online(&f.rules()).is_empty(),
            "no resume by itself"
        );
        assert_eq!(
            run.paused.as_deref(),
            Some(crate::fleet::run::PAUSED_BY_PERSON)
        );
        let a = run.resume(&f.rules());
        assert!(prompt_of(&a, SUPERVISOR).contains("a report"), "{a:?}");
    }

    #[test]
    fn a_persons_resume_wins_over_the_wait_for_the_network() {
        let f = Fixture::new(1);
        let mut run = FleetRun::default();
        run.give(task(), &f.rules()).unwrap();
        run.ended(SUPERVISOR, down("other"), &f.rules());
        let a = run.resume(&f.rules());
        assert!(prompt_of(&a, SUPERVISOR).contains("a report"));
        assert!(run.offline.is_none());
        assert!(run.back_online(&f.rules()).is_empty());
    }
}
