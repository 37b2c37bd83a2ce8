//! The host's side of the hub link: dial the hub, prove who we are, and
//! keep a session to ping and, later, to carry roster and messages.
//!
//! Owns the client connection and its timeouts, and the translation of
//! QUIC and TLS failures into [`ConnectError`]s a person can act on. Known
//! trap: QUIC's `connect` succeeds even when the hub refuses this host's
//! certificate (the client finishes its TLS handshake first); the refusal
//! only shows when the first stream is used, so the link is up only once
//! the hub's `HelloAck` has arrived. Must not decide on the handshake
//! itself: `HostHandshake` does.

use std::net::SocketAddr;
use std::time::Duration;

use flotilla_actors::federation::{
    Accepted, DEFAULT_MAX_FRAME, Frame, FramingError, HandshakeError, Hello, HostHandshake,
    read_body, read_frame, write_frame,
};
use tokio::time::{Instant, timeout_at};

use crate::transport::close;

/// Default time allowed to reach the hub and get its answer.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how to reach the hub.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The hub's UDP address.
    pub addr: SocketAddr,
    /// The hub's name: the server name its certificate must carry.
    pub hub_name: String,
    /// TLS and transport settings (see [`crate::transport::client_config`]).
    pub config: quinn::ClientConfig,
    /// Time allowed for the whole connect, QUIC and hello.
    pub timeout: Duration,
}

impl ConnectOptions {
    /// Options with the default timeout.
    pub fn new(addr: SocketAddr, hub_name: impl Into<String>, config: quinn::ClientConfig) -> Self {
        Self {
            addr,
            hub_name: hub_name.into(),
            config,
            timeout: CONNECT_TIMEOUT,
        }
    }
}

/// Why a host could not link to the hub. Each message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// Nothing answered, or the network refused.
    #[error(
        "the hub at {addr} is unreachable ({reason}); check that it runs and that its UDP port is reachable from here"
    )]
    Unreachable {
        /// The hub's address.
        addr: SocketAddr,
        /// What happened.
        reason: String,
    },
    /// The hub refused this host's certificate during TLS.
    #[error(
        "the hub refused this host's certificate ({reason}); it may be revoked, expired, missing or from another CA: \
         enroll this host again"
    )]
    CertificateRefused {
        /// What QUIC reported.
        reason: String,
    },
    /// This host refused the hub's certificate.
    #[error(
        "this host refused the hub's certificate ({reason}); the hub is not signed by this host's CA or has another name: \
         check the hub address, its name and the CA fingerprint"
    )]
    HubCertificate {
        /// What TLS reported.
        reason: String,
    },
    /// The two sides speak different protocol versions.
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
    /// The hub refused the name this host gave.
    #[error("the hub refused this host's identity: {reason}")]
    Identity {
        /// The hub's explanation.
        reason: String,
    },
    /// The hub refused the hello for another reason, or answered wrongly.
    #[error(transparent)]
    Handshake(HandshakeError),
    /// QUIC connected but the hub did not answer the hello in time.
    #[error(
        "the hub did not answer the hello within {after:?}; it may be overloaded or not a flotilla hub"
    )]
    Timeout {
        /// The time allowed.
        after: Duration,
    },
    /// The link failed in a way not listed above.
    #[error("the hub link failed: {0}")]
    Link(String),
}

impl From<HandshakeError> for ConnectError {
    fn from(e: HandshakeError) -> Self {
        match e {
            HandshakeError::Version { host, hub } => Self::Version { host, hub },
            HandshakeError::Identity { reason } => Self::Identity { reason },
            other => Self::Handshake(other),
        }
    }
}

/// Whether a QUIC error code is a TLS alert (RFC 9001: 0x100 + alert).
fn is_tls_alert(code: quinn::TransportErrorCode) -> bool {
    (0x100..0x200).contains(&u64::from(code))
}

/// Translates a QUIC connection error into what went wrong.
fn classify(addr: SocketAddr, error: &quinn::ConnectionError) -> ConnectError {
    use quinn::ConnectionError as E;
    match error {
        // Detected here: our TLS refused the hub.
        E::TransportError(e) if is_tls_alert(e.code) => ConnectError::HubCertificate {
            reason: e.reason.clone(),
        },
        // Sent by the hub: its TLS refused us.
        E::ConnectionClosed(c) if is_tls_alert(c.error_code) => ConnectError::CertificateRefused {
            reason: c.to_string(),
        },
        E::TimedOut | E::Reset => ConnectError::Unreachable {
            addr,
            reason: error.to_string(),
        },
        other => ConnectError::Link(other.to_string()),
    }
}

/// After a failed stream operation: the connection's own reason if it is
/// closed (that is where a refused certificate shows), else the stream's.
fn stream_failure(
    addr: SocketAddr,
    connection: &quinn::Connection,
    e: &FramingError,
) -> ConnectError {
    match connection.close_reason() {
        Some(reason) => classify(addr, &reason),
        None => ConnectError::Link(e.to_string()),
    }
}

