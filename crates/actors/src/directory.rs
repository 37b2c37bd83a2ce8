//! Who can see and message whom: the directory of peers and the pure rules of
//! visibility, target resolution and admission.
//!
//! The host's `Registry` publishes a [`Directory`] snapshot; the `Router` and
//! (later) the hub decide with it. No IO, no clock, no actors here.

use std::collections::BTreeMap;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::model::PeerRecord;
use crate::names::{GroupName, HostName, PeerId};

/// A snapshot of the peers a host knows, keyed by id.
#[derive(Debug, Clone, Default)]
pub struct Directory {
    peers: BTreeMap<PeerId, PeerRecord>,
    /// The ids with each name, in id order: a target given by name is
    /// found without looking at every peer of the federation.
    by_name: BTreeMap<CompactString, Vec<PeerId>>,
}

/// Why one target of a send was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum TargetProblem {
    /// No peer has that id or name.
    Unknown {
        /// The target as given.
        target: String,
    },
    /// The peer exists but shares no group with the sender.
    NotVisible {
        /// The target as given.
        target: String,
    },
    /// Several visible peers have that name.
    Ambiguous {
        /// The target as given.
        target: String,
        /// The ids it could mean.
        candidates: Vec<PeerId>,
    },
    /// The sender named itself.
    IsSender {
        /// The target as given.
        target: String,
    },
}

impl std::fmt::Display for TargetProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unknown { target } => write!(f, "{target}: no such peer"),
            Self::NotVisible { target } => {
                write!(f, "{target}: shares no group with the sender")
            }
            Self::Ambiguous { target, candidates } => {
                let ids: Vec<String> = candidates.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "{target}: ambiguous, use one of the ids {}",
                    ids.join(", ")
                )
            }
            Self::IsSender { target } => write!(f, "{target}: is the sender itself"),
        }
    }
}

/// Why a broadcast was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{sender} is not a member of group {group}")]
pub struct NotMember {
    /// The would-be sender.
    pub sender: PeerId,
    /// The group it is not in.
    pub group: GroupName,
}

impl Directory {
    /// Builds a directory from records.
    pub fn new(peers: impl IntoIterator<Item = PeerRecord>) -> Self {
        let peers: BTreeMap<PeerId, PeerRecord> =
            peers.into_iter().map(|p| (p.id.clone(), p)).collect();
        let mut by_name: BTreeMap<CompactString, Vec<PeerId>> = BTreeMap::new();
        for id in peers.keys() {
            let name = CompactString::from(id.name.as_str());
            by_name.entry(name).or_default().push(id.clone());
        }
        Self { peers, by_name }
    }

    /// Looks a peer up by id.
    pub fn get(&self, id: &PeerId) -> Option<&PeerRecord> {
        self.peers.get(id)
    }

    /// Every peer, ordered by id.
    pub fn iter(&self) -> impl Iterator<Item = &PeerRecord> {
        self.peers.values()
    }

    /// The peers of `host`, ordered by id: found where they start, not by
    /// looking at every peer of the federation.
    pub fn of_host<'a>(&'a self, host: &'a HostName) -> impl Iterator<Item = &'a PeerRecord> {
        self.peers
            .range(PeerId::before_all_of(host)..)
            .take_while(move |(id, _)| id.host == *host)
            .map(|(_, p)| p)
    }

    /// How many peers there are.
    pub fn len(&self) -> usize {
        self.peers.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.peers.is_empty()
    }

