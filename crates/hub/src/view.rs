//! The operator's view of the federation (`flotilla hub roster`, schema
//! `flotilla.hub-roster.v1`): every host with its link state, release,
//! round-trip time, last change, peers, lanes, the memberships the
//! operator's group list refused, and the messages queued for it.
//!
//! Owns the JSON shape: its types (the documented schema, read by clients)
//! and its writing straight from the core's state ([`write_roster`]),
//! read-only. Must not change anything.

use std::collections::HashMap;

use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, PeerId};
use serde::{Deserialize, Serialize};

use crate::budget::{BudgetBook, BudgetView};
use crate::core::LinkHandle;
use crate::roster::{HostEntry, HubRoster};
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

/// What the view is made from: the core's state, borrowed.
pub(crate) struct RosterParts<'a> {
    /// The hub's name.
    pub hub: &'a str,
    /// Hosts and their peers.
    pub roster: &'a HubRoster,
    /// The links up.
    pub links: &'a HashMap<HostName, LinkHandle>,
    /// What is queued per host.
    pub depths: &'a HashMap<HostName, Depth>,
    /// Budgets, as the operator sees them.
    pub budgets: &'a BudgetBook,
}

/// Writes the view as JSON straight from the core's state: the same text
/// as a [`HubRosterReply`] built from it and serialized (a test holds the
/// two to the same bytes), without building one. A roster of 1,000 hosts
/// is megabytes, and building it cloned every peer's id, product and
/// groups only to write and drop them.
pub(crate) fn write_roster(
    parts: &RosterParts<'_>,
    generated_at: Timestamp,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let view = RosterOut {
        schema: HUB_ROSTER_SCHEMA,
        hub: parts.hub,
        generated_at,
        hosts: HostsOut(parts),
    };
    serde_json::to_writer(out, &view)
}

/// [`HubRosterReply`], borrowed.
#[derive(Serialize)]
struct RosterOut<'a> {
    schema: &'a str,
    hub: &'a str,
    generated_at: Timestamp,
    hosts: HostsOut<'a>,
}

/// Every host the hub knows, each as a [`HubHostView`].
struct HostsOut<'a>(&'a RosterParts<'a>);

impl Serialize for HostsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let parts = self.0;
        s.collect_seq(parts.roster.hosts().iter().map(|(name, entry)| {
            let facts = HostFacts::of(parts, name, entry);
            HostOut {
                host: name,
                state: facts.state,
                version: &entry.version,
                last_seen: entry.last_seen,
                remote: facts.remote,
                rtt_ms: facts.rtt_ms,
                peers: PeersOut(entry, false),
                lanes: PeersOut(entry, true),
                queued: facts.queued,
                refused: facts.refused,
                budget: facts.budget,
            }
        }))
    }
}

/// [`HubHostView`], borrowed; its fields in the same order.
#[derive(Serialize)]
struct HostOut<'a> {
    host: &'a HostName,
    state: &'static str,
    version: &'a str,
    last_seen: Timestamp,
    remote: Option<String>,
    rtt_ms: Option<f64>,
    peers: PeersOut<'a>,
    lanes: PeersOut<'a>,
    queued: QueuedView,
    refused: Vec<RefusedView>,
    budget: BudgetView,
}

/// A host's lanes (`true`) or its other peers, as [`HubPeerView`]s.
struct PeersOut<'a>(&'a HostEntry, bool);

impl Serialize for PeersOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Self(entry, lanes) = *self;
        s.collect_seq(
            entry
                .peers
                .values()
                .filter(|p| (p.kind == PeerKind::Lane) == lanes)
                .map(PeerOut),
        )
    }
}

/// [`HubPeerView`], borrowed.
struct PeerOut<'a>(&'a PeerRecord);

impl Serialize for PeerOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let p = self.0;
        let mut out = s.serialize_struct("HubPeerView", 4)?;
        out.serialize_field("id", &p.id)?;
        out.serialize_field("kind", &p.kind)?;
        out.serialize_field("product", &p.product)?;
        out.serialize_field("groups", &GroupsOut(p))?;
        out.end()
    }
}

/// A peer's groups, its private group first.
struct GroupsOut<'a>(&'a PeerRecord);

impl Serialize for GroupsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let p = self.0;
        let mut out = s.serialize_seq(Some(1 + p.groups.len()))?;
        out.serialize_element(&p.session_group())?;
        for group in &p.groups {
            out.serialize_element(group)?;
        }
        out.end()
    }
}

/// What a host's view holds besides its peers: small, so made whole.
struct HostFacts {
    state: &'static str,
    remote: Option<String>,
    rtt_ms: Option<f64>,
    queued: QueuedView,
    refused: Vec<RefusedView>,
    budget: BudgetView,
}

impl HostFacts {
    fn of(parts: &RosterParts<'_>, name: &HostName, entry: &HostEntry) -> Self {
        let link = parts.links.get(name);
        let depth = parts.depths.get(name).copied().unwrap_or_default();
        let refused = entry
            .refused
            .iter()
            .flat_map(|(peer, groups)| groups.iter().map(move |g| (peer, g)))
            .map(|(peer, group)| RefusedView {
                peer: peer.clone(),
                group: group.clone(),
                reason: parts
                    .roster
                    .policy()
                    .check(name, group)
                    .err()
                    .map_or_else(String::new, |e| e.to_string()),
            })
            .collect();
        Self {
            state: if entry.online { "online" } else { "offline" },
            remote: link.map(|l| l.remote.to_string()),
            rtt_ms: link.map(|l| (l.connection.rtt().as_secs_f64() * 1e6).round() / 1e3),
            queued: QueuedView {
                messages: depth.messages,
                bytes: depth.bytes,
            },
            refused,
            budget: parts.budgets.view(name),
        }
    }
}

/// Builds the view as a value: what [`write_roster`] writes, the tests'
/// oracle for it.
#[cfg(test)]
pub(crate) fn roster_value(parts: &RosterParts<'_>, generated_at: Timestamp) -> HubRosterReply {
    let hosts = parts
        .roster
        .hosts()
        .iter()
        .map(|(name, entry)| {
            let facts = HostFacts::of(parts, name, entry);
            let (lanes, peers): (Vec<_>, Vec<_>) = entry
                .peers
                .values()
                .map(|p| HubPeerView {
                    id: p.id.clone(),
                    kind: p.kind,
                    product: p.product.clone(),
                    groups: p.memberships().collect(),
                })
                .partition(|p| p.kind == PeerKind::Lane);
            HubHostView {
                host: name.clone(),
                state: facts.state.to_owned(),
                version: entry.version.clone(),
                last_seen: entry.last_seen,
                remote: facts.remote,
                rtt_ms: facts.rtt_ms,
                peers,
                lanes,
                queued: facts.queued,
                refused: facts.refused,
                budget: facts.budget,
            }
        })
        .collect();
    HubRosterReply {
        schema: HUB_ROSTER_SCHEMA.to_owned(),
        hub: parts.hub.to_owned(),
        generated_at,
        hosts,
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
