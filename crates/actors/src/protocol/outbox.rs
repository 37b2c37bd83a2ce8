//! The `outbox` op: what a peer sent and where each message stands at each
//! recipient (accepted here, queued at the hub, delivered, dropped).
//! Types only.

use serde::{Deserialize, Serialize};

use crate::names::{PeerId, PeerName};
use crate::store::OutboxEntry;

/// Schema id of [`OutboxReply`].
pub const OUTBOX_SCHEMA: &str = "flotilla.outbox.v1";

/// Arguments of `outbox`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutboxArgs {
    /// The sender (a peer of this host).
    #[serde(rename = "as")]
    pub as_peer: PeerName,
    /// How many of its latest messages.
    #[serde(default = "default_limit")]
    pub limit: usize,
}

fn default_limit() -> usize {
    50
}

/// Reply of `outbox` (`flotilla.outbox.v1`, see docs/cli.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutboxReply {
    /// [`OUTBOX_SCHEMA`].
    pub schema: String,
    /// The sender.
    pub peer: PeerId,
    /// Messages of this host (all senders) not yet taken by the hub.
    pub waiting_for_hub: u64,
    /// The sender's latest messages, oldest first.
    pub messages: Vec<OutboxEntry>,
}
