//! One fleet's run as a state machine: the host feeds it what happened (a
//! task given, a member's turn ended, a step judged) and does the actions
//! it returns (start a member's turn, judge a step, report an end). The
//! run is plain data, saved whole after every event, so a daemon that
//! restarts continues from it. No IO and no clock: the host passes `now`.
//!
//! Order of a round: the supervisor is asked; its plan dispatches steps;
//! each worker's turn ends and its step is judged (bounced back with the
//! reasons, or accepted); when no step is left in flight the supervisor is
//! asked again with what happened; a plan that says `done` has the whole
//! task judged. Every dispatch passes the budget card and `--max-busy`
//! first.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use super::acceptance::{Evidence, Shortfall, Verdict};
use super::budget::Spent;
pub use super::handoff::{Handoff, NoteAsk};
use super::plan::{self, Assignment};
use super::steps::{StepLedger, TaskState};
use super::task::Task;
pub use super::turns::{Action, Rules, TurnEnd};

/// The supervisor's role.
pub const SUPERVISOR: &str = "supervisor";
/// The reason of a person's `fleet pause`.
pub const PAUSED_BY_PERSON: &str = "paused by a person";
/// Decisions kept in a run's log.
const LOG_LIMIT: usize = 1000;

/// A turn waiting for a free member, `--max-busy` or the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Queued {
    /// A supervisor turn.
    Supervisor(String),
    /// A worker's step.
    Work(Assignment),
    /// A service request.
    Request(super::service::ServiceAsk),
}

/// A supervisor turn in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// Its prompt.
    pub prompt: String,
    /// Its lane turn, once started.
    pub turn: Option<u32>,
    /// It starts a fresh native session.
    #[serde(default)]
    pub fresh: bool,
}

/// One line of the fleet's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    /// When, in milliseconds since the epoch.
    pub at_ms: u64,
    /// What the daemon decided or saw.
    pub text: String,
}

/// One fleet's run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FleetRun {
    /// The task, with the supervisor's added artifacts.
    pub task: Option<Task>,
    /// Its steps and state.
    pub ledger: StepLedger,
    /// What was spent.
    pub spent: Spent,
    /// The supervisor's turn in flight.
    pub supervisor: Option<Asked>,
    /// Worker steps in flight, by role.
    pub working: BTreeMap<String, Assignment>,
    /// Steps whose turns ended, being judged, by step.
    pub judging: BTreeMap<String, Assignment>,
    /// The whole task is being judged.
    pub judging_final: bool,
    /// Turns waiting to start.
    pub queue: VecDeque<Queued>,
    /// What happened since the supervisor's last turn.
    pub news: Vec<String>,
    /// Why the fleet is paused.
    pub paused: Option<String>,
    /// The daemon's decisions, oldest first (the last [`LOG_LIMIT`]).
    pub log: Vec<Decision>,
    /// Members whose context crossed the threshold: rotated before
    /// their next turn.
    #[serde(default)]
    pub rotate: BTreeSet<String>,
    /// Members whose running turn the daemon interrupted at the context
    /// ceiling: run again after their rotation.
    #[serde(default)]
    pub cut_short: BTreeSet<String>,
    /// Handoff notes asked for, by role, with the turn they hold back.
    #[serde(default)]
    pub noting: BTreeMap<String, NoteAsk>,
    /// Notes waiting for their successor's first turn, by role.
    #[serde(default)]
    pub successors: BTreeMap<String, String>,
    /// Every rotation: the retired sessions and their notes.
    #[serde(default)]
    pub handoffs: Vec<Handoff>,
    /// Service requests in flight, by role.
    #[serde(default)]
    pub serving: BTreeMap<String, super::service::ServiceAsk>,
    /// The last request's number.
    #[serde(default)]
    pub next_request: u64,
    /// How far down its fallback chain each role moved.
    #[serde(default)]
    pub models: BTreeMap<String, usize>,
    /// Usage walls with no model left, in a row.
    #[serde(default)]
    pub walls: u32,
    /// Paused at a usage wall until then (milliseconds since the epoch).
    #[serde(default)]
    pub wall_until_ms: Option<u64>,
    /// Tasks given so far (the current one's number).
    #[serde(default)]
    pub tasks: u64,
    /// The last lane turn of each role whose end the run was fed: a result
    /// left on a lane by a crash is the run's only when it is newer.
    #[serde(default)]
    pub seen_turns: BTreeMap<String, u32>,
    /// Paused while this model endpoint does not answer.
    #[serde(default)]
    pub offline: Option<String>,
    /// Restarts of a supervisor that stopped answering, in a row.
    #[serde(default)]
    pub supervisor_restarts: u32,
}

impl FleetRun {
    /// Gives the fleet its task; refused while another task runs.
    pub fn give(&mut self, task: Task, r: &Rules<'_>) -> Result<Vec<Action>, String> {
        if self.task.is_some() && !self.ledger.state.is_final() {
            return Err("the fleet is still working on its task".into());
        }
        *self = FleetRun {
            log: std::mem::take(&mut self.log),
            handoffs: std::mem::take(&mut self.handoffs),
            successors: std::mem::take(&mut self.successors),
            rotate: std::mem::take(&mut self.rotate),
            serving: std::mem::take(&mut self.serving),
            models: std::mem::take(&mut self.models),
            seen_turns: std::mem::take(&mut self.seen_turns),
            next_request: self.next_request,
            tasks: self.tasks + 1,
            queue: std::mem::take(&mut self.queue)
                .into_iter()
                .filter(|q| matches!(q, Queued::Request(_)))
                .collect(),
            ..FleetRun::default()
        };
        self.note(r, format!("task given: {}", task.goal));
        let members: Vec<_> = r
            .workers
            .iter()
            .filter_map(|w| r.picks.get(w).map(|(cli, m)| (w.clone(), *cli, m.clone())))
            .collect();
        let routing = super::matrix::describe(r.matrix, &members);
        self.queue.push_back(Queued::Supervisor(plan::kickoff(
            &task, r.workers, &routing,
        )));
        self.task = Some(task);
        Ok(self.pump(r))
    }

