//! QUIC transport settings shared by the hub and hosts, and the step from a
//! rustls config to a quinn one.
//!
//! Owns the timers: a link is dead after [`IDLE_TIMEOUT`] of silence, and
//! each side sends a keep-alive every [`KEEP_ALIVE`], well under half the
//! idle timeout so that one lost keep-alive does not end a link. Must not
//! build TLS configs (`flotilla_actors::tls` does).

use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};

/// Silence after which a link is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Interval of keep-alives on an otherwise quiet link.
pub const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Application close codes on the hub link.
pub mod close {
    /// A normal end (a host leaving, a session dropped).
    pub const NORMAL: u32 = 0;
    /// The hub refused the hello.
    pub const REFUSED: u32 = 1;
    /// The hub is shutting down.
    pub const SHUTDOWN: u32 = 2;
    /// The peer broke the protocol (bad frame, no hello in time).
    pub const PROTOCOL: u32 = 3;
    /// The host did not read what the hub sent it (its outbound queue
    /// passed its bound).
    pub const SLOW_READER: u32 = 4;
    /// The host stayed over its frame or byte budget.
    pub const OVER_BUDGET: u32 = 5;
}

/// Why a rustls config cannot carry QUIC.
#[derive(Debug, thiserror::Error)]
#[error(
    "the TLS config has no cipher suite QUIC can start with (TLS_AES_128_GCM_SHA256); build it with flotilla_actors::tls"
)]
pub struct QuicConfigError(#[from] quinn::crypto::rustls::NoInitialCipherSuite);

/// The transport parameters of every hub link.
pub fn transport_config() -> Arc<quinn::TransportConfig> {
    let mut transport = quinn::TransportConfig::default();
    let idle = quinn::IdleTimeout::try_from(IDLE_TIMEOUT).unwrap_or(quinn::VarInt::MAX.into());
    transport.max_idle_timeout(Some(idle));
    transport.keep_alive_interval(Some(KEEP_ALIVE));
    Arc::new(transport)
}

/// The hub's quinn config from its rustls config.
pub fn server_config(tls: rustls::ServerConfig) -> Result<quinn::ServerConfig, QuicConfigError> {
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(QuicServerConfig::try_from(tls)?));
    config.transport_config(transport_config());
    Ok(config)
}

/// A host's quinn config from its rustls config.
pub fn client_config(tls: rustls::ClientConfig) -> Result<quinn::ClientConfig, QuicConfigError> {
    let mut config = quinn::ClientConfig::new(Arc::new(QuicClientConfig::try_from(tls)?));
    config.transport_config(transport_config());
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_is_under_half_the_idle_timeout() {
        assert!(KEEP_ALIVE * 2 < IDLE_TIMEOUT);
    }
}
