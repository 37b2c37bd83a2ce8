//! What the web roster shows (`GET /api/roster`, the `roster` event of
//! `GET /api/events`, schema `flotilla.hub-web.roster.v1`): hosts with their
//! link, last change, round-trip time, queue and link health over time;
//! peers by group; lanes.
//!
//! Owns the JSON shape. Pure: built from the operator's roster (the same
//! [`HubRosterReply`] as `hub roster --json`) and the [`HealthBook`]; must
//! not read the hub or any file.

use std::collections::BTreeMap;

use flotilla_actors::model::{PeerKind, Timestamp};
use flotilla_actors::names::{GroupName, PeerId};
use serde::Serialize;

use super::health::{HealthBook, Sample};
use crate::view::{HubRosterReply, QueuedView};

/// Schema id of [`WebSnapshot`].
pub const WEB_ROSTER_SCHEMA: &str = "flotilla.hub-web.roster.v1";

/// The whole page's data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebSnapshot {
    /// [`WEB_ROSTER_SCHEMA`].
    pub schema: &'static str,
    /// The hub's name (empty until the hub first answered).
    pub hub: String,
    /// When the hub made the roster this was built from.
    pub generated_at: Option<Timestamp>,
    /// Why the hub could not be read at the last try (the rest is from the
    /// last read that worked).
    pub error: Option<String>,
    /// Every host, by name.
    pub hosts: Vec<WebHost>,
    /// Every group with a peer in it, by name.
    pub groups: Vec<WebGroup>,
    /// Every lane, by id.
    pub lanes: Vec<WebLane>,
}

/// One host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebHost {
    /// Its name.
    pub host: String,
    /// `online` or `offline`.
    pub state: String,
    /// Its release.
    pub version: String,
    /// When it last linked, left or changed its roster.
    pub last_seen: Timestamp,
    /// The link's round-trip time in milliseconds, while online.
    pub rtt_ms: Option<f64>,
    /// What the hub holds for it.
    pub queued: QueuedView,
    /// How many peers (not lanes) it has.
    pub peers: usize,
    /// How many lanes it runs.
    pub lanes: usize,
    /// Its last link readings, oldest first.
    pub health: Vec<Sample>,
}

/// One group and its members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebGroup {
    /// The group.
    pub group: GroupName,
    /// Its peers and lanes, by id.
    pub peers: Vec<WebPeer>,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebPeer {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// What sort of peer.
    pub kind: PeerKind,
    /// Its host's state (`online` or `offline`).
    pub host_state: String,
}

/// One lane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebLane {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// The product behind it.
    pub product: Option<String>,
    /// Its groups, the private group first.
    pub groups: Vec<GroupName>,
    /// Its host's state.
    pub host_state: String,
}

impl WebSnapshot {
    /// Nothing read yet: the page says so.
    pub fn empty(error: Option<String>) -> Self {
        Self {
            schema: WEB_ROSTER_SCHEMA,
            hub: String::new(),
            generated_at: None,
            error,
            hosts: Vec::new(),
            groups: Vec::new(),
            lanes: Vec::new(),
        }
    }
}

