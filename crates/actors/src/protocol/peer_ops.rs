//! The peer ops' arguments and replies: joining, leaving and renaming a
//! peer, the peers a peer may see, and the operator's roster of the host.
//! The ops themselves are listed in `ops.rs`; `docs/protocol.md` mirrors
//! both.

use serde::{Deserialize, Serialize};

use super::lanes::RosterLane;
use crate::model::{PeerKind, Timestamp};
use crate::names::{GroupName, HostName, PeerId, PeerName};

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
