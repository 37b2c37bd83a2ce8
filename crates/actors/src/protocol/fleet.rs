//! The fleet ops' arguments and replies. The rules they carry (tasks,
//! shortfalls, evidence) live in [`crate::fleet`].

use serde::{Deserialize, Serialize};

use crate::fleet::run::{Decision, Handoff};
use crate::fleet::{BudgetCard, Evidence, FleetSpec, Lifecycle, Shortfall, Spent, Task, TaskState};
use crate::lane::{CliKind, LanePhase, Usage};
use crate::model::Timestamp;
use crate::names::{HostName, PeerName};

/// Arguments of `fleet.check`: judge TASK's definition of done in DIR now,
/// as a fleet's acceptance would.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetCheckArgs {
    /// The task (validated again by the daemon).
    pub task: Task,
    /// The fleet's directory: an absolute path to an existing directory.
    pub dir: String,
    /// How long each check may run, in milliseconds (at most a day).
    pub timeout_ms: u64,
}

/// Reply of `fleet.check`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetCheckReply {
    /// Schema id: `flotilla.fleet-check.v1`.
    pub schema: String,
    /// The directory judged (resolved).
    pub dir: String,
    /// Every artifact and check held.
    pub accepted: bool,
    /// Why not, every reason (empty when accepted).
    pub shortfalls: Vec<Shortfall>,
    /// What was found, when accepted.
    pub evidence: Option<Evidence>,
}

/// Arguments of `fleet.start`: the spec, and optionally the first task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetStartArgs {
    /// What the fleet is started with.
    pub spec: FleetSpec,
    /// Its first task (a smoke fleet gets its own).
    #[serde(default)]
    pub task: Option<Task>,
}

/// Arguments of `fleet.task`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetTaskArgs {
    /// The fleet.
    pub name: PeerName,
    /// The task (validated again by the daemon).
    pub task: Task,
}

macro_rules! name_args {
    ($($(#[$doc:meta])* $ty:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub struct $ty {
            /// The fleet.
            pub name: PeerName,
        }
    )*};
}

name_args! {
    /// Arguments of `fleet.status`.
    FleetStatusArgs;
    /// Arguments of `fleet.pause`.
    FleetPauseArgs;
    /// Arguments of `fleet.stop`.
    FleetStopArgs;
    /// Arguments of `fleet.history`.
    FleetHistoryArgs;
    /// Arguments of `fleet.remove`.
    FleetRemoveArgs;
}

/// Reply of `fleet.remove` (`flotilla.fleet-remove.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetRemoveReply {
    /// Schema id: `flotilla.fleet-remove.v1`.
    pub schema: String,
    /// The removed fleet: its name is free again.
    pub name: PeerName,
    /// Its members' lanes, removed with it.
    pub lanes: Vec<String>,
}

/// Arguments of `fleet.resume`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetResumeArgs {
    /// The fleet.
    pub name: PeerName,
    /// A new budget card, replacing the old one.
    #[serde(default)]
    pub budget: Option<BudgetCard>,
}

/// Where a fleet stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FleetState {
    /// Waiting for a task.
    Idle,
    /// Working on its task.
    Running,
    /// Paused by a person or by its budget (see `paused_reason`).
    Paused,
    /// The task is completed.
    Completed,
    /// The task is blocked (see `history`).
    Blocked,
    /// Stopped by a person.
    Stopped,
}

/// One step of the task, as the daemon judged it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetStepView {
    /// The step's id (`plan` and `final` are the daemon's).
    pub step: String,
    /// Bounces so far.
    pub bounces: u32,
    /// The reasons of the last bounce.
    pub last_reasons: Vec<Shortfall>,
    /// The evidence, once accepted.
    pub evidence: Option<Evidence>,
}

