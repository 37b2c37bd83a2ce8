//! Service mode: a request goes straight to one member (the worker of its
//! `to` role, or the supervisor without one), skipping the supervisor's
//! planning; the member's reply must be one JSON object with every
//! required field and only allowed values ([`super::reply`]), or it goes
//! back to the member with every fault. The third bounce answers the
//! caller with the faults. Requests pass `--max-busy` and the budget like
//! any turn, and run beside a task. Pure, like [`super::run`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reply::{ReplySpec, check_reply};
use super::run::{Action, FleetRun, Queued, Rules, SUPERVISOR, TurnEnd};
use super::steps::MAX_BOUNCES;

/// One request to a member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceAsk {
    /// The fleet's number for it.
    pub id: u64,
    /// The member's role.
    pub to: String,
    /// What is asked.
    pub body: Value,
    /// What its reply must be.
    pub reply: ReplySpec,
    /// The prompt of its next (or running) turn.
    pub prompt: String,
    /// Bounces so far.
    pub bounces: u32,
    /// Its lane turn, once started.
    pub turn: Option<u32>,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The checked reply.
    Passed {
        /// The reply's object.
        reply: Value,
        /// Bounces before it passed.
        bounces: u32,
    },
    /// Bounced [`MAX_BOUNCES`] times (or the member's turn could not run):
    /// the last faults.
    Failed(Vec<String>),
}

impl FleetRun {
    /// Takes a request for `to` (a worker role; `None`: the supervisor).
    pub fn request(
        &mut self,
        to: Option<String>,
        body: Value,
        reply: ReplySpec,
        r: &Rules<'_>,
    ) -> Result<(u64, Vec<Action>), String> {
        let to = to.unwrap_or_else(|| SUPERVISOR.to_owned());
        if to != SUPERVISOR && !r.workers.contains(&to) {
            return Err(format!(
                "{to:?} is not a member of this fleet (supervisor, {})",
                r.workers.join(", ")
            ));
        }
        self.next_request += 1;
        let id = self.next_request;
        let prompt = request_prompt(&body, &reply, &[]);
        self.note(r, format!("request {id} goes to {to}"));
        self.queue.push_back(Queued::Request(ServiceAsk {
            id,
            to,
            body,
            reply,
            prompt,
            bounces: 0,
            turn: None,
        }));
        Ok((id, self.pump(r)))
    }

    /// A member's turn for request `ask` ended.
    pub(super) fn served(
        &mut self,
        mut ask: ServiceAsk,
        end: TurnEnd,
        r: &Rules<'_>,
    ) -> Vec<Action> {
        let faults = if end.ok {
            match check_reply(&ask.reply, &end.text) {
                Ok(reply) => {
                    self.note(r, format!("request {} answered by {}", ask.id, ask.to));
                    let answer = Answer::Passed {
                        reply,
                        bounces: ask.bounces,
                    };
                    return vec![Action::Answered(ask.id, answer)];
                }
                Err(faults) => faults.iter().map(ToString::to_string).collect(),
            }
        } else {
            vec![format!("the turn failed: {}", end.text)]
        };
        ask.bounces += 1;
        self.note(
            r,
            format!(
                "request {} bounced ({}): {}",
                ask.id,
                ask.bounces,
                faults.join("; ")
            ),
        );
        if ask.bounces >= MAX_BOUNCES {
            return vec![Action::Answered(ask.id, Answer::Failed(faults))];
        }
        ask.prompt = request_prompt(&ask.body, &ask.reply, &faults);
        ask.turn = None;
        self.queue.push_front(Queued::Request(ask));
        Vec::new()
    }
}

fn request_prompt(body: &Value, spec: &ReplySpec, faults: &[String]) -> String {
    let mut out = String::new();
    if !faults.is_empty() {
        out.push_str("Your last reply was refused:\n");
        for f in faults {
            out.push_str(&format!("- {f}\n"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "A request for you:\n{}\n\nAnswer with one JSON object and nothing else.",
        serde_json::to_string_pretty(body).unwrap_or_default()
    ));
    if !spec.required.is_empty() {
        out.push_str(&format!(
            " It must have the fields: {}.",
            spec.required.join(", ")
        ));
    }
    for (field, allowed) in &spec.allowed {
        out.push_str(&format!(
            " {field} may only be one of {}.",
            Value::Array(allowed.clone())
        ));
    }
    out
}
