//! The lane ops of the control protocol: arguments and replies.

use serde::{Deserialize, Serialize};

use crate::lane::events::LaneEvent;
use crate::lane::{CliKind, LanePhase, LaneRecord, Permissions, TurnStatus};
use crate::model::Timestamp;
use crate::names::{GroupName, PeerId, PeerName};

/// Arguments of `lane.start`: a new lane and its first turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneStartArgs {
    /// The lane's name.
    pub name: PeerName,
    /// The CLI.
    pub cli: CliKind,
    /// Working directory (absolute; default: the daemon's).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Model.
    #[serde(default)]
    pub model: Option<String>,
    /// Permission mode.
    #[serde(default)]
    pub permissions: Permissions,
    /// Per-turn deadline, seconds.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Keep for follow-ups and messages.
    #[serde(default)]
    pub persistent: bool,
    /// Archive this long after a turn ends; null: never (default 60).
    #[serde(default = "default_auto_archive")]
    pub auto_archive_secs: Option<u64>,
    /// Extra groups.
    #[serde(default)]
    pub groups: Vec<GroupName>,
    /// Join the owner's groups too.
    #[serde(default)]
    pub inherit_groups: bool,
    /// The owner, a peer of this host (default: the operator).
    #[serde(rename = "as", default)]
    pub as_peer: Option<PeerName>,
    /// The owner, when the lane is placed from another host: set by the
    /// daemon from the hub's relayed call, never taken from a local client.
    #[serde(default)]
    pub owner: Option<PeerId>,
    /// Extra environment.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Arguments for the CLI (for exec: the command).
    #[serde(default)]
    pub args: Vec<String>,
    /// The stall watchdog may run an exec lane's command again.
    #[serde(default)]
    pub restart_on_stall: bool,
    /// Start even with a CLI older than the oldest supported version.
    #[serde(default)]
    pub force: bool,
    /// Work on this claim of the repository in `cwd`: the daemon runs the
    /// lane in the claim's own worktree, on the claim's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<crate::governance::ClaimId>,
    /// The prompt.
    pub prompt: String,
}

fn default_auto_archive() -> Option<u64> {
    Some(60)
}

/// Reply of `lane.start` and `lane.resume`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneStartReply {
    /// The lane's peer id.
    pub lane: PeerId,
    /// The turn started.
    pub turn: u32,
    /// Where the lane works, on its host (`lane.start` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// What the operator should know about the start (a CLI newer than
    /// the newest tested version, or one started below the floor with
    /// `force`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

macro_rules! name_args {
    ($($(#[$doc:meta])* $ty:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub struct $ty {
            /// The lane.
            pub name: PeerName,
        }
    )*};
}

name_args! {
    /// Arguments of `lane.status`.
    LaneStatusArgs;
    /// Arguments of `lane.interrupt`.
    LaneInterruptArgs;
    /// Arguments of `lane.archive`.
    LaneArchiveArgs;
}

/// Arguments of `lane.resume`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneResumeArgs {
    /// The lane.
    pub name: PeerName,
    /// The follow-up prompt.
    pub prompt: String,
    /// Start a fresh native session instead of continuing the last (a
    /// rotated fleet member's successor).
    #[serde(default)]
    pub fresh: bool,
    /// Switch the lane to this model first (a fleet member moving down
    /// its fallback chain at a usage wall).
    #[serde(default)]
    pub model: Option<String>,
}

/// Arguments of `lane.wait`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneWaitArgs {
    /// The lane.
    pub name: PeerName,
    /// Give up after this long (default: wait as long as the turn runs).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Arguments of `lane.list`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LaneListArgs {
    /// Include archived lanes.
    #[serde(default)]
    pub all: bool,
}

/// A lane as shown by `lane.status` and `lane.list`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneView {
    /// The lane's peer id.
    pub lane: PeerId,
    /// Its CLI.
    pub cli: CliKind,
    /// `idle`, `running` or `archived`.
    pub phase: LanePhase,
    /// Turns started.
    pub turns: u32,
    /// The owner.
    pub owner: PeerId,
    /// Working directory.
    pub cwd: String,
    /// Model.
    pub model: Option<String>,
    /// Permission mode.
    pub permissions: Permissions,
    /// Persistent.
    pub persistent: bool,
    /// The running turn's process (its lane shim).
    pub pid: Option<u32>,
    /// The CLI's session id.
    pub native_session_id: Option<String>,
    /// The status of the last finished turn.
    pub last_status: Option<TurnStatus>,
    /// Whether a result waits for `lane wait`.
    pub uncollected: bool,
    /// Created.
    pub created_at: Timestamp,
    /// Last turn ended.
    pub finished_at: Option<Timestamp>,
    /// Who holds the lane (`lane attach`), if anyone: no turn starts until
    /// the hold ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<String>,
    /// How full the CLI's context was at the end of the last turn, when
    /// the CLI tells (as the roster has it).
    #[serde(default)]
    pub context_used_pct: Option<f64>,
}

