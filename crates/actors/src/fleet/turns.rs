//! What a fleet's run is told and what it asks of the host: the rules in
//! force when an event is fed to it, a member's finished turn, and the
//! actions the host must carry out. Plain data; the run's state machine
//! that reads and makes them is `run`'s.

use std::collections::BTreeMap;
use std::time::Duration;

use super::budget::BudgetCard;
use super::steps::TaskState;
use super::task::Task;

/// What the host knows when it feeds the run an event.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The worker roles, in order.
    pub workers: &'a [String],
    /// The account each role's calls are billed to (its CLI).
    pub accounts: &'a BTreeMap<String, String>,
    /// Turns that may run at once.
    pub max_busy: Option<usize>,
    /// The budget card.
    pub budget: &'a BudgetCard,
    /// Time since the fleet started.
    pub elapsed: Duration,
    /// Now, in milliseconds since the epoch (for the log).
    pub now_ms: u64,
    /// Context use (percent) at which a member rotates.
    pub rotate_at_pct: f64,
    /// Context use (percent) at which a running turn is cut short to
    /// rotate ([`super::midturn`]).
    pub rotate_now_at_pct: f64,
    /// Each role's fallback models, after its own.
    pub chains: &'a BTreeMap<String, Vec<String>>,
    /// How long the fleet waits at a usage wall with no model left.
    pub wall_wait_ms: u64,
    /// The capability matrix (empty: no routing check).
    pub matrix: &'a [super::matrix::CapabilityCell],
    /// Each role's CLI and its own model.
    pub picks: &'a BTreeMap<String, (crate::lane::CliKind, Option<String>)>,
}

/// A member's finished turn, as the run needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnEnd {
    /// The turn completed.
    pub ok: bool,
    /// Its answer, or its error.
    pub text: String,
    /// Its error class, when it failed.
    pub class: Option<String>,
    /// Tokens it used (input + output).
    pub tokens: u64,
    /// Its cost, where the CLI reports one.
    pub cost: Option<f64>,
    /// Context window in use at its end, where the CLI tells.
    pub context_used_pct: Option<f64>,
    /// The daemon lost it (it stopped before or while the turn ran): not
    /// the member's failure.
    pub lost: bool,
    /// The host found this member's model endpoint not answering after the
    /// turn failed ([`super::offline`]).
    pub offline: Option<String>,
    /// When the usage wall it hit lifts (ms since the epoch), where the
    /// CLI said ([`crate::lane::resets::resets_at`]).
    pub resets_at_ms: Option<u64>,
}

/// What the host must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start a turn of the member `role` with `prompt`.
    Run {
        /// The member.
        role: String,
        /// The prompt.
        prompt: String,
        /// Start a fresh native session (after a rotation) instead of
        /// continuing the member's.
        fresh: bool,
        /// The model to move the member to (down its fallback chain);
        /// `None`: the one it has.
        model: Option<String>,
    },
    /// Judge `step` against `task` (a step's artifacts, or the whole task
    /// for the step `final`) and feed the verdict back.
    Judge {
        /// The step.
        step: String,
        /// What it is judged against.
        task: Task,
    },
    /// Interrupt the running turn of the member `role` (its context hit
    /// the ceiling mid-turn).
    Interrupt(String),
    /// The task ended in this state.
    Ended(TaskState),
    /// The fleet paused, for this reason.
    Paused(String),
    /// A service request ended: tell its caller.
    Answered(u64, super::service::Answer),
    /// Paused at a usage wall: call [`FleetRun::wall_lifted`] at this
    /// time (milliseconds since the epoch).
    WallUntil(u64),
    /// Paused while this model endpoint (`host:port`) does not answer:
    /// probe it now and then, and call [`FleetRun::back_online`] when it
    /// does.
    Probe(String),
}
