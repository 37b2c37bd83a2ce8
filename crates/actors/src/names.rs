//! Names of things: hosts, peers, peer ids, groups and message ids.
//!
//! Owns the validation rules every other module relies on; a value of one of
//! these types is always valid, so code that holds one never re-checks it.
//! Must not touch IO.

use std::fmt;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

/// Why a name was refused. The message names the value, the rule it broke
/// and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// A peer name is empty, too long or has a forbidden character.
    #[error(
        "invalid peer name {0:?}: use 1 to 64 letters, digits, '.', '_' or '-' (for example \"reviewer-1\")"
    )]
    Peer(String),
    /// A host name is empty, too long or has a forbidden character.
    #[error("invalid host name {0:?}: use 1 to 48 letters, digits, '-' or '_'")]
    Host(String),
    /// A peer id is not `HOST/NAME`.
    #[error("invalid peer id {0:?}: expected HOST/NAME, for example \"laptop/reviewer\"")]
    PeerId(String),
    /// A group name is empty, too long or has a forbidden character.
    #[error(
        "invalid group {0:?}: use 1 to 192 bytes of letters, digits and '._:/-' (for example \"my-project\")"
    )]
    Group(String),
    /// An explicit group used the reserved `session:` prefix.
    #[error(
        "group {0:?} is reserved: groups starting with \"session:\" are the private groups of peers; pick another name"
    )]
    ReservedGroup(String),
    /// A message id is empty, too long or has a forbidden character.
    #[error("invalid message id {0:?}: use 1 to 64 letters, digits, '-' or '_'")]
    MessageId(String),
}

/// Longest peer name, in characters (all ASCII).
pub const MAX_PEER_NAME: usize = 64;
/// Longest host name, in characters (all ASCII).
pub const MAX_HOST_NAME: usize = 48;
/// Longest group name, in bytes.
pub const MAX_GROUP_NAME: usize = 192;
/// Longest message id.
pub const MAX_MESSAGE_ID: usize = 64;
/// Prefix of every peer's private group.
pub const SESSION_PREFIX: &str = "session:";

fn valid(s: &str, max: usize, extra: &str) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

macro_rules! string_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(CompactString);

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl $name {
            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(NameVisitor(Self::new))
            }
        }
    };
}

string_newtype!(
    /// A host's name: letters, digits, `-` and `_`, at most 48 characters.
    HostName
);
string_newtype!(
    /// A peer's name on its host: letters, digits, `.`, `_` and `-`, at most 64.
    PeerName
);
string_newtype!(
    /// A group: letters, digits and `._:/-`, at most 192 bytes.
    GroupName
);
string_newtype!(
    /// A message's id, chosen by its sender so that retries are recognised.
    MessageId
);

impl HostName {
    /// Checks a host name.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if valid(s, MAX_HOST_NAME, "-_") {
            Ok(Self(s.into()))
        } else {
            Err(NameError::Host(s.to_owned()))
        }
    }

    /// Cleans any text (a machine's hostname) into a valid host name: other
    /// characters become `-`, the result is cut to 48 characters, and an
    /// empty result becomes `host`.
    pub fn sanitize(raw: &str) -> Self {
        let first_label = raw.split('.').next().unwrap_or_default();
        let cleaned: String = first_label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(MAX_HOST_NAME)
            .collect();
        let trimmed = cleaned.trim_matches('-');
        if trimmed.is_empty() {
            Self("host".into())
        } else {
            Self(trimmed.into())
        }
    }
}

impl PeerName {
    /// Checks a peer name.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if valid(s, MAX_PEER_NAME, "._-") && s != "." && s != ".." {
            Ok(Self(s.into()))
        } else {
            Err(NameError::Peer(s.to_owned()))
        }
    }
}

