//! Every control op: its arguments, its reply, and the [`Request`] enum the
//! daemon dispatches on. `docs/protocol.md` mirrors this file.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claims::*;
use super::fleet::*;
use super::lane_files::*;
use super::lane_hold::*;
use super::lanes::*;
use super::outbox::*;
use super::ready::*;
use super::remote::*;
use super::status::*;
use super::{ControlError, ErrorCode, Op};
use crate::lane::events::LaneEvent;
use crate::model::{Message, PeerKind, Timestamp};
use crate::names::{GroupName, HostName, MessageId, PeerId, PeerName};

macro_rules! ops {
    ($($(#[$doc:meta])* $variant:ident($ty:ident) = $name:literal -> $reply:ty;)*) => {
        $(
            impl Op for $ty {
                const NAME: &'static str = $name;
                type Reply = $reply;
            }
        )*

        /// A parsed request.
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum Request {
            $($(#[$doc])* $variant($ty),)*
        }

        /// The name of every op, for documentation and error hints.
        pub const OP_NAMES: &[&str] = &[$($name),*];

        impl Request {
            /// Interprets an op name and its arguments.
            pub fn from_parts(op: &str, args: Value) -> Result<Self, ControlError> {
                let args = if args.is_null() { Value::Object(Default::default()) } else { args };
                match op {
                    $($name => serde_json::from_value(args).map(Request::$variant).map_err(|e| bad_args($name, e)),)*
                    other => Err(ControlError::new(
                        ErrorCode::BadRequest,
                        format!("unknown op {other:?}"),
                    ).with_hint(format!("known ops: {}", OP_NAMES.join(", ")))),
                }
            }

            /// The op's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Request::$variant(_) => $name,)*
                }
            }
        }
    };
}

fn bad_args(op: &str, e: serde_json::Error) -> ControlError {
    ControlError::new(
        ErrorCode::BadRequest,
        format!("bad arguments for {op}: {e}"),
    )
    .with_hint("see docs/protocol.md for the arguments of each op")
}

ops! {
    /// The daemon's health and counters.
    HostStatus(HostStatusArgs) = "host.status" -> HostStatusReply;
    /// Stop the daemon gracefully.
    Shutdown(ShutdownArgs) = "host.shutdown" -> Empty;
    /// Register (or extend) a mailbox peer.
    PeerJoin(PeerJoinArgs) = "peer.join" -> PeerView;
    /// Remove a peer.
    PeerLeave(PeerLeaveArgs) = "peer.leave" -> PeerLeaveReply;
    /// Rename a peer, keeping its groups and unread messages.
    PeerRename(PeerRenameArgs) = "peer.rename" -> PeerView;
    /// The peers visible to one peer.
    Peers(PeersArgs) = "peers" -> PeersReply;
    /// Send to named targets.
    Send(SendArgs) = "send" -> SendReply;
    /// Send to every other member of a group.
    Broadcast(BroadcastArgs) = "broadcast" -> SendReply;
    /// Answer the sender of a message.
    Reply(ReplyArgs) = "reply" -> SendReply;
    /// Read the oldest unacknowledged messages.
    InboxFetch(InboxFetchArgs) = "inbox.fetch" -> InboxReply;
    /// Acknowledge read messages.
    InboxAck(InboxAckArgs) = "inbox.ack" -> InboxAckReply;
    /// Every peer on the host, for the operator.
    Roster(RosterArgs) = "roster" -> RosterReply;
    /// What a peer sent and where each message stands.
    Outbox(OutboxArgs) = "outbox" -> OutboxReply;
    /// Verify the store.
    StoreCheck(StoreCheckArgs) = "store.check" -> StoreCheckReply;
    /// Test hook: make one actor fail (only when the daemon enables test hooks).
    DebugFail(DebugFailArgs) = "debug.fail" -> Empty;
    /// Create a lane and start its first turn.
    LaneStart(LaneStartArgs) = "lane.start" -> LaneStartReply;
    /// Start a follow-up turn in the same native session.
    LaneResume(LaneResumeArgs) = "lane.resume" -> LaneStartReply;
    /// Collect a lane's result (once), waiting for it.
    LaneWait(LaneWaitArgs) = "lane.wait" -> LaneEvent;
    /// One lane's state.
    LaneStatus(LaneStatusArgs) = "lane.status" -> LaneView;
    /// Interrupt a lane's running turn.
    LaneInterrupt(LaneInterruptArgs) = "lane.interrupt" -> LaneView;
    /// Archive a lane (interrupting its turn first).
    LaneArchive(LaneArchiveArgs) = "lane.archive" -> LaneView;
    /// Every lane.
    LaneList(LaneListArgs) = "lane.list" -> LaneListReply;
    /// A lane's event log.
    LaneEvents(LaneEventsArgs) = "lane.events" -> LaneEventsReply;
    /// Remove an idle or archived lane, its events and its peer.
    LaneRemove(LaneRemoveArgs) = "lane.remove" -> LaneRemoveReply;
    /// Remove archived lanes.
    LanePrune(LanePruneArgs) = "lane.prune" -> LanePruneReply;
    /// Which CLIs are installed and usable.
    LaneDoctor(LaneDoctorArgs) = "lane.doctor" -> LaneDoctorReply;
    /// What is at some paths in a lane's working directory, with their text.
    LaneFiles(LaneFilesArgs) = "lane.files" -> LaneFilesReply;
    /// Hold a lane for a person and say how to open its interactive session.
    LaneAttach(LaneAttachArgs) = "lane.attach" -> LaneAttachReply;
    /// End a lane's hold: its waiting turn starts.
    LaneRelease(LaneReleaseArgs) = "lane.release" -> LaneView;
    /// A lane op on another host, through the hub.
    RemoteCall(RemoteCallArgs) = "remote.call" -> Value;
    /// Judge a fleet task's definition of done in a directory now.
    FleetCheck(FleetCheckArgs) = "fleet.check" -> FleetCheckReply;
    /// Start a fleet: its members' lanes, and its first task if given.
    FleetStart(FleetStartArgs) = "fleet.start" -> FleetView;
    /// Give a fleet its next task.
    FleetTask(FleetTaskArgs) = "fleet.task" -> FleetView;
    /// One fleet.
    FleetStatus(FleetStatusArgs) = "fleet.status" -> FleetView;
    /// Every fleet.
    FleetList(Empty) = "fleet.list" -> FleetListReply;
    /// Hold every further dispatch.
    FleetPause(FleetPauseArgs) = "fleet.pause" -> FleetView;
    /// Dispatch again, optionally under a new budget card.
    FleetResume(FleetResumeArgs) = "fleet.resume" -> FleetView;
    /// Stop a fleet: its running turns are interrupted, nothing more runs.
    FleetStop(FleetStopArgs) = "fleet.stop" -> FleetView;
    /// A fleet's decisions.
    FleetHistory(FleetHistoryArgs) = "fleet.history" -> FleetHistoryReply;
    /// A service request to one member; answers with the checked reply.
    FleetRequest(FleetRequestArgs) = "fleet.request" -> FleetRequestReply;
    /// Remove a stopped or idle fleet and its members' lanes.
    FleetRemove(FleetRemoveArgs) = "fleet.remove" -> FleetRemoveReply;
    /// Add a claim to a repository (a run record; no branch yet).
    ClaimAdd(ClaimAddArgs) = "claim.add" -> ClaimReply;
    /// One claim and its records.
    ClaimShow(ClaimShowArgs) = "claim.show" -> ClaimReply;
    /// Drop a claim: its worktree is removed unless kept.
    ClaimDrop(ClaimDropArgs) = "claim.drop" -> ClaimReply;
    /// Review a claim's branch at its head with a lane of another model family.
    Review(ReviewArgs) = "review" -> GateReply;
    /// Whether a claim's head passed review.
    Gate(GateArgs) = "gate" -> GateReply;
    /// Open a claim's change request (on its forge, or a local change record).
    ChangeOpen(ChangeOpenArgs) = "change.open" -> ClaimReply;
    /// Merge a claim's branch into its base, under the policy's merge authority.
    Merge(MergeArgs) = "merge" -> ClaimReply;
    /// The effective claim policy, and where it comes from.
    Policy(PolicyArgs) = "policy" -> PolicyReply;
    /// The board of a repository, folded from its run records (`claim list` too).
    Board(BoardArgs) = "board" -> BoardReply;
    /// A repository's readiness: its profile, its tools and CLIs, its
    /// policy, and a plan reviewed against the profile.
    Ready(ReadyArgs) = "ready" -> ReadyReply;
}

/// An empty argument list or reply.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Empty {}

/// Arguments of `peer.join`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerJoinArgs {
    /// The peer's name on this host.
    pub name: PeerName,
    /// Groups to join (not `session:` groups).
    #[serde(default)]
    pub groups: Vec<GroupName>,
    /// Free-text product (`shell`, `ci`...).
    #[serde(default)]
    pub product: Option<String>,
    /// For an interactive agent session (`flotilla peer claude`...): its
    /// process, which the daemon watches; the peer leaves when it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionEvidence>,
}

/// The process behind an interactive session peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEvidence {
    /// The CLI's process id.
    pub pid: u32,
    /// Its start time (clock ticks since boot, Linux), so a reused pid is
    /// not taken for it.
    #[serde(default)]
    pub start_time: Option<u64>,
    /// How messages reach it: `live` (into the running session),
    /// `next-turn` (at its next hook point) or `poll` (it reads its inbox).
    pub delivery: String,
}

