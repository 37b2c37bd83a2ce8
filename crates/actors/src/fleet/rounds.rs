//! A task's rounds: what the daemon does with a supervisor's answer (a
//! plan followed, or refused and bounced), with a judged step (accepted,
//! bounced back to its worker, or blocking the task), with the whole
//! task's verdict, and when the supervisor hears about a finished round.
//! Pure, like the rest of [`super::run`].

use super::acceptance::{Shortfall, Verdict};
use super::matrix::check_pick;
use super::plan::{self, Assignment};
use super::run::{Action, FleetRun, Queued, Rules, TurnEnd};
use super::steps::{StepOutcome, TaskState};

/// The ledger's step for the supervisor's plans.
const PLAN: &str = "plan";

impl FleetRun {
    pub(super) fn planned(&mut self, end: TurnEnd, r: &Rules<'_>) -> Vec<Action> {
        let Some(task) = self.task.clone() else {
            return Vec::new();
        };
        let faults = if end.ok {
            let busy: Vec<String> = self.working.keys().cloned().collect();
            let route = |role: &str, domain: Option<&str>, kind: Option<&str>| {
                if r.matrix.is_empty() {
                    return Ok(());
                }
                let Some((cli, base)) = r.picks.get(role) else {
                    return Err(format!("{role} is not a member"));
                };
                let model = self.model_of(role, r).or_else(|| base.clone());
                check_pick(r.matrix, domain, kind, *cli, model.as_deref())
            };
            let parsed = plan::parse_plan(&end.text, &task, r.workers, &busy, &self.ledger, &route);
            match parsed {
                Ok(p) => return self.follow(p, r),
                Err(faults) => faults,
            }
        } else {
            vec![format!("the supervisor's turn failed: {}", end.text)]
        };
        let why = faults.join("; ");
        let verdict = Verdict::Bounced(vec![Shortfall::BadPlan { why: why.clone() }]);
        match self.ledger.record(PLAN, verdict) {
            StepOutcome::Blocked(_) => self.end(TaskState::Blocked, r, format!("blocked: {why}")),
            _ => {
                self.note(r, format!("plan bounced: {why}"));
                let prompt = plan::report(&[format!("Your last answer was refused: {why}")]);
                self.queue.push_back(Queued::Supervisor(prompt));
                Vec::new()
            }
        }
    }

    fn follow(&mut self, p: plan::Plan, r: &Rules<'_>) -> Vec<Action> {
        self.task = Some(p.task.clone());
        if p.done {
            self.note(r, "the supervisor says done: judging the whole task".into());
            self.judging_final = true;
            return vec![Action::Judge {
                step: "final".into(),
                task: p.task,
            }];
        }
        for a in p.dispatch {
            self.note(r, format!("dispatch {} to {}", a.step, a.to));
            let mut a = a;
            a.prompt = plan::work_prompt(&a);
            self.queue.push_back(Queued::Work(a));
        }
        Vec::new()
    }

    pub(super) fn settle(&mut self, a: Assignment, verdict: Verdict, r: &Rules<'_>) -> Vec<Action> {
        match self.ledger.record(&a.step, verdict) {
            StepOutcome::Accepted(_) => {
                self.note(r, format!("step {} of {} accepted", a.step, a.to));
                self.news
                    .push(format!("step {} ({}) was accepted", a.step, a.to));
            }
            StepOutcome::Bounced { bounce, reasons } => {
                let reasons: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                self.note(
                    r,
                    format!("step {} bounced ({bounce}): {}", a.step, reasons.join("; ")),
                );
                let mut again = a.clone();
                again.prompt = plan::bounce_prompt(&a, bounce, &reasons);
                again.turn = None;
                self.queue.push_back(Queued::Work(again));
            }
            StepOutcome::Blocked(reasons) => {
                let reasons: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                let why = format!("step {} bounced 3 times: {}", a.step, reasons.join("; "));
                return self.end(TaskState::Blocked, r, why);
            }
            StepOutcome::AlreadyAccepted | StepOutcome::TaskOver(_) => {}
        }
        self.next_round();
        Vec::new()
    }

    pub(super) fn finally(&mut self, verdict: Verdict, r: &Rules<'_>) -> Vec<Action> {
        match self.ledger.record_final(verdict) {
            StepOutcome::Accepted(_) => {
                self.end(TaskState::Completed, r, "the task is completed".into())
            }
            StepOutcome::Bounced { bounce, reasons } => {
                let lines: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                self.note(
                    r,
                    format!("the whole task bounced ({bounce}): {}", lines.join("; ")),
                );
                let mut report = vec![format!(
                    "The task is not done yet (bounce {bounce} of 3). The daemon found:"
                )];
                report.extend(lines);
                self.queue
                    .push_back(Queued::Supervisor(plan::report(&report)));
                Vec::new()
            }
            StepOutcome::Blocked(reasons) => {
                let lines: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                let why = format!("the whole task bounced 3 times: {}", lines.join("; "));
                self.end(TaskState::Blocked, r, why)
            }
            StepOutcome::AlreadyAccepted | StepOutcome::TaskOver(_) => Vec::new(),
        }
    }

    /// When the round's last step settles, the supervisor hears about it.
    fn next_round(&mut self) {
        let waiting = self.supervisor.is_some()
            || !self.noting.is_empty()
            || !self.working.is_empty()
            || !self.judging.is_empty()
            || self.judging_final
            || self.queue.iter().any(|q| !matches!(q, Queued::Request(_)));
        if !waiting && !self.ledger.state.is_final() {
            let news = std::mem::take(&mut self.news);
            self.queue
                .push_back(Queued::Supervisor(plan::report(&news)));
        }
    }

    pub(super) fn end(&mut self, state: TaskState, r: &Rules<'_>, why: String) -> Vec<Action> {
        self.ledger.state = state;
        self.queue.retain(|q| matches!(q, Queued::Request(_)));
        self.note(r, why);
        vec![Action::Ended(state)]
    }
}
