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
//!  |<== RosterDelta / Deliver (later) ====>|
//! ```

pub mod enroll;
pub mod frames;
pub mod framing;
pub mod handshake;

pub use frames::{
    Deliver, Frame, Hello, HelloAck, HelloRefused, PROTOCOL_VERSION, RefusalCode, RosterDelta,
};
pub use framing::{
    DEFAULT_MAX_FRAME, FramingError, read_frame, read_message, write_frame, write_message,
};
pub use handshake::{Accepted, HandshakeError, HostHandshake, HubHandshake, Refusal};