/// A peer as shown to a client.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerView {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// Mailbox, lane or session.
    pub kind: PeerKind,
    /// Free-text product.
    pub product: Option<String>,
    /// Groups, the private group first (in `peers`, only shared ones).
    pub groups: Vec<GroupName>,
    /// `waiting` while blocked in `inbox --wait`, `active` if seen in the last five minutes, else `idle`.
    pub state: String,
    /// When it last made a request.
    pub last_seen: Option<Timestamp>,
    /// For a session peer: how messages reach it (`live`, `next-turn`,
    /// `poll`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<String>,
}

/// Arguments of `peer.leave`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerLeaveArgs {
    /// The peer's name on this host.
    pub name: PeerName,
    /// Leave even with unread messages (they are dropped).
    #[serde(default)]
    pub force: bool,
}

/// Reply of `peer.leave`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerLeaveReply {
    /// The removed peer.
    pub id: PeerId,
    /// Unread messages dropped with it (only with `force`).
    pub dropped_unread: u64,
}

/// Arguments of `peer.rename`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerRenameArgs {
    /// Current name.
    pub old: PeerName,
    /// New name.
    pub new: PeerName,
}

/// Arguments of `peers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeersArgs {
    /// The viewer.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
}

/// Reply of `peers`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeersReply {
    /// Schema id: `flotilla.peers.v1`.
    pub schema: String,
    /// The viewer's id.
    pub viewer: PeerId,
    /// Peers sharing a group with the viewer.
    pub peers: Vec<PeerView>,
}

