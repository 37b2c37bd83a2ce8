//! QUIC transport settings shared by the hub and hosts, and the step from a
//! rustls config to a quinn one.
//!
//! Owns the timers: a link is dead after [`IDLE_TIMEOUT`] of silence, and
//! each side sends a keep-alive every [`KEEP_ALIVE`], well under half the
//! idle timeout so that one lost keep-alive does not end a link. Owns the
//! hub's stateless-reset key too: derived from the hub's own private key,
//! so a hub restarted after a crash resets the links of the hub that died
//! at their first packet (hosts redial at once instead of waiting for a
//! ping to time out). Must not build TLS configs (`flotilla_actors::tls`
//! does).

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

/// The label of the stateless-reset key's derivation (a new label, a new
/// key: bump it if the derivation ever changes).
const RESET_KEY_LABEL: &[u8] = b"flotilla hub stateless-reset key v1";

/// The seed of the hub's stateless-reset key: an HMAC-SHA256 of a fixed
/// label keyed with the hub's private key (DER). The same key gives the
/// same seed across restarts; it reveals nothing of the key.
pub fn reset_key_seed(private_key_der: &[u8]) -> [u8; 32] {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, private_key_der);
    let tag = ring::hmac::sign(&key, RESET_KEY_LABEL);
    let mut seed = [0u8; 32];
    seed.copy_from_slice(tag.as_ref());
    seed
}

/// The key of the hub's connection ids (visible on the wire), derived from
/// `seed` apart from the reset key so that ids reveal nothing of it.
fn connection_id_key(seed: &[u8; 32]) -> u64 {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, seed);
    let tag = ring::hmac::sign(&key, b"connection ids");
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&tag.as_ref()[..8]);
    u64::from_le_bytes(bytes)
}

/// The hub's endpoint config from `seed` (see [`reset_key_seed`]): its
/// stateless-reset key, and a connection-id generator whose ids a restarted
/// hub still recognises as its own (quinn sends a reset only for an id it
/// could have issued); the rest quinn's defaults.
pub fn hub_endpoint_config(seed: &[u8; 32]) -> quinn::EndpointConfig {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, seed);
    let mut config = quinn::EndpointConfig::new(Arc::new(key));
    let cid_key = connection_id_key(seed);
    config.cid_generator(move || {
        Box::new(quinn_proto::HashedConnectionIdGenerator::from_key(cid_key))
    });
    config
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

    #[test]
    fn the_reset_key_is_the_same_for_the_same_hub_key_only() {
        let seed = reset_key_seed(b"a hub key");
        assert_eq!(seed, reset_key_seed(b"a hub key"), "stable across restarts");
        assert_ne!(seed, reset_key_seed(b"another hub key"));
        assert_ne!(&seed[..], &b"a hub key"[..], "not the key itself");
        let ids = connection_id_key(&seed).to_le_bytes();
        assert!(
            !seed.windows(8).any(|w| w == ids),
            "connection ids reveal nothing of the reset key"
        );
        assert_eq!(
            connection_id_key(&seed),
            connection_id_key(&reset_key_seed(b"a hub key"))
        );
    }
}
