//! The `host.status` and `host.shutdown` ops: the daemon's health, its
//! actors, counters and hub link. Types only.

use serde::{Deserialize, Serialize};

use crate::model::Timestamp;
use crate::names::HostName;

/// Arguments of `host.status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostStatusArgs {}

/// Arguments of `host.shutdown`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShutdownArgs {}

/// The state of one actor in the daemon's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorState {
    /// Serving.
    Running,
    /// Failed and waiting for its restart.
    Restarting,
    /// Stopped (shutdown, or gave up).
    Stopped,
}

/// One actor's line in `host.status`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActorStatus {
    /// The actor's role (`registry`, `router`...).
    pub name: String,
    /// Its state.
    pub state: ActorState,
    /// How many times it was restarted since the daemon started.
    pub restarts: u32,
    /// Why it last failed.
    pub last_failure: Option<String>,
}

/// Message counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MessageCounts {
    /// Unacknowledged inbox entries across all peers.
    pub queued: u64,
    /// Distinct messages accepted since the daemon started.
    pub accepted_since_start: u64,
    /// The store's commits since the daemon started (each holds every
    /// write that was waiting).
    #[serde(default)]
    pub commits_since_start: u64,
    /// Writes in those commits.
    #[serde(default)]
    pub writes_since_start: u64,
    /// Microseconds the store's writer spent applying writes, and
    /// committing them (pages and fsync), since the daemon started.
    #[serde(default)]
    pub commit_apply_us: u64,
    /// See `commit_apply_us`.
    #[serde(default)]
    pub commit_sync_us: u64,
}

/// Reply of `host.status`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostStatusReply {
    /// Schema id of this shape: `flotilla.host-status.v1`.
    pub schema: String,
    /// The daemon's version.
    pub version: String,
    /// The control protocol version.
    pub protocol: u32,
    /// The host's name.
    pub host: HostName,
    /// The daemon's process id.
    pub pid: u32,
    /// When it started.
    pub started_at: Timestamp,
    /// Seconds since it started.
    pub uptime_secs: u64,
    /// Each actor of the tree.
    pub actors: Vec<ActorStatus>,
    /// Registered peers.
    pub peers: u64,
    /// Message counters.
    pub messages: MessageCounts,
    /// The link to the hub; `null` when no hub is configured.
    #[serde(default)]
    pub hub_link: Option<HubLinkStatus>,
}

/// The state of the host's link to the hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HubLinkState {
    /// Dialling the hub or waiting for its answer to the hello.
    Connecting,
    /// The hub accepted the hello; pings are answered.
    Connected,
    /// Not linked; waiting for the next attempt.
    Disconnected,
}

/// The host's link to the hub, in `host.status` (`hub_link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HubLinkStatus {
    /// The hub's address, as configured.
    pub hub: String,
    /// The name the hub's certificate must carry.
    pub hub_name: String,
    /// The link's state.
    pub state: HubLinkState,
    /// When it entered this state.
    pub since: Timestamp,
    /// The last ping's round trip, in milliseconds (while connected).
    pub rtt_ms: Option<f64>,
    /// Why the link last failed or could not be made.
    pub last_error: Option<String>,
    /// Links made since the daemon started.
    pub connects: u64,
    /// Attempts failed in a row since the last link.
    pub failures: u32,
    /// Milliseconds until the next attempt (while disconnected).
    pub retry_in_ms: Option<u64>,
    /// The address and certificate name last dialled (with `hub = "auto"`,
    /// the hub found over mDNS), `null` before the first attempt.
    #[serde(default)]
    pub dialled: Option<String>,
}