impl GroupName {
    /// Checks a group name; `session:` groups are allowed here (they exist),
    /// use [`GroupName::explicit`] for a group a user asks to join.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if valid(s, MAX_GROUP_NAME, "._:/-") {
            Ok(Self(s.into()))
        } else {
            Err(NameError::Group(s.to_owned()))
        }
    }

    /// Checks a group a user names explicitly: it may not be a private group.
    pub fn explicit(s: &str) -> Result<Self, NameError> {
        let group = Self::new(s)?;
        if group.is_session() {
            return Err(NameError::ReservedGroup(s.to_owned()));
        }
        Ok(group)
    }

    /// The private group of a peer: `session:HOST/NAME`.
    pub fn session(peer: &PeerId) -> Self {
        Self(compact_str::format_compact!("{SESSION_PREFIX}{peer}"))
    }

    /// Whether this is `peer`'s private group (without building its name).
    pub fn is_session_of(&self, peer: &PeerId) -> bool {
        self.0
            .strip_prefix(SESSION_PREFIX)
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(host, name)| host == peer.host.as_str() && name == peer.name.as_str())
    }

    /// Whether this is a peer's private group.
    pub fn is_session(&self) -> bool {
        self.0.starts_with(SESSION_PREFIX)
    }

    /// The peer whose private group this is; `None` for an ordinary group
    /// and for a `session:` group that names no valid peer.
    pub fn session_owner(&self) -> Option<PeerId> {
        PeerId::parse(self.0.strip_prefix(SESSION_PREFIX)?).ok()
    }
}

impl MessageId {
    /// Checks a message id.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if valid(s, MAX_MESSAGE_ID, "-_") {
            Ok(Self(s.into()))
        } else {
            Err(NameError::MessageId(s.to_owned()))
        }
    }

    /// A fresh, time-ordered id.
    pub fn generate() -> Self {
        let mut id = [0; uuid::fmt::Simple::LENGTH];
        Self(CompactString::from(
            uuid::Uuid::now_v7().simple().encode_lower(&mut id) as &str,
        ))
    }
}

/// A peer's identity across the federation: `HOST/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerId {
    /// The host the peer lives on.
    pub host: HostName,
    /// The peer's name on that host.
    pub name: PeerName,
}

impl PeerId {
    /// Joins a host and a name.
    pub fn new(host: HostName, name: PeerName) -> Self {
        Self { host, name }
    }

    /// An id that sorts before every peer of `host` and after every peer
    /// of the hosts before it (its name is empty, which no peer's is): the
    /// start of `host`'s peers in a map ordered by id.
    pub(crate) fn before_all_of(host: &HostName) -> Self {
        Self {
            host: host.clone(),
            name: PeerName(CompactString::default()),
        }
    }

    /// Parses `HOST/NAME`.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        let (host, name) = s
            .split_once('/')
            .ok_or_else(|| NameError::PeerId(s.to_owned()))?;
        let host = HostName::new(host).map_err(|_| NameError::PeerId(s.to_owned()))?;
        let name = PeerName::new(name).map_err(|_| NameError::PeerId(s.to_owned()))?;
        Ok(Self { host, name })
    }
}

impl fmt::Display for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.host, self.name)
    }
}

impl std::str::FromStr for PeerId {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, NameError> {
        Self::parse(s)
    }
}

impl Serialize for PeerId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PeerId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(NameVisitor(Self::parse))
    }
}

/// Reads a name from a string, borrowed where the decoder can lend it, so
/// that a name decoded is checked without a copy of its text.
struct NameVisitor<T>(fn(&str) -> Result<T, NameError>);

