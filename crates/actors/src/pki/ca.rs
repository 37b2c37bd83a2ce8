//! The certificate authority: made once at the hub, reloaded from its two
//! PEM files, and used to sign the certificates of hosts and of the hub.
//!
//! Owns the CA's parameters (CN `Flotilla CA <name>`, path length 0) and
//! what a signed certificate must contain for its [`Subject`]. Must not read
//! the clock or touch files: callers pass `now` and PEM text.

use rcgen::{
    BasicConstraints, CertificateParams, CertificateSigningRequestParams, DnType, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::CertificateDer;

use super::inspect::{CertInfo, Fingerprint, fingerprint};
use super::issue::{Issued, Subject};
use super::{PkiError, Validity, generate_key, random_serial};

/// A loaded certificate authority: its certificate and its signing key.
pub struct CertificateAuthority {
    /// The CA certificate as written to `ca.pem`.
    cert_pem: String,
    /// The same certificate as DER, what TLS trusts and what is fingerprinted.
    cert_der: CertificateDer<'static>,
    /// The subject and key that sign new certificates.
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    /// Makes a new CA named `Flotilla CA <name>` with a fresh ECDSA P-256 key.
    pub fn create(name: &str, validity: Validity) -> Result<Self, PkiError> {
        if name.trim().is_empty() || name.len() > 64 {
            return Err(PkiError::InvalidName {
                name: name.to_owned(),
                reason: "a CA name must have 1 to 64 characters".to_owned(),
            });
        }
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, format!("Flotilla CA {name}"));
        params
            .distinguished_name
            .push(DnType::OrganizationName, "Flotilla");
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.serial_number = Some(random_serial()?);
        validity.apply(&mut params)?;
        let key = generate_key()?;
        let cert = params
            .self_signed(&key)
            .map_err(|source| PkiError::Generate {
                what: "the CA certificate",
                source,
            })?;
        Ok(Self {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        })
    }

    /// Reloads a CA from the PEM text of its certificate and key, checking
    /// that the key belongs to the certificate.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, PkiError> {
        let key = KeyPair::from_pem(key_pem).map_err(|e| PkiError::BadCa {
            what: "key",
            reason: e.to_string(),
        })?;
        let cert_der = super::inspect::der_from_pem(cert_pem).map_err(|e| PkiError::BadCa {
            what: "certificate",
            reason: e.to_string(),
        })?;
        let info = CertInfo::ca_from_der(&cert_der)?;
        if info.public_key != key.public_key_raw() {
            return Err(PkiError::KeyMismatch);
        }
        let issuer = Issuer::from_ca_cert_der(&cert_der, key).map_err(|e| PkiError::BadCa {
            what: "certificate",
            reason: e.to_string(),
        })?;
        Ok(Self {
            cert_pem: cert_pem.to_owned(),
            cert_der,
            issuer,
        })
    }

    /// Reloads a CA from its two PEM files (`ca.pem`, `ca.key`).
    pub fn load(cert_path: &std::path::Path, key_path: &std::path::Path) -> Result<Self, PkiError> {
        let cert_pem = super::files::read_pem(cert_path)?;
        let key_pem = super::files::read_pem(key_path)?;
        Self::from_pem(&cert_pem, &key_pem)
    }

    /// The CA certificate, PEM (the content of `ca.pem`).
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate, DER: the one root that TLS trusts.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// The CA's private key, PEM (the content of `ca.key`; write it with
    /// [`super::files::write_private_key`]).
    pub fn key_pem(&self) -> String {
        self.issuer.key().serialize_pem()
    }

    /// The CA fingerprint, `sha256:` + hex of the certificate DER, which a
    /// host checks when it enrolls.
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint(&self.cert_der)
    }

    /// Signs a host's CSR for `subject`. The CA decides what goes in the
    /// certificate: only the public key is taken from the request, and a
    /// request naming someone else is refused.
    pub fn sign_csr(
        &self,
        csr_pem: &str,
        subject: &Subject,
        validity: Validity,
    ) -> Result<Issued, PkiError> {
        let mut csr =
            CertificateSigningRequestParams::from_pem(csr_pem).map_err(PkiError::BadCsr)?;
        if let Some(requested) = super::issue::requested_name(&csr.params)
            && requested != subject.name()
        {
            return Err(PkiError::CsrNameMismatch {
                requested,
                issuing: subject.name().to_owned(),
            });
        }
        csr.params = subject.params(validity)?;
        let cert = csr
            .signed_by(&self.issuer)
            .map_err(|source| PkiError::Generate {
                what: "the certificate",
                source,
            })?;
        Ok(Issued::new(cert, None))
    }

    /// Makes a key and a certificate together, for issuing at the CA
    /// (`flotilla certs issue --name HOST`); the key must then be carried to
    /// the host, so prefer [`Self::sign_csr`].
    pub fn issue(&self, subject: &Subject, validity: Validity) -> Result<Issued, PkiError> {
        let key = generate_key()?;
        let cert = subject
            .params(validity)?
            .signed_by(&key, &self.issuer)
            .map_err(|source| PkiError::Generate {
                what: "the certificate",
                source,
            })?;
        Ok(Issued::new(cert, Some(key.serialize_pem())))
    }
}
