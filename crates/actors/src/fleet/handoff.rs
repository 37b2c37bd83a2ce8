//! Starting turns, and context rotation on the way: a queued turn starts
//! when its member is free, `--max-busy` allows it and the budget card
//! does. A member whose context crossed the threshold is first asked for
//! its handoff note (the turn it was due waits); its successor, a fresh
//! native session of the same CLI in the same role, starts that turn with
//! the note, or with the daemon's skeleton when the note did not come or
//! did not follow the template. Pure, like the rest of [`super::run`].

use serde::{Deserialize, Serialize};

use super::budget::{Dispatch, may_start_turn};
use super::rotation::{HandoffNote, note_request};
use super::run::{Action, Asked, FleetRun, Queued, Rules, SUPERVISOR, TurnEnd};

/// A handoff note asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteAsk {
    /// The lane turn of the request, once started.
    pub turn: Option<u32>,
    /// The turn the member was due, started by its successor.
    pub held: Queued,
}

/// One rotation, for `fleet history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Handoff {
    /// The member's role.
    pub role: String,
    /// When, in milliseconds since the epoch.
    pub at_ms: u64,
    /// The note the successor started with.
    pub note: HandoffNote,
}

impl FleetRun {
    /// Starts what may start: free member, `--max-busy`, budget.
    pub fn pump(&mut self, r: &Rules<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        if self.paused.is_some() {
            return out;
        }
        let task_over = self.ledger.state.is_final();
        let mut i = 0;
        while i < self.queue.len() {
            let busy = usize::from(self.supervisor.is_some())
                + self.working.len()
                + self.noting.len()
                + self.serving.len();
            if !may_start_turn(busy, r.max_busy) {
                break;
            }
            let role = role_of(&self.queue[i]);
            let request = matches!(self.queue[i], Queued::Request(_));
            if !self.free(&role) || (task_over && !request) {
                i += 1;
                continue;
            }
            let account = r.accounts.get(&role).map_or("", String::as_str);
            let what = if role == SUPERVISOR {
                Dispatch::Round { account }
            } else {
                Dispatch::Work { account }
            };
            if let Err(stop) = r.budget.allows(&self.spent, r.elapsed, what) {
                let reason = format!("out of budget: {stop}");
                self.ledger.out_of_budget();
                self.pause(reason.clone(), r);
                out.push(Action::Paused(reason));
                return out;
            }
            self.spent.dispatched(what);
            let Some(next) = self.queue.remove(i) else {
                break;
            };
            if self.rotate.remove(&role) {
                self.note(r, format!("{role} rotates: its handoff note is asked for"));
                self.noting.insert(
                    role.clone(),
                    NoteAsk {
                        turn: None,
                        held: next,
                    },
                );
                let model = self.model_of(&role, r);
                out.push(Action::Run {
                    role,
                    prompt: note_request(),
                    fresh: false,
                    model,
                });
            } else {
                let model = self.model_of(&role, r);
                out.push(self.begin(next, model));
            }
        }
        out
    }

    fn free(&self, role: &str) -> bool {
        let busy = if role == SUPERVISOR {
            self.supervisor.is_some()
        } else {
            self.working.contains_key(role)
        };
        !busy && !self.noting.contains_key(role) && !self.serving.contains_key(role)
    }

    fn begin(&mut self, next: Queued, model: Option<String>) -> Action {
        let role = role_of(&next);
        let successor = self.successors.remove(&role);
        let fresh = successor.is_some();
        let with_note = |prompt: String| match &successor {
            Some(note) => format!("{note}\n{prompt}"),
            None => prompt,
        };
        match next {
            Queued::Supervisor(prompt) => {
                let prompt = with_note(prompt);
                self.supervisor = Some(Asked {
                    prompt: prompt.clone(),
                    turn: None,
                    fresh,
                });
                Action::Run {
                    role,
                    prompt,
                    fresh,
                    model,
                }
            }
            Queued::Work(mut a) => {
                a.prompt = with_note(a.prompt);
                a.fresh = fresh;
                let action = Action::Run {
                    role,
                    prompt: a.prompt.clone(),
                    fresh,
                    model,
                };
                self.working.insert(a.to.clone(), a);
                action
            }
            Queued::Request(mut ask) => {
                ask.prompt = with_note(ask.prompt);
                let action = Action::Run {
                    role: role.clone(),
                    prompt: ask.prompt.clone(),
                    fresh,
                    model,
                };
                self.serving.insert(role, ask);
                action
            }
        }
    }

    /// The note turn of `role` ended: its successor starts the held turn
    /// first, with the member's note or the daemon's skeleton.
    pub(super) fn handed_over(&mut self, role: &str, ask: NoteAsk, end: TurnEnd, r: &Rules<'_>) {
        let note = end
            .ok
            .then(|| HandoffNote::parse(&end.text))
            .flatten()
            .unwrap_or_else(|| self.skeleton(role, &ask.held));
        let whose = if note.from_member {
            "its own note"
        } else {
            "the daemon's skeleton (no note in the template came)"
        };
        self.note(
            r,
            format!("{role} rotated: a fresh session starts with {whose}"),
        );
        self.successors.insert(role.to_owned(), note.render());
        self.handoffs.push(Handoff {
            role: role.to_owned(),
            at_ms: r.now_ms,
            note,
        });
        self.queue.push_front(ask.held);
    }

    pub(super) fn skeleton(&self, role: &str, held: &Queued) -> HandoffNote {
        let mark = format!(" of {role} accepted");
        let done: Vec<String> = self
            .log
            .iter()
            .filter(|d| d.text.contains(&mark))
            .map(|d| d.text.clone())
            .collect();
        let (in_progress, ask) = match held {
            Queued::Supervisor(p) => (None, p.as_str()),
            Queued::Work(a) => (Some(a.step.as_str()), a.prompt.as_str()),
            Queued::Request(ask) => (None, ask.prompt.as_str()),
        };
        let ask: String = ask.chars().take(2000).collect();
        HandoffNote::skeleton(&done, in_progress, &ask)
    }
}

fn role_of(q: &Queued) -> String {
    match q {
        Queued::Supervisor(_) => SUPERVISOR.to_owned(),
        Queued::Work(a) => a.to.clone(),
        Queued::Request(ask) => ask.to.clone(),
    }
}