impl<T> serde::de::Visitor<'_> for NameVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a name")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<T, E> {
        (self.0)(s).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_names_follow_the_rules() {
        assert!(PeerName::new("reviewer-1.a_b").is_ok());
        assert!(PeerName::new(&"a".repeat(64)).is_ok());
        assert!(PeerName::new(&"a".repeat(65)).is_err());
        for bad in ["", "a b", "a/b", "é", ".", "..", "a:b"] {
            assert!(PeerName::new(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn group_names_follow_the_rules() {
        assert!(GroupName::explicit("team/a:b.c-d_e").is_ok());
        assert!(GroupName::explicit(&"g".repeat(192)).is_ok());
        assert!(GroupName::explicit(&"g".repeat(193)).is_err());
        assert!(matches!(
            GroupName::explicit("session:x/y"),
            Err(NameError::ReservedGroup(_))
        ));
        assert!(GroupName::new("session:x/y").is_ok());
        assert!(GroupName::explicit("a b").is_err());
    }

    #[test]
    fn hostnames_are_cleaned() {
        assert_eq!(HostName::sanitize("my laptop.local").as_str(), "my-laptop");
        assert_eq!(HostName::sanitize("...").as_str(), "host");
        assert_eq!(HostName::sanitize(&"x".repeat(80)).as_str().len(), 48);
        assert_eq!(HostName::sanitize("büro-pc").as_str(), "b-ro-pc");
    }

    #[test]
    fn peer_ids_round_trip() {
        let id = PeerId::parse("laptop/lead").expect("valid");
        assert_eq!(id.to_string(), "laptop/lead");
        assert_eq!(GroupName::session(&id).as_str(), "session:laptop/lead");
        assert_eq!(GroupName::session(&id).session_owner(), Some(id.clone()));
        assert_eq!(GroupName::new("proj").expect("g").session_owner(), None);
        assert_eq!(
            GroupName::new("session:junk").expect("g").session_owner(),
            None
        );
        assert!(PeerId::parse("laptop").is_err());
        assert!(PeerId::parse("lap top/lead").is_err());
        let json = serde_json::to_string(&id).expect("serialize");
        assert_eq!(json, "\"laptop/lead\"");
        assert!(serde_json::from_str::<PeerId>("\"bad\"").is_err());
    }

    #[test]
    fn deserialization_validates() {
        assert!(serde_json::from_str::<PeerName>("\"a b\"").is_err());
        assert!(serde_json::from_str::<GroupName>("\"ok\"").is_ok());
    }

    #[test]
    fn a_name_is_read_borrowed_unescaped_or_owned_and_checked_each_way() {
        // Borrowed from the input, unescaped into a buffer, and owned (a
        // `Value`): the three ways a decoder hands a string over.
        let lent: HostName = serde_json::from_str("\"laptop\"").expect("lent");
        let unescaped: HostName = serde_json::from_str("\"lap\\u0074op\"").expect("escaped");
        let owned: HostName = serde_json::from_value(serde_json::json!("laptop")).expect("owned");
        assert_eq!(lent, unescaped);
        assert_eq!(lent, owned);
        let refused = serde_json::from_str::<HostName>("\"lap\\u0020top\"").expect_err("space");
        assert!(refused.to_string().contains("lap top"), "{refused}");
        let id: PeerId = serde_json::from_value(serde_json::json!("laptop/lead")).expect("id");
        assert_eq!(id.to_string(), "laptop/lead");
        assert!(serde_json::from_value::<PeerId>(serde_json::json!(5)).is_err());
    }

    #[test]
    fn a_long_name_is_kept_whole_and_encoded_as_a_short_one() {
        // Past 24 bytes a name no longer fits inline: the same text, the
        // same bytes on the wire.
        let long = "a-host-name-longer-than-twenty-four-bytes";
        let name = HostName::new(long).expect("long");
        assert_eq!(name.as_str(), long);
        let config = bincode::config::standard().with_limit::<1024>();
        let bytes = bincode::serde::encode_to_vec(&name, config).expect("encode");
        let text = bincode::serde::encode_to_vec(long, config).expect("encode text");
        assert_eq!(bytes, text);
        let (back, _): (HostName, usize) =
            bincode::serde::decode_from_slice(&bytes, config).expect("decode");
        assert_eq!(back, name);
    }
}
