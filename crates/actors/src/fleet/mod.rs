//! Fleets' rules, as plain data and functions with no IO and no clock: a
//! task and its definition of done ([`task`]), the daemon's literal
//! acceptance ([`acceptance`]), bounces and the task's state ([`steps`]),
//! budget caps checked before each dispatch ([`budget`]), context rotation
//! and handoff notes ([`rotation`]), service mode's reply check
//! ([`reply`]), the supervisor's plan ([`plan`]) and a fleet's run as a
//! state machine ([`run`]).
//!
//! The host reads artifacts, runs checks and drives lanes; it hands the
//! facts to these functions and does what they decide. Nothing here may
//! read a file, start a process or look at the time.

pub mod acceptance;
pub mod budget;
mod handoff;
pub mod matrix;
mod midturn;
pub mod nesting;
pub mod offline;
pub mod pairs;
pub mod places;
pub mod plan;
pub mod record;
pub mod reply;
pub mod rotation;
mod rounds;
pub mod run;
pub mod service;
pub mod steps;
pub mod task;
mod turns;
mod walls;
pub mod watch;

use serde::{Deserialize, Serialize};

pub use acceptance::{ArtifactSeen, CheckRan, Evidence, Shortfall, Verdict, judge};
pub use budget::{BudgetCard, BudgetStop, Dispatch, Spent};
pub use places::{Place, PlaceFacts, judge_across};
pub use plan::Assignment;
pub use record::{FleetRecord, FleetSpec, MemberSpec};
pub use run::{Action, FleetRun, Rules, SUPERVISOR, TurnEnd};
pub use steps::{StepLedger, StepOutcome, TaskState};
pub use task::{Artifact, Check, Task, TaskError};

/// How long a fleet lives.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    /// Ends at completed, blocked or out of budget.
    #[default]
    Task,
    /// Stays up for requests.
    Service,
    /// One short round to prove a pairing.
    Smoke,
}
