//! The session handshake of the hub link, as plain decisions: no IO, no
//! clock, so every branch is a synchronous unit test.
//!
//! Owns what the hub accepts ([`HubHandshake`]) and what a host accepts
//! back ([`HostHandshake`]). The rule at its heart: a host's identity is the
//! name in its certificate, never a claim inside a message. Reading frames,
//! timeouts and closing the link belong to the driver (the hub crate).

use super::frames::{Frame, Hello, HelloAck, HelloRefused, PROTOCOL_VERSION, RefusalCode};

/// Why the hub refuses a host. The message is sent to the host as the
/// refusal's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The host speaks another protocol version.
    #[error(
        "protocol version mismatch: the host speaks federation protocol {host}, the hub speaks {hub}; \
         run the same flotilla release on the host and the hub"
    )]
    Version {
        /// The host's version.
        host: u32,
        /// The hub's version.
        hub: u32,
    },
    /// The hello names another host than the certificate does.
    #[error(
        "the hello claims to be host {claimed:?} but its certificate names {certificate:?}: \
         a host's identity is the name in its certificate, never a claim inside a message; \
         use the certificate issued for this host"
    )]
    Identity {
        /// The name in the hello.
        claimed: String,
        /// The name in the certificate.
        certificate: String,
    },
    /// The first frame was not a hello.
    #[error(
        "the first frame on a hub link must be Hello, got {got}; the peer is not a flotilla host"
    )]
    NotHello {
        /// The frame's kind.
        got: &'static str,
    },
}

impl Refusal {
    /// The frame that tells the host.
    pub fn to_frame(&self) -> Frame {
        let code = match self {
            Self::Version { hub, .. } => RefusalCode::ProtocolVersion { hub: *hub },
            Self::Identity { .. } => RefusalCode::Identity,
            Self::NotHello { .. } => RefusalCode::Other,
        };
        Frame::HelloRefused(HelloRefused {
            code,
            reason: self.to_string(),
        })
    }
}

/// The hub's side of the handshake.
#[derive(Debug, Clone)]
pub struct HubHandshake {
    /// The hub's name, sent in the ack.
    hub: String,
    /// The protocol version the hub speaks.
    protocol: u32,
}

impl HubHandshake {
    /// A hub named `hub` speaking this build's [`PROTOCOL_VERSION`].
    pub fn new(hub: impl Into<String>) -> Self {
        Self::with_protocol(hub, PROTOCOL_VERSION)
    }

    /// A hub speaking another version (tests of mismatches).
    pub fn with_protocol(hub: impl Into<String>, protocol: u32) -> Self {
        Self {
            hub: hub.into(),
            protocol,
        }
    }

    /// Decides on a host's first frame; `cert_identity` is the name in the
    /// host's verified certificate.
    pub fn on_first_frame(&self, frame: Frame, cert_identity: &str) -> Result<HelloAck, Refusal> {
        match frame {
            Frame::Hello(hello) => self.on_hello(&hello, cert_identity),
            other => Err(Refusal::NotHello { got: other.kind() }),
        }
    }

    /// Decides on a host's hello.
    pub fn on_hello(&self, hello: &Hello, cert_identity: &str) -> Result<HelloAck, Refusal> {
        if hello.protocol != self.protocol {
            return Err(Refusal::Version {
                host: hello.protocol,
                hub: self.protocol,
            });
        }
        if hello.host.as_str() != cert_identity {
            return Err(Refusal::Identity {
                claimed: hello.host.to_string(),
                certificate: cert_identity.to_owned(),
            });
        }
        Ok(HelloAck {
            hub: self.hub.clone(),
            protocol: self.protocol,
        })
    }
}

/// Why a host does not accept the hub's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The protocol versions differ.
    #[error(
        "protocol version mismatch: this host speaks federation protocol {host}, the hub speaks {hub}; \
         run the same flotilla release on the host and the hub"
    )]
    Version {
        /// This host's version.
        host: u32,
        /// The hub's version.
        hub: u32,
    },
    /// The hub refused the host's identity.
    #[error("the hub refused this host's identity: {reason}")]
    Identity {
        /// The hub's explanation.
        reason: String,
    },
    /// The hub refused for another reason.
    #[error("the hub refused the link: {reason}")]
    Refused {
        /// The hub's explanation.
        reason: String,
    },
    /// The ack names another hub than the one this host dialled.
    #[error(
        "the hub answered as {got:?} but this host expects {expected:?}; check the hub name in the host's config"
    )]
    WrongHub {
        /// The configured hub name.
        expected: String,
        /// The name in the ack.
        got: String,
    },
    /// The hub answered with something other than an ack or a refusal.
    #[error("the hub answered the hello with {got}; it is not a flotilla hub or is broken")]
    Unexpected {
        /// The frame's kind.
        got: &'static str,
    },
}

/// The link as accepted by both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The hub's name.
    pub hub: String,
    /// The protocol version of the link.
    pub protocol: u32,
}

/// The host's side of the handshake.
#[derive(Debug, Clone)]
pub struct HostHandshake {
    /// What the host says about itself.
    hello: Hello,
    /// The hub the host means to reach (its certificate's name).
    hub: String,
}

impl HostHandshake {
    /// A handshake sending `hello` to the hub named `hub`.
    pub fn new(hello: Hello, hub: impl Into<String>) -> Self {
        Self {
            hello,
            hub: hub.into(),
        }
    }

    /// The first frame to send.
    pub fn hello(&self) -> Frame {
        Frame::Hello(self.hello.clone())
    }

    /// Decides on the hub's answer to the hello.
    pub fn on_reply(&self, frame: Frame) -> Result<Accepted, HandshakeError> {
        match frame {
            Frame::HelloAck(ack) => self.on_ack(ack),
            Frame::HelloRefused(refused) => Err(self.on_refused(refused)),
            other => Err(HandshakeError::Unexpected { got: other.kind() }),
        }
    }

    fn on_ack(&self, ack: HelloAck) -> Result<Accepted, HandshakeError> {
        if ack.protocol != self.hello.protocol {
            return Err(HandshakeError::Version {
                host: self.hello.protocol,
                hub: ack.protocol,
            });
        }
        if ack.hub != self.hub {
            return Err(HandshakeError::WrongHub {
                expected: self.hub.clone(),
                got: ack.hub,
            });
        }
        Ok(Accepted {
            hub: ack.hub,
            protocol: ack.protocol,
        })
    }

    fn on_refused(&self, refused: HelloRefused) -> HandshakeError {
        match refused.code {
            RefusalCode::ProtocolVersion { hub } => HandshakeError::Version {
                host: self.hello.protocol,
                hub,
            },
            RefusalCode::Identity => HandshakeError::Identity {
                reason: refused.reason,
            },
            RefusalCode::Other => HandshakeError::Refused {
                reason: refused.reason,
            },
        }
    }
}

#[cfg(test)]
mod tests;
