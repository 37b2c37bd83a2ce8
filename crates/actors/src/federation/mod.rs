//! The host-hub link protocol, without IO: the frames, their framing on a
//! byte stream, and the session handshake as plain state machines.
//!
//! Owns the wire format of the hub link and the decisions of its handshake.
//! [`framing`] reads and writes frames on any tokio stream it is handed; it
//! never opens one. [`handshake`] never touches IO or the clock, so it is
//! tested synchronously. QUIC, certificates and timeouts belong to the hub
//! crate and [`crate::tls`].
//!
//! A link, once QUIC and mutual TLS are up:
//!
//! ```text
//! host                                   hub
//!  |-- Hello {protocol, host, ...} -------->|  HubHandshake::on_hello(hello, cert name)
//!  |<------------ HelloAck | HelloRefused --|  (refused: the hub closes the link)
//!  |-- Ping {nonce} ----------------------->|
//!  |<----------------------- Pong {nonce} --|
//!  |== RosterDelta {reset} (own peers) ==>|  then deltas on every change
//!  |<== RosterDelta (visible remote peers) =|
//!  |-- Forward {message, to} ------------->|  checked, stored, then
//!  |<--------- Forwarded {Queued|Refused} --|
//!  |<------------- Deliver {seq, message} --|  (to the recipients' host)
//!  |-- Delivered {seq} ------------------->|  on disk there
//!  |<------------- Receipt {seq, id, ...} --|  (to the sender's host)
//!  |-- ReceiptAck {seq} ------------------->|
//!  |-- LaneCall {call, host: target, ...} -->|  relayed to the target with
//!  |<-------- LaneAnswer {call, result} -----|  the requester's groups
//! ```

pub mod enroll;
pub mod frames;
pub mod framing;
pub mod handshake;
pub mod stage;

pub use frames::{
    Deliver, Delivered, Forward, ForwardOutcome, ForwardRefusal, Forwarded, Frame, Hello, HelloAck,
    HelloRefused, LaneAnswer, LaneCall, PROTOCOL_VERSION, Receipt, ReceiptState, RefusalCode,
    RosterDelta, RosterPeer,
};
pub use framing::{
    DEFAULT_MAX_FRAME, FramingError, encode_message, message_frame_size, read_body, read_frame,
    read_message, read_sized, write_frame, write_message,
};
pub use handshake::{Accepted, HandshakeError, HostHandshake, HubHandshake, Refusal};
