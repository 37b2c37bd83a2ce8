//! The frames of the hub link.
//!
//! Owns their shape. Frames are encoded with bincode (not self-describing),
//! so a variant's position is its tag: the first three variants
//! (`Hello`, `HelloAck`, `HelloRefused`) and their fields are frozen for
//! every protocol version, so that a host and a hub of different releases
//! can always tell each other which version they speak. Later variants may
//! change with [`PROTOCOL_VERSION`]. Must not touch IO.

use serde::{Deserialize, Serialize};

use crate::model::{Message, PeerRecord};
use crate::names::{HostName, PeerId};

/// The federation protocol version this build speaks. A hub refuses a host
/// that speaks another.
pub const PROTOCOL_VERSION: u32 = 1;

/// One frame on the hub link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// Host to hub, first frame: who the host says it is and what it speaks.
    /// Frozen.
    Hello(Hello),
    /// Hub to host: the link is up. Frozen.
    HelloAck(HelloAck),
    /// Hub to host: the link is refused, and why; the hub then closes.
    /// Frozen.
    HelloRefused(HelloRefused),
    /// Either way: are you there? Answered with the same nonce.
    Ping {
        /// Echoed in the [`Frame::Pong`].
        nonce: u64,
    },
    /// The answer to a [`Frame::Ping`].
    Pong {
        /// The ping's nonce.
        nonce: u64,
    },
    /// Peers joined, changed or left on a host (the roster work fills this
    /// in).
    RosterDelta(RosterDelta),
    /// A message for peers on the receiving side (the routing work fills
    /// this in).
    Deliver(Deliver),
}

impl Frame {
    /// The variant's name, for logs and errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Hello(_) => "Hello",
            Self::HelloAck(_) => "HelloAck",
            Self::HelloRefused(_) => "HelloRefused",
            Self::Ping { .. } => "Ping",
            Self::Pong { .. } => "Pong",
            Self::RosterDelta(_) => "RosterDelta",
            Self::Deliver(_) => "Deliver",
        }
    }
}

/// The host's opening frame. Frozen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The federation protocol version the host speaks.
    pub protocol: u32,
    /// The host's name; it must equal the name in its certificate.
    pub host: HostName,
    /// The host's flotilla release, for the operator.
    pub version: String,
    /// Optional features the host supports.
    pub capabilities: Vec<String>,
}

impl Hello {
    /// A hello for this build's protocol and release.
    pub fn new(host: HostName) -> Self {
        Self {
            protocol: PROTOCOL_VERSION,
            host,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            capabilities: Vec::new(),
        }
    }
}

/// The hub's acceptance. Frozen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloAck {
    /// The hub's name (the name in its certificate).
    pub hub: String,
    /// The protocol version the link will speak.
    pub protocol: u32,
}

/// The hub's refusal. Frozen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloRefused {
    /// What kind of refusal, for the host to act on.
    pub code: RefusalCode,
    /// The hub's explanation, for a person.
    pub reason: String,
}

/// Why a hub refused a hello. Frozen: new codes go at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefusalCode {
    /// The protocol versions differ.
    ProtocolVersion {
        /// The version the hub speaks.
        hub: u32,
    },
    /// The hello named another host than the certificate.
    Identity,
    /// The first frame was not a hello, or something else was wrong.
    Other,
}

/// Changes to a host's roster. Placeholder shape: the roster work decides
/// the final one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterDelta {
    /// The sender's roster sequence after this change, to detect gaps.
    pub seq: u64,
    /// Peers added or changed.
    pub upserts: Vec<PeerRecord>,
    /// Peers gone.
    pub removed: Vec<PeerId>,
}

/// A message routed over the link. Placeholder shape: the routing work
/// decides the final one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deliver {
    /// The message, as its sending host stored it.
    pub message: Message,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;

    fn hello() -> Hello {
        Hello::new(HostName::new("laptop").expect("host"))
    }

    #[test]
    fn frames_round_trip_through_the_codec() {
        let frames = [
            Frame::Hello(hello()),
            Frame::HelloAck(HelloAck {
                hub: "hub".into(),
                protocol: 1,
            }),
            Frame::Ping { nonce: 7 },
            Frame::RosterDelta(RosterDelta {
                seq: 1,
                upserts: Vec::new(),
                removed: vec![PeerId::parse("laptop/a").expect("id")],
            }),
        ];
        for frame in frames {
            let bytes = codec::encode(&frame).expect("encode");
            assert_eq!(codec::decode::<Frame>(&bytes, 1024).expect("decode"), frame);
        }
    }

    #[test]
    fn the_handshake_frames_keep_their_tags() {
        // Frozen across protocol versions: a hub must be able to read an
        // older or newer host's hello, and the host the hub's answer.
        let tag = |f: &Frame| codec::encode(f).expect("encode")[0];
        assert_eq!(tag(&Frame::Hello(hello())), 0);
        let ack = HelloAck {
            hub: "h".into(),
            protocol: 1,
        };
        assert_eq!(tag(&Frame::HelloAck(ack)), 1);
        let refused = HelloRefused {
            code: RefusalCode::Other,
            reason: String::new(),
        };
        assert_eq!(tag(&Frame::HelloRefused(refused)), 2);
    }

    #[test]
    fn a_hello_with_an_invalid_host_name_does_not_decode() {
        let mut bad = codec::encode(&Frame::Hello(hello())).expect("encode");
        let at = bad
            .windows(6)
            .position(|w| w == b"laptop")
            .expect("name in the bytes");
        bad[at] = b' ';
        assert!(codec::decode::<Frame>(&bad, 1024).is_err());
    }
}
