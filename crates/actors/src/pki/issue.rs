//! What goes into a host's or the hub's certificate, and the host's side of
//! issuing: a key and a certificate signing request.
//!
//! Owns the [`Subject`] rules (the name is both the CN and the first DNS
//! SAN; hosts are TLS clients, the hub a TLS server) and the CSR. Must not
//! touch files or read the clock.

use std::net::IpAddr;

use rcgen::{
    CertificateParams, DnType, DnValue, ExtendedKeyUsagePurpose, KeyUsagePurpose, SanType,
};
use rustls::pki_types::CertificateDer;

use super::{PkiError, Validity, generate_key, random_serial};
use crate::names::HostName;

/// Who a certificate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A host daemon: a TLS client of the hub.
    Host,
    /// The hub: a TLS server for hosts.
    Hub,
}

/// A further name the hub may be reached by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AltName {
    /// A DNS name.
    Dns(String),
    /// An IP address.
    Ip(IpAddr),
}

/// The holder of a certificate: its role, its Flotilla name and, for the
/// hub, the other names it answers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// Decides the extended key usage.
    role: Role,
    /// The identity: CN and first DNS SAN.
    name: String,
    /// Further SANs (hub only).
    extra: Vec<AltName>,
}

impl Subject {
    /// A host, named by its (already valid) host name.
    pub fn host(name: &HostName) -> Self {
        Self {
            role: Role::Host,
            name: name.as_str().to_owned(),
            extra: Vec::new(),
        }
    }

    /// The hub, named `name` (a DNS name: what hosts pass as the server
    /// name), reachable also by `extra`.
    pub fn hub(name: &str, extra: Vec<AltName>) -> Result<Self, PkiError> {
        check_dns(name)?;
        for alt in &extra {
            if let AltName::Dns(dns) = alt {
                check_dns(dns)?;
            }
        }
        Ok(Self {
            role: Role::Hub,
            name: name.to_owned(),
            extra,
        })
    }

    /// The Flotilla name the certificate will carry.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Host or hub.
    pub fn role(&self) -> Role {
        self.role
    }

    fn sans(&self) -> Result<Vec<SanType>, PkiError> {
        let mut sans = vec![dns_san(&self.name)?];
        for alt in &self.extra {
            sans.push(match alt {
                AltName::Dns(dns) => dns_san(dns)?,
                AltName::Ip(ip) => SanType::IpAddress(*ip),
            });
        }
        Ok(sans)
    }

    /// The parameters of the certificate the CA signs for this subject.
    pub(super) fn params(&self, validity: Validity) -> Result<CertificateParams, PkiError> {
        let mut params = self.request_params()?;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![match self.role {
            Role::Host => ExtendedKeyUsagePurpose::ClientAuth,
            Role::Hub => ExtendedKeyUsagePurpose::ServerAuth,
        }];
        params.use_authority_key_identifier_extension = true;
        params.serial_number = Some(random_serial()?);
        validity.apply(&mut params)?;
        Ok(params)
    }

    fn request_params(&self) -> Result<CertificateParams, PkiError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, self.name.clone());
        params.subject_alt_names = self.sans()?;
        Ok(params)
    }
}

fn check_dns(name: &str) -> Result<(), PkiError> {
    let invalid = |reason: &str| PkiError::InvalidName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if name.parse::<IpAddr>().is_ok() {
        return Err(invalid(
            "it is an IP address; name the hub with a DNS name and pass addresses as extra names",
        ));
    }
    rustls::pki_types::DnsName::try_from(name)
        .map(|_| ())
        .map_err(|_| {
            invalid("use a DNS name: letters, digits, '-' and '.' (for example \"hub.home.arpa\")")
        })
}

fn dns_san(name: &str) -> Result<SanType, PkiError> {
    let ia5 = name.try_into().map_err(|_| PkiError::InvalidName {
        name: name.to_owned(),
        reason: "only ASCII letters, digits, '-', '_' and '.' fit in a DNS name".to_owned(),
    })?;
    Ok(SanType::DnsName(ia5))
}

/// The name a CSR asks for: its first DNS SAN, else its CN.
pub(super) fn requested_name(params: &CertificateParams) -> Option<String> {
    let san = params.subject_alt_names.iter().find_map(|san| match san {
        SanType::DnsName(dns) => Some(dns.as_str().to_owned()),
        _ => None,
    });
    san.or_else(
        || match params.distinguished_name.get(&DnType::CommonName)? {
            DnValue::Utf8String(s) => Some(s.clone()),
            DnValue::PrintableString(s) => Some(s.as_str().to_owned()),
            DnValue::Ia5String(s) => Some(s.as_str().to_owned()),
            _ => None,
        },
    )
}

/// A certificate the CA made, and its key when the CA made that too.
pub struct Issued {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The certificate, DER.
    pub cert_der: CertificateDer<'static>,
    /// The private key, PEM, only from [`super::CertificateAuthority::issue`].
    pub key_pem: Option<String>,
}

impl Issued {
    pub(super) fn new(cert: rcgen::Certificate, key_pem: Option<String>) -> Self {
        Self {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            key_pem,
        }
    }
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued")
            .field("fingerprint", &super::fingerprint(&self.cert_der))
            .field("has_key", &self.key_pem.is_some())
            .finish()
    }
}

/// A host's new key and its certificate signing request. The key stays on
/// the host; only `csr_pem` goes to the CA.
pub struct Csr {
    /// The private key, PEM; write it with
    /// [`super::files::write_private_key`].
    pub key_pem: String,
    /// The request, PEM, to send to the CA.
    pub csr_pem: String,
}

impl std::fmt::Debug for Csr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Csr")
            .field("csr_pem", &self.csr_pem)
            .finish_non_exhaustive()
    }
}

/// Makes a fresh ECDSA P-256 key and a CSR asking for `subject`'s name.
pub fn make_csr(subject: &Subject) -> Result<Csr, PkiError> {
    let key = generate_key()?;
    let generate = |source| PkiError::Generate {
        what: "the certificate signing request",
        source,
    };
    let csr = subject
        .request_params()?
        .serialize_request(&key)
        .map_err(generate)?;
    Ok(Csr {
        key_pem: key.serialize_pem(),
        csr_pem: csr.pem().map_err(generate)?,
    })
}