/// Arguments of `send`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendArgs {
    /// The sender, a peer of this host.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// Targets: ids (`HOST/NAME`) or names.
    pub to: Vec<String>,
    /// One-line summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// The text.
    pub body: String,
    /// The message id; a retry must reuse it. Generated when absent.
    #[serde(default)]
    pub id: Option<MessageId>,
}

/// Arguments of `broadcast`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BroadcastArgs {
    /// The sender.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// The group; the sender must be a member.
    pub group: GroupName,
    /// One-line summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// The text.
    pub body: String,
    /// The message id, for retries.
    #[serde(default)]
    pub id: Option<MessageId>,
}

/// Arguments of `reply`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplyArgs {
    /// The replying peer; it must have received the message.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// The message answered.
    pub to_message: MessageId,
    /// One-line summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// The text.
    pub body: String,
    /// The reply's own id, for retries.
    #[serde(default)]
    pub id: Option<MessageId>,
}

/// Reply of `send`, `broadcast` and `reply`: the message is on disk.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendReply {
    /// The message id.
    pub id: MessageId,
    /// Where it went.
    pub recipients: Vec<PeerId>,
    /// The sender's sequence number.
    pub seq: u64,
    /// When it was accepted.
    pub sent_at: Timestamp,
    /// True when this id had been accepted before (a retry); nothing new was stored.
    pub duplicate: bool,
    /// Recipients on other hosts and where the message stands for each when
    /// the answer left (`queued` at the hub, or `accepted` here while the
    /// hub link is down; `flotilla outbox` follows them).
    #[serde(default)]
    pub remote: Vec<crate::store::RecipientState>,
}