    /// A member's turn started as lane turn `turn`.
    pub fn started(&mut self, role: &str, turn: u32) {
        if let Some(ask) = self.noting.get_mut(role) {
            ask.turn = Some(turn);
        } else if let Some(ask) = self.serving.get_mut(role) {
            ask.turn = Some(turn);
        } else if role == SUPERVISOR {
            if let Some(asked) = &mut self.supervisor {
                asked.turn = Some(turn);
            }
        } else if let Some(a) = self.working.get_mut(role) {
            a.turn = Some(turn);
        }
    }

    /// Lane turn `turn` of `role` ended and is being fed to the run.
    pub fn seen(&mut self, role: &str, turn: u32) {
        let last = self.seen_turns.entry(role.to_owned()).or_default();
        *last = (*last).max(turn);
    }

    /// A member's turn ended.
    pub fn ended(&mut self, role: &str, end: TurnEnd, r: &Rules<'_>) -> Vec<Action> {
        let account = r.accounts.get(role).map_or("", String::as_str);
        self.spent.used(account, end.tokens, end.cost);
        if let Some(ask) = self.noting.remove(role) {
            self.handed_over(role, ask, end, r);
            return self.pump(r);
        }
        if self.was_cut_short(role, &end, r) {
            return self.pump(r);
        }
        if let Some(endpoint) = end.offline.as_deref().filter(|_| !end.ok) {
            let mut out = self.offline_at(role, &end, endpoint, r);
            out.extend(self.pump(r));
            return out;
        }
        if end.lost && !end.ok {
            self.note(
                r,
                format!("{role}'s turn was lost while the daemon was down; it runs again"),
            );
            self.again(role);
            return self.pump(r);
        }
        if super::walls::is_wall(&end) {
            let mut out = self.walled(role, &end, r);
            out.extend(self.pump(r));
            return out;
        }
        if end.ok {
            self.walls = 0;
        }
        if let Some(ask) = self.serving.remove(role) {
            let mut out = self.served(ask, end, r);
            out.extend(self.pump(r));
            return out;
        }
        if super::rotation::should_rotate(end.context_used_pct, r.rotate_at_pct) {
            self.rotate.insert(role.to_owned());
        }
        let mut out = if role == SUPERVISOR {
            match self.supervisor.take() {
                Some(asked) if self.restart_supervisor(&asked, &end, r) => Vec::new(),
                Some(_) => self.planned(end, r),
                None => Vec::new(),
            }
        } else {
            match self.working.remove(role) {
                Some(a) if !end.ok => {
                    let why = Shortfall::TurnFailed {
                        class: end.class,
                        error: end.text,
                    };
                    self.settle(a, Verdict::Bounced(vec![why]), r)
                }
                Some(a) if a.artifacts.is_empty() => {
                    self.settle(a, Verdict::Accepted(Evidence::default()), r)
                }
                Some(a) => {
                    let task = a.judged_against();
                    self.judging.insert(a.step.clone(), a.clone());
                    vec![Action::Judge { step: a.step, task }]
                }
                None => Vec::new(),
            }
        };
        out.extend(self.pump(r));
        out
    }

    /// The daemon's verdict on `step`.
    pub fn judged(&mut self, step: &str, verdict: Verdict, r: &Rules<'_>) -> Vec<Action> {
        let mut out = if step == "final" {
            self.judging_final = false;
            self.finally(verdict, r)
        } else {
            match self.judging.remove(step) {
                Some(a) => self.settle(a, verdict, r),
                None => Vec::new(),
            }
        };
        out.extend(self.pump(r));
        out
    }

    /// Pauses: nothing new starts until [`Self::resume`].
    pub fn pause(&mut self, reason: String, r: &Rules<'_>) {
        self.note(r, format!("paused: {reason}"));
        self.paused = Some(reason);
    }

    /// A person pauses: the fleet stays paused until a person resumes it,
    /// even when it was waiting for a usage wall to lift or the network to
    /// come back (those would otherwise resume it by themselves).
    pub fn pause_by_person(&mut self, r: &Rules<'_>) {
        self.wall_until_ms = None;
        self.offline = None;
        if self.paused.as_deref() != Some(PAUSED_BY_PERSON) {
            self.pause(PAUSED_BY_PERSON.into(), r);
        }
    }

    /// Resumes (with a new budget card in `r` when one was given).
    pub fn resume(&mut self, r: &Rules<'_>) -> Vec<Action> {
        self.paused = None;
        self.wall_until_ms = None;
        self.offline = None;
        if self.ledger.state == TaskState::OutOfBudget {
            self.ledger.state = TaskState::Running;
        }
        self.note(r, "resumed".into());
        self.pump(r)
    }

    /// Nothing is in flight, queued or being judged.
    pub fn idle(&self) -> bool {
        self.noting.is_empty()
            && self.serving.is_empty()
            && self.supervisor.is_none()
            && self.working.is_empty()
            && self.judging.is_empty()
            && !self.judging_final
            && self.queue.is_empty()
    }

    pub(super) fn note(&mut self, r: &Rules<'_>, text: String) {
        self.log.push(Decision {
            at_ms: r.now_ms,
            text,
        });
        if self.log.len() > LOG_LIMIT {
            let extra = self.log.len() - LOG_LIMIT;
            self.log.drain(..extra);
        }
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
pub(crate) mod tests;
