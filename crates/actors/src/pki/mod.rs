//! Flotilla's certificates: the user's own certificate authority, the
//! certificates it issues to hosts and to the hub, and what a certificate
//! says about its holder.
//!
//! Owns key generation (ECDSA P-256), certificate and CSR making, the
//! fingerprint format (`sha256:` + lowercase hex of the DER) and the file
//! modes of key material (keys 0600, certificates 0644, directories 0700).
//! Everything here is pure except [`files`], which only touches the paths it
//! is given. It takes `now` from the caller and never reads the clock. It
//! must not know about TLS configs or sockets: [`crate::tls`] builds on it.
//!
//! The flow: the CA is made once ([`CertificateAuthority::create`]) and
//! reloaded from its two PEM files ([`CertificateAuthority::from_pem`]). A
//! host makes its key and a CSR ([`make_csr`]); the CA signs the CSR
//! ([`CertificateAuthority::sign_csr`]) so the host's key never leaves the
//! host. [`CertificateAuthority::issue`] makes a key and certificate together
//! for the manual `flotilla certs issue --name HOST` path.

mod ca;
pub mod files;
mod inspect;
mod issue;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;

use std::time::{Duration, SystemTime};

pub use ca::CertificateAuthority;
pub use inspect::{CertInfo, Fingerprint, FingerprintError, Serial, fingerprint};
pub use issue::{AltName, Csr, Issued, Role, Subject, make_csr};

/// How long a host certificate lasts unless the caller says otherwise.
pub const HOST_VALIDITY: Duration = Duration::from_secs(90 * 24 * 3600);
/// How long the hub's certificate lasts unless the caller says otherwise.
pub const HUB_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// How long a CA lasts unless the caller says otherwise.
pub const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// How far before `now` a new certificate starts, so that a peer whose clock
/// is a little behind still accepts it.
pub const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// Why a certificate, key or CSR could not be made, read or written. Each
/// message says what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PkiError {
    /// rcgen could not make a key, certificate or CSR.
    #[error("could not generate {what}: {source}")]
    Generate {
        /// What was being made.
        what: &'static str,
        /// rcgen's reason.
        source: rcgen::Error,
    },
    /// The CA's certificate or key PEM could not be used.
    #[error(
        "the CA {what} is not usable ({reason}); use the ca.pem and ca.key files written when the CA was created"
    )]
    BadCa {
        /// `certificate` or `key`.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The CA key does not belong to the CA certificate.
    #[error(
        "the CA key does not match the CA certificate; the two files come from different CAs, use the pair written together"
    )]
    KeyMismatch,
    /// The CSR is not a valid, correctly signed PKCS#10 request.
    #[error(
        "the certificate signing request is not valid ({0}); make a new one on the host and send its PEM file unchanged"
    )]
    BadCsr(rcgen::Error),
    /// The CSR asks for another name than the one being issued.
    #[error(
        "the certificate signing request asks for {requested:?} but the certificate is being issued for {issuing:?}; \
         check the name, or make a new request on that host"
    )]
    CsrNameMismatch {
        /// The name inside the CSR.
        requested: String,
        /// The name the CA was asked to issue for.
        issuing: String,
    },
    /// A name cannot go in a certificate.
    #[error("{name:?} cannot be a certificate name: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// The rule it broke.
        reason: String,
    },
    /// The validity window is empty.
    #[error("a certificate must end after it starts; pass a validity longer than zero")]
    EmptyValidity,
    /// Bytes are not a certificate Flotilla can read.
    #[error("not a readable X.509 certificate ({0}); pass the PEM or DER file written by flotilla")]
    Parse(String),
    /// A certificate has no DNS name to say whose it is.
    #[error(
        "the certificate has no DNS name, so it names no host or hub; it was not issued by flotilla, issue a new one"
    )]
    NoName,
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// `could not read`, `could not write`...
        action: &'static str,
        /// The path.
        path: std::path::PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// A private key file is not a PEM key.
    #[error(
        "{path} is not a PEM private key ({reason}); pass the key written with its certificate"
    )]
    BadKey {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
    /// A key file already exists; keys are never overwritten.
    #[error(
        "refusing to overwrite the private key {0}; move it away first if you mean to replace it"
    )]
    KeyExists(std::path::PathBuf),
}

/// When a certificate is valid. Always explicit: nothing here reads the
/// clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// First instant of validity.
    pub not_before: SystemTime,
    /// Last instant of validity.
    pub not_after: SystemTime,
}

impl Validity {
    /// Valid from [`BACKDATE`] before `now` until `now + length`.
    pub fn starting(now: SystemTime, length: Duration) -> Result<Self, PkiError> {
        if length.is_zero() {
            return Err(PkiError::EmptyValidity);
        }
        let not_before = now.checked_sub(BACKDATE).unwrap_or(now);
        let not_after = now.checked_add(length).ok_or(PkiError::EmptyValidity)?;
        Ok(Self {
            not_before,
            not_after,
        })
    }

    /// The default for a role: [`HOST_VALIDITY`] or [`HUB_VALIDITY`].
    pub fn default_for(role: Role, now: SystemTime) -> Self {
        let length = match role {
            Role::Host => HOST_VALIDITY,
            Role::Hub => HUB_VALIDITY,
        };
        Self::starting(now, length).unwrap_or(Self {
            not_before: now,
            not_after: now,
        })
    }

    fn apply(&self, params: &mut rcgen::CertificateParams) -> Result<(), PkiError> {
        if self.not_after <= self.not_before {
            return Err(PkiError::EmptyValidity);
        }
        params.not_before = self.not_before.into();
        params.not_after = self.not_after.into();
        Ok(())
    }
}

/// A fresh random serial number: 16 random bytes, positive. Certificates
/// reissued for the same key get different serials, so revoking one serial
/// never revokes its successor.
fn random_serial() -> Result<rcgen::SerialNumber, PkiError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| PkiError::Generate {
            what: "a serial number",
            source: rcgen::Error::RingUnspecified,
        })?;
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    Ok(rcgen::SerialNumber::from_slice(&bytes))
}

fn generate_key() -> Result<rcgen::KeyPair, PkiError> {
    rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(|source| {
        PkiError::Generate {
            what: "an ECDSA P-256 key",
            source,
        }
    })
}

#[cfg(test)]
mod tests;