/// Arguments of `inbox.fetch`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InboxFetchArgs {
    /// The reader.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// Wait up to this many milliseconds for a first message.
    #[serde(default)]
    pub wait_ms: u64,
    /// At most this many messages (default 100).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Reply of `inbox.fetch`: oldest first, not yet acknowledged.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InboxReply {
    /// Schema id: `flotilla.inbox.v1`.
    pub schema: String,
    /// The reader's id.
    pub peer: PeerId,
    /// The messages.
    pub messages: Vec<Message>,
    /// How many remain after these.
    pub remaining: u64,
}

/// Arguments of `inbox.ack`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InboxAckArgs {
    /// The reader.
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// Messages read.
    pub ids: Vec<MessageId>,
}

/// Reply of `inbox.ack`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InboxAckReply {
    /// How many were removed from the inbox (already acknowledged ones count 0).
    pub acked: u64,
}

/// Arguments of `roster`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RosterArgs {
    /// Also the peers of other hosts this host may see (through the hub).
    #[serde(default)]
    pub all: bool,
}

/// One peer in the operator's roster.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RosterPeer {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// Free-text product.
    pub product: Option<String>,
    /// Mailbox, lane or session.
    pub kind: PeerKind,
    /// All its groups, the private one first.
    pub groups: Vec<GroupName>,
    /// `waiting`, `active` or `idle`; for a peer of another host, `online`
    /// or `offline` (its host's link to the hub).
    pub state: String,
    /// Unacknowledged messages (0 for a peer of another host).
    pub inbox_depth: u64,
    /// When it last made a request.
    pub last_seen: Option<Timestamp>,
    /// For a session peer: how messages reach it (`live`, `next-turn`,
    /// `poll`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<String>,
}

/// Reply of `roster` (`flotilla.roster.v1`, see docs/roster.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RosterReply {
    /// Schema id: `flotilla.roster.v1`.
    pub schema: String,
    /// The host.
    pub host: HostName,
    /// When the roster was taken.
    pub generated_at: Timestamp,
    /// Every peer of the host.
    pub peers: Vec<RosterPeer>,
    /// This host's lanes (each also a peer of kind `lane` above): what
    /// they run, with what permission, for whom, and how full their
    /// context is. Archived lanes are left out.
    #[serde(default)]
    pub lanes: Vec<RosterLane>,
}

/// Arguments of `store.check`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoreCheckArgs {}

/// Reply of `store.check`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreCheckReply {
    /// Whether every check passed.
    pub ok: bool,
    /// The store's file.
    pub path: String,
    /// Its schema version.
    pub schema_version: u64,
    /// What was checked and found.
    pub detail: String,
}

/// Arguments of `debug.fail`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DebugFailArgs {
    /// `registry`, `router` or `watchdog`.
    pub actor: String,
}