/// Builds the page's data from the operator's roster and the health book.
/// Private groups (`session:...`) are left out of the groups: each has one
/// member, and the peers are listed under their shared groups.
pub fn build(roster: &HubRosterReply, health: &HealthBook) -> WebSnapshot {
    let mut hosts: Vec<WebHost> = roster
        .hosts
        .iter()
        .map(|h| WebHost {
            host: h.host.as_str().to_owned(),
            state: h.state.clone(),
            version: h.version.clone(),
            last_seen: h.last_seen,
            rtt_ms: h.rtt_ms,
            queued: h.queued,
            peers: h.peers.len(),
            lanes: h.lanes.len(),
            health: health.of(h.host.as_str()),
        })
        .collect();
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    let mut groups: BTreeMap<GroupName, Vec<WebPeer>> = BTreeMap::new();
    let mut lanes = Vec::new();
    for h in &roster.hosts {
        for p in h.peers.iter().chain(&h.lanes) {
            for g in &p.groups {
                if g.as_str()
                    .starts_with(flotilla_actors::names::SESSION_PREFIX)
                {
                    continue;
                }
                groups.entry(g.clone()).or_default().push(WebPeer {
                    id: p.id.clone(),
                    kind: p.kind,
                    host_state: h.state.clone(),
                });
            }
        }
        lanes.extend(h.lanes.iter().map(|l| WebLane {
            id: l.id.clone(),
            product: l.product.clone(),
            groups: l.groups.clone(),
            host_state: h.state.clone(),
        }));
    }
    lanes.sort_by_key(|l| l.id.to_string());
    WebSnapshot {
        schema: WEB_ROSTER_SCHEMA,
        hub: roster.hub.clone(),
        generated_at: Some(roster.generated_at),
        error: None,
        hosts,
        groups: groups
            .into_iter()
            .map(|(group, mut peers)| {
                peers.sort_by_key(|p| p.id.to_string());
                WebGroup { group, peers }
            })
            .collect(),
        lanes,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::view::{HUB_ROSTER_SCHEMA, HubHostView, HubPeerView};
    use flotilla_actors::names::HostName;

    pub(crate) fn host(name: &str, state: &str, rtt_ms: Option<f64>) -> HubHostView {
        HubHostView {
            host: HostName::new(name).unwrap_or_else(|e| panic!("{e}")),
            state: state.to_owned(),
            version: "0.1.0".to_owned(),
            last_seen: Timestamp(1_000),
            remote: None,
            rtt_ms,
            peers: Vec::new(),
            lanes: Vec::new(),
            queued: QueuedView {
                messages: 0,
                bytes: 0,
            },
            refused: Vec::new(),
            budget: Default::default(),
        }
    }

    pub(crate) fn roster(hosts: Vec<HubHostView>) -> HubRosterReply {
        HubRosterReply {
            schema: HUB_ROSTER_SCHEMA.to_owned(),
            hub: "hub.test".to_owned(),
            generated_at: Timestamp(2_000),
            hosts,
        }
    }

    fn peer(id: &str, kind: PeerKind, groups: &[&str]) -> HubPeerView {
        HubPeerView {
            id: PeerId::parse(id).unwrap_or_else(|e| panic!("{e}")),
            kind,
            product: (kind == PeerKind::Lane).then(|| "claude".to_owned()),
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).unwrap_or_else(|e| panic!("{e}")))
                .collect(),
        }
    }

    #[test]
    fn hosts_sorted_with_health_peers_by_shared_group_and_lanes() {
        let mut b = host("b", "offline", None);
        b.peers = vec![peer(
            "b/builder",
            PeerKind::Mailbox,
            &["session:b/builder", "proj"],
        )];
        b.queued.messages = 3;
        let mut a = host("a", "online", Some(0.25));
        a.peers = vec![peer(
            "a/lead",
            PeerKind::Mailbox,
            &["session:a/lead", "proj"],
        )];
        a.lanes = vec![peer(
            "a/fix",
            PeerKind::Lane,
            &["session:a/fix", "proj", "ops"],
        )];
        let r = roster(vec![b, a]);
        let mut book = HealthBook::default();
        book.record(&r);
        let s = build(&r, &book);
        assert_eq!(s.schema, WEB_ROSTER_SCHEMA);
        assert_eq!(s.hub, "hub.test");
        let names: Vec<_> = s.hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!((s.hosts[0].peers, s.hosts[0].lanes), (1, 1));
        assert_eq!(s.hosts[1].queued.messages, 3);
        assert_eq!(s.hosts[0].health.len(), 1);
        assert!(s.hosts[0].health[0].online && !s.hosts[1].health[0].online);
        let groups: Vec<_> = s.groups.iter().map(|g| g.group.as_str()).collect();
        assert_eq!(groups, ["ops", "proj"], "no private groups");
        let proj: Vec<_> = s.groups[1].peers.iter().map(|p| p.id.to_string()).collect();
        assert_eq!(proj, ["a/fix", "a/lead", "b/builder"]);
        assert_eq!(s.groups[1].peers[2].host_state, "offline");
        assert_eq!(s.lanes.len(), 1);
        assert_eq!(s.lanes[0].id.to_string(), "a/fix");
        assert_eq!(s.lanes[0].product.as_deref(), Some("claude"));
    }

    #[test]
    fn an_empty_snapshot_carries_the_error() {
        let s = WebSnapshot::empty(Some("no hub".into()));
        assert_eq!(s.error.as_deref(), Some("no hub"));
        assert!(s.hosts.is_empty() && s.generated_at.is_none());
    }
}
