//! The operator's view of the federation (`flotilla hub roster`, schema
//! `flotilla.hub-roster.v1`): every host with its link state, release,
//! round-trip time, last change, peers, lanes, the memberships the
//! operator's group list refused, and the messages queued for it.
//!
//! Owns the JSON shape; built from the core's state, read-only. Must not
//! change anything.

use std::collections::HashMap;

use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, PeerId};
use serde::{Deserialize, Serialize};

use crate::budget::{BudgetBook, BudgetView};
use crate::core::LinkHandle;
use crate::roster::HubRoster;
use crate::store::Depth;

/// Schema id of [`HubRosterReply`].
pub const HUB_ROSTER_SCHEMA: &str = "flotilla.hub-roster.v1";

/// The whole federation, as the hub sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HubRosterReply {
    /// [`HUB_ROSTER_SCHEMA`].
    pub schema: String,
    /// The hub's name.
    pub hub: String,
    /// When this view was made.
    pub generated_at: Timestamp,
    /// Every host the hub knows, by name.
    pub hosts: Vec<HubHostView>,
}

/// One host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HubHostView {
    /// Its name (from its certificate).
    pub host: HostName,
    /// `online` or `offline`.
    pub state: String,
    /// The release it runs (as it said in its hello).
    pub version: String,
    /// When it last linked, left, or changed its roster.
    pub last_seen: Timestamp,
    /// Where it connects from, while online.
    pub remote: Option<String>,
    /// The link's round-trip time in milliseconds, while online.
    pub rtt_ms: Option<f64>,
    /// Its peers other than lanes.
    pub peers: Vec<HubPeerView>,
    /// Its lanes.
    pub lanes: Vec<HubPeerView>,
    /// What the hub holds for it.
    pub queued: QueuedView,
    /// Memberships its peers reported that the group list refused (added
    /// to schema v1; absent from older hubs).
    #[serde(default)]
    pub refused: Vec<RefusedView>,
    /// What it may send, and whether it was slowed or cut for sending more
    /// (added to schema v1; absent from older hubs).
    #[serde(default)]
    pub budget: BudgetView,
}

/// A membership the operator's group list refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefusedView {
    /// `HOST/NAME`.
    pub peer: PeerId,
    /// The listed group.
    pub group: GroupName,
    /// The rule, for a person.
    pub reason: String,
}

/// One peer or lane of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HubPeerView {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// What sort of peer.
    pub kind: PeerKind,
    /// The product behind it.
    pub product: Option<String>,
    /// Its groups, the private group first.
    pub groups: Vec<GroupName>,
}

/// Messages queued at the hub for a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueuedView {
    /// How many.
    pub messages: u64,
    /// Bytes of bodies and summaries.
    pub bytes: u64,
}

fn peer_view(p: &PeerRecord) -> HubPeerView {
    HubPeerView {
        id: p.id.clone(),
        kind: p.kind,
        product: p.product.clone(),
        groups: p.memberships().collect(),
    }
}

/// Builds the view.
pub(crate) fn roster(
    hub: &str,
    roster: &HubRoster,
    links: &HashMap<HostName, LinkHandle>,
    depths: &HashMap<HostName, Depth>,
    budgets: &BudgetBook,
) -> HubRosterReply {
    let hosts = roster
        .hosts()
        .iter()
        .map(|(name, entry)| {
            let link = links.get(name);
            let (lanes, peers): (Vec<_>, Vec<_>) = entry
                .peers
                .values()
                .map(peer_view)
                .partition(|p| p.kind == PeerKind::Lane);
            let depth = depths.get(name).copied().unwrap_or_default();
            let refused = entry
                .refused
                .iter()
                .flat_map(|(peer, groups)| groups.iter().map(move |g| (peer, g)))
                .map(|(peer, group)| RefusedView {
                    peer: peer.clone(),
                    group: group.clone(),
                    reason: roster
                        .policy()
                        .check(name, group)
                        .err()
                        .map_or_else(String::new, |e| e.to_string()),
                })
                .collect();
            HubHostView {
                host: name.clone(),
                state: if entry.online { "online" } else { "offline" }.to_owned(),
                version: entry.version.clone(),
                last_seen: entry.last_seen,
                remote: link.map(|l| l.remote.to_string()),
                rtt_ms: link.map(|l| (l.connection.rtt().as_secs_f64() * 1e6).round() / 1e3),
                peers,
                lanes,
                queued: QueuedView {
                    messages: depth.messages,
                    bytes: depth.bytes,
                },
                refused,
                budget: budgets.view(name),
            }
        })
        .collect();
    HubRosterReply {
        schema: HUB_ROSTER_SCHEMA.to_owned(),
        hub: hub.to_owned(),
        generated_at: Timestamp::now(),
        hosts,
    }
}
