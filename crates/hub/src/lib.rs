//! Flotilla's hub: it will route group-scoped messages between host daemons
//! over mutually authenticated QUIC, hold messages for offline hosts and give
//! the operator one roster. For now it only names the protocol version the
//! hub will speak, so that the workspace has its final shape.

/// The federation protocol's ALPN identifier.
pub const ALPN: &[u8] = b"flotilla/1";
