//! The records the host keeps and the protocol carries: peers, messages and
//! timestamps.
//!
//! Plain data with serde; no IO and no clock (callers pass `now`).

use std::collections::BTreeSet;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::names::{GroupName, MessageId, PeerId};

/// Milliseconds since the Unix epoch. In JSON it is an RFC 3339 string
/// (`2026-11-30T06:00:00.000Z`); in binary encodings a plain integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// The current wall-clock time.
    pub fn now() -> Self {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Self(ms)
    }

    /// Milliseconds since the epoch.
    pub fn millis(self) -> u64 {
        self.0
    }

    /// Time elapsed from `self` to `later`, zero if `later` is earlier.
    pub fn until(self, later: Timestamp) -> Duration {
        Duration::from_millis(later.0.saturating_sub(self.0))
    }

    fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}",
            humantime::format_rfc3339_millis(self.to_system_time())
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let s = String::deserialize(d)?;
            let t = humantime::parse_rfc3339_weak(&s).map_err(serde::de::Error::custom)?;
            let ms = t
                .duration_since(UNIX_EPOCH)
                .map_err(serde::de::Error::custom)?
                .as_millis() as u64;
            Ok(Self(ms))
        } else {
            Ok(Self(u64::deserialize(d)?))
        }
    }
}

/// What sort of participant a peer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PeerKind {
    /// A mailbox: a person at a shell or a script, reading with `inbox`.
    Mailbox,
    /// A supervised worker session run by the daemon.
    Lane,
    /// An interactive agent session (room for later work).
    Session,
}

impl fmt::Display for PeerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Mailbox => "mailbox",
            Self::Lane => "lane",
            Self::Session => "session",
        })
    }
}

/// A registered peer, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PeerRecord {
    /// `HOST/NAME`.
    pub id: PeerId,
    /// What sort of peer this is.
    pub kind: PeerKind,
    /// The product behind it (`claude`, `codex`, `shell`...), free text.
    pub product: Option<String>,
    /// Groups joined besides the peer's own private group.
    pub groups: BTreeSet<GroupName>,
    /// When it joined.
    pub joined_at: Timestamp,
}

impl PeerRecord {
    /// The peer's private group.
    pub fn session_group(&self) -> GroupName {
        GroupName::session(&self.id)
    }

    /// Every group the peer is in, its private group first.
    pub fn memberships(&self) -> impl Iterator<Item = GroupName> + '_ {
        std::iter::once(self.session_group()).chain(self.groups.iter().cloned())
    }

    /// Whether the peer is in `group` (its private group included).
    pub fn is_member(&self, group: &GroupName) -> bool {
        self.groups.contains(group) || group.is_session_of(&self.id)
    }

    /// Whether two peers share at least one group: the same as asking
    /// whether `other` is in one of `self`'s [`memberships`], without
    /// building the private groups' names (the hub asks this for every
    /// pair of peers a roster change touches).
    ///
    /// [`memberships`]: PeerRecord::memberships
    pub fn shares_group_with(&self, other: &PeerRecord) -> bool {
        self.id == other.id
            || self
                .groups
                .iter()
                .any(|g| other.groups.contains(g) || g.is_session_of(&other.id))
            || other.groups.iter().any(|g| g.is_session_of(&self.id))
    }
}

/// A message, as stored once and handed to each recipient.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// Chosen by the sender; a retry with the same id is the same message.
    pub id: MessageId,
    /// The verified sender.
    pub from: PeerId,
    /// Every recipient.
    pub to: Vec<PeerId>,
    /// The group, for a broadcast.
    pub group: Option<GroupName>,
    /// A one-line summary.
    pub summary: Option<String>,
    /// The text.
    pub body: String,
    /// When the host accepted it.
    pub sent_at: Timestamp,
    /// The sender's sequence number: order per sender.
    pub seq: u64,
    /// The message this one answers, for a reply.
    pub in_reply_to: Option<MessageId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_in_json_and_integers_in_bincode() {
        let t = Timestamp(1_700_000_000_123);
        let json = serde_json::to_string(&t).expect("json");
        assert_eq!(json, "\"2023-11-14T22:13:20.123Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).expect("back"), t);
        let bytes = crate::codec::encode(&t).expect("encode");
        assert_eq!(
            crate::codec::decode::<Timestamp>(&bytes, 16).expect("decode"),
            t
        );
    }

    #[test]
    fn private_groups_are_implicit() {
        let a = PeerRecord {
            id: PeerId::parse("h/a").expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: BTreeSet::new(),
            joined_at: Timestamp(0),
        };
        let mut b = a.clone();
        b.id = PeerId::parse("h/b").expect("id");
        assert!(!a.shares_group_with(&b));
        b.groups.insert(a.session_group());
        assert!(a.shares_group_with(&b));
        assert!(b.shares_group_with(&a));
    }

    /// The allocation-free test agrees with its definition over every pair
    /// of a set of peers with shared, private and granted memberships.
    #[test]
    fn sharing_a_group_agrees_with_the_memberships() {
        let peer = |id: &str, groups: &[&str]| PeerRecord {
            id: PeerId::parse(id).expect("id"),
            kind: PeerKind::Mailbox,
            product: None,
            groups: groups
                .iter()
                .map(|g| GroupName::new(g).expect("group"))
                .collect(),
            joined_at: Timestamp(0),
        };
        let peers = [
            peer("h/a", &["x"]),
            peer("h/b", &["y"]),
            peer("w/a", &["x", "session:h/b"]),
            peer("w/c", &["session:h/ab"]),
            peer("h/ab", &[]),
            peer("w/d", &["session:w/d", "z"]),
            peer("w/e", &["z", "session:hx/a"]),
        ];
        for a in &peers {
            for b in &peers {
                let defined = a.memberships().any(|g| b.memberships().any(|h| g == h));
                assert_eq!(a.shares_group_with(b), defined, "{} and {}", a.id, b.id);
                for g in b.memberships() {
                    assert!(b.is_member(&g));
                }
            }
        }
    }
}