/// Dials the hub from `endpoint`, sends `hello` and waits for the hub's
/// answer; the link is up only when this returns `Ok`.
pub async fn connect(
    endpoint: &quinn::Endpoint,
    options: &ConnectOptions,
    hello: Hello,
) -> Result<HubSession, ConnectError> {
    let addr = options.addr;
    let deadline = Instant::now() + options.timeout;
    let handshake = HostHandshake::new(hello, options.hub_name.clone());
    let connecting = endpoint
        .connect_with(options.config.clone(), addr, &options.hub_name)
        .map_err(|e| ConnectError::Unreachable {
            addr,
            reason: e.to_string(),
        })?;
    let connection = match timeout_at(deadline, connecting).await {
        Ok(Ok(connection)) => connection,
        Ok(Err(e)) => return Err(classify(addr, &e)),
        Err(_) => {
            return Err(ConnectError::Unreachable {
                addr,
                reason: format!("no QUIC answer within {:?}", options.timeout),
            });
        }
    };
    let result = timeout_at(deadline, say_hello(addr, &connection, &handshake)).await;
    match result {
        Ok(Ok((accepted, send, recv))) => Ok(HubSession {
            connection,
            send,
            recv,
            accepted,
        }),
        Ok(Err(e)) => {
            connection.close(close::NORMAL.into(), b"handshake failed");
            Err(e)
        }
        Err(_) => {
            connection.close(close::NORMAL.into(), b"no answer to hello");
            Err(ConnectError::Timeout {
                after: options.timeout,
            })
        }
    }
}

async fn say_hello(
    addr: SocketAddr,
    connection: &quinn::Connection,
    handshake: &HostHandshake,
) -> Result<(Accepted, quinn::SendStream, quinn::RecvStream), ConnectError> {
    let (mut send, mut recv) = connection.open_bi().await.map_err(|e| classify(addr, &e))?;
    write_frame(&mut send, &handshake.hello(), DEFAULT_MAX_FRAME)
        .await
        .map_err(|e| stream_failure(addr, connection, &e))?;
    let reply = read_frame(&mut recv, DEFAULT_MAX_FRAME)
        .await
        .map_err(|e| stream_failure(addr, connection, &e))?;
    let Some(reply) = reply else {
        let gone = FramingError::Truncated;
        return Err(stream_failure(addr, connection, &gone));
    };
    let accepted = handshake.on_reply(reply)?;
    Ok((accepted, send, recv))
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The link failed.
    #[error(transparent)]
    Link(#[from] FramingError),
    /// The connection was closed, by the hub or by QUIC.
    #[error("the hub link was closed: {0}")]
    Closed(String),
    /// The hub ended the link.
    #[error("the hub ended the link")]
    Ended,
    /// No answer in time.
    #[error("the hub did not answer within {0:?}; the link may be dead")]
    Timeout(Duration),
}

/// An established link to the hub.
#[derive(Debug)]
pub struct HubSession {
    /// The QUIC connection.
    connection: quinn::Connection,
    /// Our half of the control stream.
    send: quinn::SendStream,
    /// The hub's half of the control stream.
    recv: quinn::RecvStream,
    /// What the handshake agreed.
    accepted: Accepted,
}

impl HubSession {
    /// The hub's name and the protocol version of the link.
    pub fn accepted(&self) -> &Accepted {
        &self.accepted
    }

    /// The QUIC connection (for its statistics or peer identity).
    pub fn connection(&self) -> &quinn::Connection {
        &self.connection
    }

    /// Sends a frame on the control stream.
    pub async fn send(&mut self, frame: &Frame) -> Result<(), SessionError> {
        write_frame(&mut self.send, frame, DEFAULT_MAX_FRAME)
            .await
            .map_err(|e| self.failure(e))
    }

    /// Receives the next frame; [`SessionError::Ended`] when the hub ended
    /// the stream.
    pub async fn recv(&mut self) -> Result<Frame, SessionError> {
        read_frame(&mut self.recv, DEFAULT_MAX_FRAME)
            .await
            .map_err(|e| self.failure(e))?
            .ok_or(SessionError::Ended)
    }

    /// Receives the next frame's encoded body, undecoded, for a reader
    /// that decodes only some frames (the benchmark's simulated hosts);
    /// [`SessionError::Ended`] when the hub ended the stream.
    pub async fn recv_body(&mut self) -> Result<Vec<u8>, SessionError> {
        read_body(&mut self.recv, DEFAULT_MAX_FRAME)
            .await
            .map_err(|e| self.failure(e))?
            .ok_or(SessionError::Ended)
    }

    /// The connection's close reason if it is closed, else the stream error.
    fn failure(&self, e: FramingError) -> SessionError {
        match self.connection.close_reason() {
            Some(reason) => SessionError::Closed(reason.to_string()),
            None => SessionError::Link(e),
        }
    }

    /// Pings the hub and waits up to `wait` for the matching pong; other
    /// frames met meanwhile are dropped (nothing else is handled yet).
    pub async fn ping(&mut self, nonce: u64, wait: Duration) -> Result<(), SessionError> {
        let exchange = async {
            self.send(&Frame::Ping { nonce }).await?;
            loop {
                match self.recv().await? {
                    Frame::Pong { nonce: n } if n == nonce => return Ok(()),
                    other => tracing::debug!(kind = other.kind(), "frame not handled yet; dropped"),
                }
            }
        };
        tokio::time::timeout(wait, exchange)
            .await
            .map_err(|_| SessionError::Timeout(wait))?
    }

    /// The connection and the two halves of the control stream, for a
    /// caller that reads and writes from different tasks.
    pub fn into_parts(self) -> (quinn::Connection, quinn::SendStream, quinn::RecvStream) {
        (self.connection, self.send, self.recv)
    }

    /// Ends the link politely: finishes the stream and closes.
    pub fn close(mut self) {
        let _ = self.send.finish();
        self.connection.close(close::NORMAL.into(), b"bye");
    }
}