/// One member of a fleet.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetMemberView {
    /// `supervisor`, `worker-1`, ...
    pub role: String,
    /// Its lane's name.
    pub lane: String,
    /// The host its lane runs on, when not this one (`fleet start
    /// --host`): its phase, turns, context and cost are then what the
    /// fleet last heard, and its inbox depth is 0 (its inbox is there).
    pub host: Option<HostName>,
    /// Its CLI.
    pub cli: CliKind,
    /// Its model, when set.
    pub model: Option<String>,
    /// Its lane's phase (`null` before its first turn).
    pub phase: Option<LanePhase>,
    /// Turns it ran.
    pub turns: u32,
    /// The step it works on now.
    pub step: Option<String>,
    /// Context window in use after its last turn, where known.
    pub context_used_pct: Option<f64>,
    /// Its last turn's tokens.
    pub usage: Option<Usage>,
    /// Its last turn's cost, where the CLI tells.
    pub cost_usd: Option<f64>,
    /// Messages waiting in its inbox.
    pub inbox_depth: u64,
    /// While its turn runs: seconds since its lane's last event (a worker
    /// quiet for long may be stalled; the lane watchdog restarts one that
    /// shows neither output nor CPU time for `lane_stall_secs`).
    pub quiet_secs: Option<u64>,
    /// The claim it works on (`fleet start --claim`): its lane works on
    /// the claim's branch, in its worktree.
    #[serde(default)]
    pub claim: Option<crate::governance::ClaimId>,
}

/// A fleet (`flotilla.fleet.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetView {
    /// Schema id: `flotilla.fleet.v1`.
    pub schema: String,
    /// Its name.
    pub name: PeerName,
    /// Where it stands.
    pub state: FleetState,
    /// Why it is paused.
    pub paused_reason: Option<String>,
    /// Its lifecycle.
    pub lifecycle: Lifecycle,
    /// Its directory.
    pub dir: String,
    /// Its private group.
    pub group: String,
    /// When it started.
    pub started_at: Timestamp,
    /// Its task, with the supervisor's added artifacts.
    pub task: Option<Task>,
    /// Its task's state.
    pub task_state: Option<TaskState>,
    /// Every step judged so far.
    pub steps: Vec<FleetStepView>,
    /// The supervisor first, then the workers.
    pub members: Vec<FleetMemberView>,
    /// What was spent.
    pub spent: Spent,
    /// The caps.
    pub budget: BudgetCard,
    /// `--max-busy`.
    pub max_busy: Option<usize>,
    /// The last decisions (at most 20; `fleet history` has them all).
    pub recent: Vec<Decision>,
    /// The fleet whose member started this one (a team of teams).
    pub parent: Option<crate::fleet::nesting::FleetParent>,
    /// The fleets this one's members started, each with its own task,
    /// budget and state.
    pub children: Vec<FleetChildView>,
}

/// A fleet started by a member of another (`children[]` of a fleet).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetChildView {
    /// The child fleet.
    pub name: PeerName,
    /// The member that leads it (`worker-1`, ...).
    pub role: String,
    /// Where it stands.
    pub state: FleetState,
}

/// Reply of `fleet.list` (`flotilla.fleets.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetListReply {
    /// Schema id: `flotilla.fleets.v1`.
    pub schema: String,
    /// Every fleet, by name.
    pub fleets: Vec<FleetView>,
}

/// Reply of `fleet.history` (`flotilla.fleet-history.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetHistoryReply {
    /// Schema id: `flotilla.fleet-history.v1`.
    pub schema: String,
    /// The fleet.
    pub name: PeerName,
    /// Every decision kept, oldest first.
    pub decisions: Vec<Decision>,
    /// Every rotation: the role, when, and the note its successor started
    /// with (`from_member` false: the daemon's skeleton).
    pub handoffs: Vec<Handoff>,
}

/// A service request, as `fleet request` reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceRequest {
    /// The member's role (`worker-1`, ...); without it, the supervisor.
    #[serde(default)]
    pub to: Option<String>,
    /// What is asked (any JSON).
    pub body: serde_json::Value,
    /// What the reply must be.
    #[serde(default)]
    pub reply: crate::fleet::reply::ReplySpec,
}

/// Arguments of `fleet.request`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetRequestArgs {
    /// The fleet.
    pub name: PeerName,
    /// The request.
    pub request: ServiceRequest,
}

/// Reply of `fleet.request` (`flotilla.fleet-request.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetRequestReply {
    /// Schema id: `flotilla.fleet-request.v1`.
    pub schema: String,
    /// The fleet.
    pub name: PeerName,
    /// The fleet's number for the request.
    pub id: u64,
    /// The reply passed its check.
    pub passed: bool,
    /// The checked reply's object (when it passed).
    pub reply: Option<serde_json::Value>,
    /// Why the last reply was refused (when it did not pass).
    pub faults: Vec<String>,
    /// Replies bounced before the answer.
    pub bounces: u32,
}
