//! Revocation: the certificates the hub no longer accepts, by serial or by
//! fingerprint, checked on every new connection.
//!
//! Owns the revoked set (shared, changeable while the hub runs, so `hub
//! revoke` takes effect on the next connection without a restart; the hub
//! crate reloads it from its persisted list) and the
//! [`ClientCertVerifier`] wrapper that consults it after WebPKI has verified
//! the chain. Must not decide trust itself: WebPKI does, this only takes
//! trust away.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, RwLock};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

use crate::pki::{Fingerprint, Serial, fingerprint};

/// The revoked certificates. Cheap to share: wrap it in an [`Arc`], keep a
/// handle in the hub's state and change it while connections come in.
#[derive(Debug, Default)]
pub struct Revocations {
    /// Guarded so that `revoke` can run beside handshakes.
    revoked: RwLock<Revoked>,
}

#[derive(Debug, Default)]
struct Revoked {
    /// Serials, as the hub's revocation list records them.
    serials: HashSet<Serial>,
    /// Fingerprints, as `certs show` prints them.
    fingerprints: HashSet<Fingerprint>,
}

impl Revocations {
    /// An empty set: nothing is revoked.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Revokes every certificate with this serial.
    pub fn revoke_serial(&self, serial: Serial) {
        self.write().serials.insert(serial);
    }

    /// Revokes the certificate with this fingerprint.
    pub fn revoke_fingerprint(&self, fingerprint: Fingerprint) {
        self.write().fingerprints.insert(fingerprint);
    }

    /// Replaces the whole set, as read again from the hub's revocation
    /// list.
    pub fn replace(
        &self,
        serials: impl IntoIterator<Item = Serial>,
        fingerprints: impl IntoIterator<Item = Fingerprint>,
    ) {
        let mut revoked = self.write();
        revoked.serials = serials.into_iter().collect();
        revoked.fingerprints = fingerprints.into_iter().collect();
    }

    /// Whether a DER certificate is revoked. A certificate whose serial
    /// cannot be read counts as revoked: this check fails closed.
    pub fn is_revoked(&self, der: &[u8]) -> bool {
        let revoked = self.revoked.read().unwrap_or_else(PoisonError::into_inner);
        if revoked.fingerprints.contains(&fingerprint(der)) {
            return true;
        }
        if revoked.serials.is_empty() {
            return false;
        }
        Serial::of_certificate(der).map_or(true, |s| revoked.serials.contains(&s))
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Revoked> {
        self.revoked.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A client verifier that lets WebPKI verify the chain, then refuses a
/// revoked certificate with [`CertificateError::Revoked`].
#[derive(Debug)]
pub(super) struct RevocationCheck {
    /// The WebPKI verifier that decides trust.
    pub(super) inner: Arc<dyn ClientCertVerifier>,
    /// What to refuse even though it is trusted.
    pub(super) revocations: Arc<Revocations>,
}

impl ClientCertVerifier for RevocationCheck {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        if self.revocations.is_revoked(end_entity) {
            tracing::warn!(
                fingerprint = %fingerprint(end_entity),
                "refused a revoked client certificate"
            );
            return Err(rustls::Error::InvalidCertificate(CertificateError::Revoked));
        }
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
