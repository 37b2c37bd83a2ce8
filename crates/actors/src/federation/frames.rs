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
use crate::names::{GroupName, HostName, MessageId, PeerId};

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
    /// Host to hub: this host's peers changed (`reset`: the whole set
    /// follows, replacing what the hub knew). Hub to host: the peers of
    /// other hosts that this host may now see.
    RosterDelta(RosterDelta),
    /// Hub to host: a message for peers of the receiving host, to store and
    /// then acknowledge with [`Frame::Delivered`].
    Deliver(Deliver),
    /// Host to hub: a message from one of this host's peers for peers of
    /// other hosts; answered with [`Frame::Forwarded`] once the hub has it
    /// on disk (or refuses it).
    Forward(Forward),
    /// Hub to host: the verdict on a [`Frame::Forward`].
    Forwarded(Forwarded),
    /// Host to hub: a [`Frame::Deliver`] is on disk at the host.
    Delivered(Delivered),
    /// Hub to host: a forwarded message reached its recipients' host (or
    /// could not).
    Receipt(Receipt),
    /// Host to hub: the host received receipts up to and including `seq`;
    /// the hub may forget them.
    ReceiptAck {
        /// The last receipt sequence number received.
        seq: u64,
    },
    /// A lane request for another host (host to hub), relayed by the hub
    /// to that host with the requester's verified groups.
    LaneCall(LaneCall),
    /// The answer to a [`Frame::LaneCall`], relayed back by the hub.
    LaneAnswer(LaneAnswer),
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
            Self::Forward(_) => "Forward",
            Self::Forwarded(_) => "Forwarded",
            Self::Delivered(_) => "Delivered",
            Self::Receipt(_) => "Receipt",
            Self::ReceiptAck { .. } => "ReceiptAck",
            Self::LaneCall(_) => "LaneCall",
            Self::LaneAnswer(_) => "LaneAnswer",
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

/// A change of roster. Host to hub: the sender's own peers. Hub to host:
/// the remote peers the receiver may see, with their hosts' link state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterDelta {
    /// Whether `upserts` is the whole set (everything else is gone).
    pub reset: bool,
    /// Peers added or changed.
    pub upserts: Vec<RosterPeer>,
    /// Peers gone.
    pub removed: Vec<PeerId>,
}

/// One peer in a roster exchange.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RosterPeer {
    /// The peer as its host keeps it.
    pub record: PeerRecord,
    /// Hub to host: whether the peer's host is linked now (its messages
    /// are queued at the hub otherwise). Host to hub: always true.
    pub online: bool,
}

/// A message for peers of the receiving host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deliver {
    /// The hub's sequence number of this delivery, echoed in
    /// [`Delivered`]; increasing per receiving host.
    pub seq: u64,
    /// The message as its sending host accepted it.
    pub message: Message,
    /// The recipients on the receiving host.
    pub to: Vec<PeerId>,
}

/// A message for peers of other hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    /// The message as this host accepted it (`from` is one of its peers).
    pub message: Message,
    /// The recipients on other hosts.
    pub to: Vec<PeerId>,
}

/// The hub's verdict on a forward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forwarded {
    /// The message.
    pub id: MessageId,
    /// What became of it.
    pub outcome: ForwardOutcome,
}

/// What the hub did with a forward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForwardOutcome {
    /// On disk at the hub, queued for each recipient's host (also when it
    /// was queued before: retries are never stored twice).
    Queued,
    /// Refused as a whole; nothing was queued.
    Refused {
        /// What kind of refusal.
        code: ForwardRefusal,
        /// For a person: what was wrong and what to do.
        reason: String,
    },
}

/// Why the hub refused a forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForwardRefusal {
    /// The source peer does not belong to the sending host.
    NotOwner,
    /// A recipient is unknown to the hub.
    UnknownPeer,
    /// A recipient shares no group with the source (or is not in the
    /// broadcast group).
    OutOfScope,
    /// A recipient host's queue at the hub is full.
    QuotaExceeded,
    /// The message is malformed (no recipients, a recipient on the sending
    /// host).
    Malformed,
    /// The hub could not store it; retry later.
    Unavailable,
}

impl ForwardRefusal {
    /// Whether the refusal is for now only: the sending host keeps the
    /// message and sends it again (and the hub holds the sender's later
    /// messages meanwhile). Every other refusal is final.
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Unavailable)
    }
}

/// A delivery stored by the receiving host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    /// The [`Deliver::seq`] acknowledged.
    pub seq: u64,
    /// The message.
    pub id: MessageId,
    /// Recipients that were no longer peers of the host (the rest got it).
    pub gone: Vec<PeerId>,
}

/// What became of a forwarded message at one recipient host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The hub's sequence number of receipts for the receiving host.
    pub seq: u64,
    /// The message.
    pub id: MessageId,
    /// The recipients it concerns.
    pub to: Vec<PeerId>,
    /// Whether they got it.
    pub state: ReceiptState,
}

/// The end state of a message at a recipient.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReceiptState {
    /// In the recipients' inboxes.
    Delivered,
    /// Not delivered, and never will be.
    Dropped {
        /// Why (expired at the hub, the peer left).
        reason: String,
    },
}

/// A lane request across hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneCall {
    /// Chosen by the asking host; its answer carries it back.
    pub call: u64,
    /// Host to hub: the host asked. Hub to host: the host asking (the name
    /// in its certificate).
    pub host: HostName,
    /// The peer on the asking host on whose behalf the lane is placed or
    /// driven.
    pub requester: PeerId,
    /// Hub to host: the requester's groups, from the hub's roster (what the
    /// asking host claimed here is ignored).
    pub groups: Vec<GroupName>,
    /// The control-protocol op (`lane.start`, `lane.wait`...).
    pub op: String,
    /// Its arguments, as JSON text.
    pub args: String,
}

/// The answer to a lane request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneAnswer {
    /// The call answered.
    pub call: u64,
    /// Host to hub: the host that asked. Hub to host: the host that
    /// answered.
    pub host: HostName,
    /// The op's result as JSON text, or a control error as JSON text.
    pub result: Result<String, String>,
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
                reset: true,
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