/// Reply of `lane.list`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneListReply {
    /// Schema id: `flotilla.lanes.v1`.
    pub schema: String,
    /// The lanes.
    pub lanes: Vec<LaneView>,
}

/// Arguments of `lane.events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneEventsArgs {
    /// The lane.
    pub name: PeerName,
    /// Only events after this sequence number.
    #[serde(default)]
    pub after: u64,
    /// Wait up to this long for a first new event.
    #[serde(default)]
    pub wait_ms: u64,
    /// At most this many (default 1000).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Reply of `lane.events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneEventsReply {
    /// Schema id: `flotilla.lane.v1`.
    pub schema: String,
    /// The events, in order.
    pub events: Vec<LaneEvent>,
    /// Whether the lane has no running turn (a follower may stop).
    pub idle: bool,
}

/// Arguments of `lane.doctor`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LaneDoctorArgs {
    /// Only this CLI.
    #[serde(default)]
    pub cli: Option<CliKind>,
}

/// One CLI's line in `lane.doctor`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CliCheck {
    /// The CLI.
    pub cli: CliKind,
    /// Where it was found.
    pub path: Option<String>,
    /// What `--version` printed.
    pub version: Option<String>,
    /// The version the project tests.
    pub tested_version: Option<String>,
    /// Whether this version is the tested one.
    pub supported: Option<bool>,
    /// Whether a connector exists for it in this build.
    pub connector: bool,
    /// Whether its help lists the headless flags the connector uses.
    #[serde(default)]
    pub headless: Option<bool>,
    /// `ok`, `warn`, `too_old` (below the oldest supported version: lanes
    /// refuse it without `force`) or `missing`.
    pub status: String,
    /// What to do.
    pub hint: Option<String>,
    /// How a lane gives it the prompt: `stdin` (never in the process
    /// list) or `argument` (the CLI takes it nowhere else: it shows in the
    /// process list).
    #[serde(default)]
    pub prompt_via: Option<String>,
}

/// Reply of `lane.doctor`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneDoctorReply {
    /// Schema id: `flotilla.lane-doctor.v1`.
    pub schema: String,
    /// One line per CLI.
    pub clis: Vec<CliCheck>,
}

/// Arguments of `lane.remove`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneRemoveArgs {
    /// The lane.
    pub name: PeerName,
    /// Remove it even with an uncollected result or unread messages (they
    /// are dropped). A running lane is never removed: archive it first.
    #[serde(default)]
    pub force: bool,
}

/// Reply of `lane.remove`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneRemoveReply {
    /// Schema id: `flotilla.lane-remove.v1`.
    pub schema: String,
    /// The removed lane: its name is free again.
    pub lane: PeerId,
    /// Unread messages dropped with it (only with `force`).
    pub dropped_unread: u64,
}

/// Arguments of `lane.prune`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LanePruneArgs {
    /// Only archived lanes whose last turn ended (or, with no turn, that
    /// were created) at least this long ago; none: every archived lane.
    #[serde(default)]
    pub older_than_secs: Option<u64>,
}

/// A lane that `lane.prune` left, and why.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneKept {
    /// The lane.
    pub lane: PeerId,
    /// Why it stays (`flotilla lane rm --force` removes it anyway).
    pub reason: String,
}

/// Reply of `lane.prune`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LanePruneReply {
    /// Schema id: `flotilla.lane-prune.v1`.
    pub schema: String,
    /// The removed lanes.
    pub removed: Vec<PeerId>,
    /// Archived lanes old enough that were kept, with the reason.
    pub kept: Vec<LaneKept>,
}

/// A lane as the operator's roster shows it (`roster`'s `lanes[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RosterLane {
    /// The lane's peer id.
    pub id: PeerId,
    /// Its CLI.
    pub cli: CliKind,
    /// `idle`, `running` or `archived`.
    pub phase: LanePhase,
    /// Turns started.
    pub turns: u32,
    /// Its permission mode.
    pub permissions: Permissions,
    /// Its owner.
    pub owner: PeerId,
    /// Whether it outlives its owner and takes messages.
    pub persistent: bool,
    /// How full the CLI's context was at the end of the last turn, when
    /// the CLI tells.
    pub context_used_pct: Option<f64>,
}

impl RosterLane {
    /// The roster's view of a lane of `host`.
    pub fn of(host: &crate::names::HostName, record: &LaneRecord) -> Self {
        Self {
            id: PeerId::new(host.clone(), record.spec.name.clone()),
            cli: record.spec.cli,
            phase: record.phase,
            turns: record.turns,
            permissions: record.spec.permissions,
            owner: record.spec.owner.clone(),
            persistent: record.spec.persistent,
            context_used_pct: record.last_result.as_ref().and_then(|r| r.context_used_pct),
        }
    }
}
