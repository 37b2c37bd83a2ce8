//! The mail ops' arguments and replies: `send`, `broadcast`, `reply`, and
//! reading and acknowledging an inbox. The ops themselves are listed in
//! `ops.rs`; `docs/protocol.md` mirrors both.

use serde::{Deserialize, Serialize};

use crate::model::{Message, Timestamp};
use crate::names::{GroupName, MessageId, PeerId, PeerName};

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
