//! TLS for the hub link: rustls configs with the ring provider only, TLS
//! 1.3 only, ALPN `flotilla/1`, and mutual authentication against the
//! user's own CA.
//!
//! Owns who trusts whom: the hub requires a client certificate that chains
//! to the CA and is not revoked ([`Revocations`]); a host trusts only the CA
//! (never the system roots) and checks the hub's name. Also reads the
//! verified identity of a QUIC peer ([`peer_identity`]). The enrollment
//! channel has its own configs ([`enroll_server_config`],
//! [`enroll_client_config`]): ALPN `flotilla-enroll/1`, a client
//! certificate optional, and a joining host trusting only the CA pinned by
//! its token ([`PinnedCaVerifier`]). Must not open
//! sockets or set QUIC transport parameters: the hub crate does.

mod pinned;
mod revocation;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

pub use pinned::PinnedCaVerifier;
pub use revocation::Revocations;

use crate::pki::{CertInfo, PkiError, files};

/// The ALPN identifier of the federation protocol.
pub const ALPN: &[u8] = b"flotilla/1";

/// Why a TLS config could not be built or a peer's identity read. Each
/// message says what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The CA certificate cannot be a trust root.
    #[error(
        "the CA certificate cannot be trusted as a root ({0}); pass the ca.pem written by `flotilla hub init`"
    )]
    BadRoot(rustls::Error),
    /// The client verifier could not be built.
    #[error("cannot build the client certificate check ({0}); check the CA certificate")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    /// rustls refused the certificate, key or protocol settings.
    #[error(
        "rustls refused this certificate and key ({0}); check that the key belongs to the certificate"
    )]
    Config(#[from] rustls::Error),
    /// The certificate or key files could not be read.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The peer presented no certificate (so it was not verified).
    #[error("the peer presented no certificate; every hub link must be mutually authenticated")]
    NoPeerCertificate,
}

/// A certificate chain (leaf first) and its private key: what this side
/// presents.
pub struct TlsIdentity {
    /// Leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's key.
    pub key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("chain_len", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// Reads a certificate PEM file and its key PEM file.
    pub fn load(cert: &std::path::Path, key: &std::path::Path) -> Result<Self, TlsError> {
        Ok(Self {
            chain: files::read_certificates(cert)?,
            key: files::read_private_key(key)?,
        })
    }

    /// Builds an identity from PEM text.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, TlsError> {
        use rustls::pki_types::pem::PemObject;
        let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PkiError::Parse(e.to_string()))?;
        let key =
            PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| PkiError::BadKey {
                path: "(in memory)".into(),
                reason: e.to_string(),
            })?;
        Ok(Self { chain, key })
    }
}

/// The one crypto provider: ring.
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca: &CertificateDer<'static>) -> Result<Arc<RootCertStore>, TlsError> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).map_err(TlsError::BadRoot)?;
    Ok(Arc::new(roots))
}

/// The hub's server config: TLS 1.3, ALPN `flotilla/1`, a client
/// certificate chaining to `ca` required, and `revocations` checked on every
/// handshake.
pub fn hub_server_config(
    ca: &CertificateDer<'static>,
    identity: TlsIdentity,
    revocations: Arc<Revocations>,
) -> Result<ServerConfig, TlsError> {
    let provider = crypto_provider();
    let webpki =
        WebPkiClientVerifier::builder_with_provider(roots(ca)?, provider.clone()).build()?;
    let verifier = Arc::new(revocation::RevocationCheck {
        inner: webpki,
        revocations,
    });
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_client_cert_verifier(verifier)
        .with_single_cert(identity.chain, identity.key)?;
    config.alpn_protocols = vec![ALPN.to_vec()];
    Ok(config)
}

/// A host's client config: TLS 1.3, ALPN `flotilla/1`, trusting only `ca`,
/// presenting `identity`. The hub's name is checked against the server name
/// passed when connecting.
pub fn host_client_config(
    ca: &CertificateDer<'static>,
    identity: TlsIdentity,
) -> Result<ClientConfig, TlsError> {
    let mut config = ClientConfig::builder_with_provider(crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots(ca)?)
        .with_client_auth_cert(identity.chain, identity.key)?;
    config.alpn_protocols = vec![ALPN.to_vec()];
    Ok(config)
}

/// The hub's enrollment server config: TLS 1.3, ALPN `flotilla-enroll/1`,
/// presenting `identity` (whose chain must end with the CA certificate, so
/// that a joining host can check the CA's fingerprint). A client
/// certificate is optional (a joining host has none; a renewing host
/// presents its current one), but one that is presented must chain to `ca`
/// and not be revoked.
pub fn enroll_server_config(
    ca: &CertificateDer<'static>,
    identity: TlsIdentity,
    revocations: Arc<Revocations>,
) -> Result<ServerConfig, TlsError> {
    let provider = crypto_provider();
    let webpki = WebPkiClientVerifier::builder_with_provider(roots(ca)?, provider.clone())
        .allow_unauthenticated()
        .build()?;
    let verifier = Arc::new(revocation::RevocationCheck {
        inner: webpki,
        revocations,
    });
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_client_cert_verifier(verifier)
        .with_single_cert(identity.chain, identity.key)?;
    config.alpn_protocols = vec![crate::federation::enroll::ENROLL_ALPN.to_vec()];
    Ok(config)
}

/// Whom an enrollment client trusts.
#[derive(Debug, Clone)]
pub enum EnrollTrust {
    /// A joining host: only the CA with the token's fingerprint.
    Pinned(Arc<PinnedCaVerifier>),
    /// A renewing host: the CA in its `ca.pem`.
    Ca(CertificateDer<'static>),
}

/// A client config for the enrollment channel: TLS 1.3, ALPN
/// `flotilla-enroll/1`, trusting as `trust` says, presenting `identity` if
/// given (renewal) and no certificate otherwise (joining).
pub fn enroll_client_config(
    trust: EnrollTrust,
    identity: Option<TlsIdentity>,
) -> Result<ClientConfig, TlsError> {
    let builder = ClientConfig::builder_with_provider(crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let builder = match trust {
        EnrollTrust::Pinned(verifier) => builder
            .dangerous()
            .with_custom_certificate_verifier(verifier),
        EnrollTrust::Ca(ca) => builder.with_root_certificates(roots(&ca)?),
    };
    let mut config = match identity {
        Some(identity) => builder.with_client_auth_cert(identity.chain, identity.key)?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![crate::federation::enroll::ENROLL_ALPN.to_vec()];
    Ok(config)
}

/// The verified identity of the peer of a QUIC connection whose handshake
/// has completed: what its leaf certificate says. The name in it, never a
/// claim inside a message, is who the peer is.
pub fn peer_identity(connection: &quinn::Connection) -> Result<CertInfo, TlsError> {
    let any = connection
        .peer_identity()
        .ok_or(TlsError::NoPeerCertificate)?;
    let chain = any
        .downcast::<Vec<CertificateDer<'static>>>()
        .map_err(|_| TlsError::NoPeerCertificate)?;
    identity_of_chain(&chain)
}

/// The identity in a verified chain's leaf.
pub fn identity_of_chain(chain: &[CertificateDer<'_>]) -> Result<CertInfo, TlsError> {
    let leaf = chain.first().ok_or(TlsError::NoPeerCertificate)?;
    Ok(CertInfo::from_der(leaf)?)
}