    /// The peers, other than `viewer` itself, that share a group with it.
    pub fn visible_to<'a>(
        &'a self,
        viewer: &'a PeerRecord,
    ) -> impl Iterator<Item = &'a PeerRecord> {
        self.peers
            .values()
            .filter(move |p| p.id != viewer.id && p.shares_group_with(viewer))
    }

    /// Resolves one target for `sender`: an exact id first, then a name that
    /// is unique among the peers the sender can see.
    pub fn resolve(&self, sender: &PeerRecord, target: &str) -> Result<PeerId, TargetProblem> {
        let target_owned = || target.to_owned();
        if let Ok(id) = PeerId::parse(target) {
            return match self.peers.get(&id) {
                None => Err(TargetProblem::Unknown {
                    target: target_owned(),
                }),
                Some(p) => self.check_visible(sender, p, target),
            };
        }
        let named: Vec<&PeerRecord> = self
            .by_name
            .get(target)
            .into_iter()
            .flatten()
            .filter_map(|id| self.peers.get(id))
            .collect();
        let visible: Vec<&PeerRecord> = named
            .iter()
            .copied()
            .filter(|p| p.id == sender.id || p.shares_group_with(sender))
            .collect();
        match (named.len(), visible.as_slice()) {
            (0, _) => Err(TargetProblem::Unknown {
                target: target_owned(),
            }),
            (_, []) => Err(TargetProblem::NotVisible {
                target: target_owned(),
            }),
            (_, [one]) => self.check_visible(sender, one, target),
            (_, many) => Err(TargetProblem::Ambiguous {
                target: target_owned(),
                candidates: many.iter().map(|p| p.id.clone()).collect(),
            }),
        }
    }

    fn check_visible(
        &self,
        sender: &PeerRecord,
        peer: &PeerRecord,
        target: &str,
    ) -> Result<PeerId, TargetProblem> {
        if peer.id == sender.id {
            Err(TargetProblem::IsSender {
                target: target.to_owned(),
            })
        } else if peer.shares_group_with(sender) {
            Ok(peer.id.clone())
        } else {
            Err(TargetProblem::NotVisible {
                target: target.to_owned(),
            })
        }
    }

    /// Atomic admission of a send: every target resolves, or the error lists
    /// every bad one. Duplicate targets collapse into one recipient.
    pub fn admit_send(
        &self,
        sender: &PeerRecord,
        targets: &[String],
    ) -> Result<Vec<PeerId>, Vec<TargetProblem>> {
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        for target in targets {
            match self.resolve(sender, target) {
                Ok(id) if !ok.contains(&id) => ok.push(id),
                Ok(_) => {}
                Err(problem) => bad.push(problem),
            }
        }
        if bad.is_empty() { Ok(ok) } else { Err(bad) }
    }

    /// Admission of a broadcast: the sender must be in the group; the
    /// recipients are its other members.
    pub fn admit_broadcast(
        &self,
        sender: &PeerRecord,
        group: &GroupName,
    ) -> Result<Vec<PeerId>, NotMember> {
        if !sender.is_member(group) {
            return Err(NotMember {
                sender: sender.id.clone(),
                group: group.clone(),
            });
        }
        Ok(self
            .peers
            .values()
            .filter(|p| p.id != sender.id && p.is_member(group))
            .map(|p| p.id.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PeerKind, Timestamp};

    fn peer(id: &str, groups: &[&str]) -> PeerRecord {
        PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("group"))
                .collect(),
            joined_at: Timestamp(0),
        }
    }

    #[test]
    fn the_peers_of_a_host_are_its_own_and_all_of_them() {
        let hosts = [
            "la", "lap", "lap-2", "lap_2", "laptop", "laptop-x", "m", "0",
        ];
        let names = ["-", ".a", "0", "A", "_", "a", "z", "zz"];
        let dir = Directory::new(
            hosts
                .iter()
                .filter(|h| **h != "m")
                .flat_map(|h| names.iter().map(move |n| peer(&format!("{h}/{n}"), &[]))),
        );
        for host in hosts.iter().chain(&["k", "zzz"]) {
            let host = HostName::new(host).expect("host");
            let found: Vec<&PeerId> = dir.of_host(&host).map(|p| &p.id).collect();
            let every: Vec<&PeerId> = dir
                .iter()
                .filter(|p| p.id.host == host)
                .map(|p| &p.id)
                .collect();
            assert_eq!(found, every, "{host}");
        }
        let laptop = HostName::new("laptop").expect("host");
        assert_eq!(dir.of_host(&laptop).count(), names.len());
    }

    fn dir() -> Directory {
        Directory::new([
            peer("h/lead", &["proj"]),
            peer("h/reviewer", &["proj"]),
            peer("w/reviewer", &["proj"]),
            peer("h/loner", &["other"]),
            peer("h/worker", &["session:h/lead"]),
        ])
    }

    #[test]
    fn visibility_follows_groups() {
        let d = dir();
        let lead = d.get(&PeerId::parse("h/lead").expect("id")).expect("lead");
        let seen: Vec<String> = d.visible_to(lead).map(|p| p.id.to_string()).collect();
        assert_eq!(seen, ["h/reviewer", "h/worker", "w/reviewer"]);
    }

    #[test]
    fn resolution_prefers_ids_and_reports_ambiguity() {
        let d = dir();
        let lead = d
            .get(&PeerId::parse("h/lead").expect("id"))
            .expect("lead")
            .clone();
        assert_eq!(
            d.resolve(&lead, "w/reviewer").expect("id").to_string(),
            "w/reviewer"
        );
        assert!(matches!(
            d.resolve(&lead, "reviewer"),
            Err(TargetProblem::Ambiguous { ref candidates, .. }) if candidates.len() == 2
        ));
        assert_eq!(
            d.resolve(&lead, "worker").expect("name").to_string(),
            "h/worker"
        );
        assert!(matches!(
            d.resolve(&lead, "loner"),
            Err(TargetProblem::NotVisible { .. })
        ));
        assert!(matches!(
            d.resolve(&lead, "ghost"),
            Err(TargetProblem::Unknown { .. })
        ));
        assert!(matches!(
            d.resolve(&lead, "lead"),
            Err(TargetProblem::IsSender { .. })
        ));
    }

    #[test]
    fn admission_is_all_or_nothing() {
        let d = dir();
        let lead = d
            .get(&PeerId::parse("h/lead").expect("id"))
            .expect("lead")
            .clone();
        let targets = ["worker".to_owned(), "ghost".to_owned(), "loner".to_owned()];
        let bad = d.admit_send(&lead, &targets).expect_err("must refuse");
        assert_eq!(bad.len(), 2);
        let ok = d
            .admit_send(&lead, &["worker".into(), "h/worker".into()])
            .expect("admitted");
        assert_eq!(ok.len(), 1, "duplicates collapse");
    }

    #[test]
    fn broadcast_needs_membership() {
        let d = dir();
        let lead = d
            .get(&PeerId::parse("h/lead").expect("id"))
            .expect("lead")
            .clone();
        let proj = GroupName::new("proj").expect("g");
        assert_eq!(d.admit_broadcast(&lead, &proj).expect("member").len(), 2);
        let other = GroupName::new("other").expect("g");
        assert!(d.admit_broadcast(&lead, &other).is_err());
    }
}
