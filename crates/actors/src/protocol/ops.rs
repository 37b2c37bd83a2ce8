//! Every control op: its name, its reply type, and the [`Request`] enum the
//! daemon dispatches on. The arguments and replies live beside it, one
//! file per family (`peer_ops.rs`, `mail_ops.rs`, `lanes.rs`, `fleet.rs`,
//! `claims.rs`...). `docs/protocol.md` mirrors them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claims::*;
use super::fleet::*;
use super::lane_files::*;
use super::lane_hold::*;
use super::lanes::*;
use super::mail_ops::*;
use super::outbox::*;
use super::peer_ops::*;
use super::ready::*;
use super::remote::*;
use super::status::*;
use super::{ControlError, ErrorCode, Op};
use crate::lane::events::LaneEvent;

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
