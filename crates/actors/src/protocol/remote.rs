//! The `remote.call` op: a lane op for a lane on another host of the
//! federation, relayed through the hub. Types only.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::{HostName, PeerName};

/// The lane ops that may be called on another host.
pub const REMOTE_LANE_OPS: &[&str] = &[
    "lane.start",
    "lane.resume",
    "lane.wait",
    "lane.status",
    "lane.interrupt",
    "lane.archive",
    "lane.list",
    "lane.events",
    "lane.doctor",
    "lane.files",
    "lane.remove",
];

/// Arguments of `remote.call`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteCallArgs {
    /// The host that runs (or will run) the lane.
    pub host: HostName,
    /// The peer of this host on whose behalf (default: the operator peer).
    #[serde(rename = "as", default)]
    pub as_peer: Option<PeerName>,
    /// The lane op (one of [`REMOTE_LANE_OPS`]).
    pub op: String,
    /// Its arguments, as that op takes them.
    #[serde(default)]
    pub args: Value,
}
