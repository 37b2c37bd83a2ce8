//! The enrolling host's trust: before it has a CA file, it trusts only a
//! CA whose certificate has the fingerprint written in its token.
//!
//! Owns [`PinnedCaVerifier`]: the hub must send its CA certificate last in
//! its chain; that certificate's SHA-256 must equal the token's before
//! anything else is checked, then the hub's certificate must chain to it and
//! carry the hub's name. It records what it saw, so a mismatch is reported
//! plainly. Must not open connections or read files.

use std::sync::{Arc, Mutex, PoisonError};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::pki::{Fingerprint, fingerprint};

/// A server verifier that trusts exactly one CA, named by fingerprint, which
/// the server itself presents as the last certificate of its chain.
#[derive(Debug)]
pub struct PinnedCaVerifier {
    /// The fingerprint from the token.
    expected: Fingerprint,
    /// ring, for chain and signature checks.
    provider: Arc<CryptoProvider>,
    /// The CA fingerprint the server presented (none: no CA in its chain).
    seen: Mutex<Option<Fingerprint>>,
}

impl PinnedCaVerifier {
    /// Trusts only a CA with this fingerprint.
    pub fn new(expected: Fingerprint) -> Arc<Self> {
        Arc::new(Self {
            expected,
            provider: super::crypto_provider(),
            seen: Mutex::new(None),
        })
    }

    /// The fingerprint it trusts.
    pub fn expected(&self) -> Fingerprint {
        self.expected
    }

    /// The CA fingerprint the server presented, if it presented one.
    pub fn seen(&self) -> Option<Fingerprint> {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the server presented a CA other than the expected one (or
    /// none at all) in the last handshake.
    pub fn mismatched(&self) -> bool {
        self.seen() != Some(self.expected)
    }
}

fn general(e: impl std::fmt::Display) -> rustls::Error {
    rustls::Error::General(e.to_string())
}

impl ServerCertVerifier for PinnedCaVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some((ca, rest)) = intermediates.split_last() else {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer,
            ));
        };
        let seen = fingerprint(ca);
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(seen);
        if seen != self.expected {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ));
        }
        let mut roots = RootCertStore::empty();
        roots.add(ca.clone().into_owned())?;
        let webpki =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.provider.clone())
                .build()
                .map_err(general)?;
        webpki.verify_server_cert(end_entity, rest, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
