//! What a certificate says: whose it is (its first DNS SAN), until when,
//! its serial and its fingerprint.
//!
//! Owns the fingerprint format (`sha256:` + lowercase hex of the DER) and
//! the reading of DER with x509-parser. Must not verify chains (rustls does)
//! or touch files.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use x509_parser::extensions::GeneralName;

use super::PkiError;

/// SHA-256 of a certificate's DER. Shown as `sha256:` + 64 lowercase hex
/// digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub [u8; 32]);

/// The fingerprint of a DER certificate.
pub fn fingerprint(der: &[u8]) -> Fingerprint {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(digest.as_ref());
    Fingerprint(bytes)
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Why text is not a fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a certificate fingerprint: expected \"sha256:\" and 64 hex digits, as printed by `flotilla certs show`"
)]
pub struct FingerprintError(String);

impl std::str::FromStr for Fingerprint {
    type Err = FingerprintError;
    fn from_str(s: &str) -> Result<Self, FingerprintError> {
        let bad = || FingerprintError(s.to_owned());
        let hex = s.strip_prefix("sha256:").ok_or_else(bad)?;
        let bytes = decode_hex(hex).ok_or_else(bad)?;
        Ok(Self(bytes.try_into().map_err(|_| bad())?))
    }
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect()
}

/// A certificate's serial number, without leading zero bytes. Shown as
/// lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Serial(pub Vec<u8>);

impl Serial {
    /// Normalizes big-endian serial bytes (drops leading zeros).
    pub fn from_be_bytes(bytes: &[u8]) -> Self {
        let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
        Self(bytes[start..].to_vec())
    }
}

impl Serial {
    /// Reads the serial of a DER certificate.
    pub fn of_certificate(der: &[u8]) -> Result<Self, PkiError> {
        let (_, cert) =
            x509_parser::parse_x509_certificate(der).map_err(|e| PkiError::Parse(e.to_string()))?;
        Ok(Self::from_be_bytes(cert.tbs_certificate.raw_serial()))
    }
}

impl fmt::Display for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for Serial {
    type Err = FingerprintError;
    fn from_str(s: &str) -> Result<Self, FingerprintError> {
        decode_hex(s)
            .filter(|b| !b.is_empty())
            .map(|b| Self::from_be_bytes(&b))
            .ok_or_else(|| FingerprintError(s.to_owned()))
    }
}

/// What Flotilla reads from a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// The holder's Flotilla name: the first DNS SAN.
    pub name: String,
    /// Every DNS SAN, the name first.
    pub dns_names: Vec<String>,
    /// The first instant it is valid.
    pub not_before: SystemTime,
    /// The last instant it is valid.
    pub not_after: SystemTime,
    /// Its IP address SANs (a hub's, to be dialed).
    pub ip_addresses: Vec<std::net::IpAddr>,
    /// Its serial number.
    pub serial: Serial,
    /// SHA-256 of its DER.
    pub fingerprint: Fingerprint,
    /// Whether it is a CA certificate.
    pub is_ca: bool,
    /// The subject public key bits, to match a key against it.
    pub(super) public_key: Vec<u8>,
}

impl CertInfo {
    /// Reads a host's or hub's certificate; one without a DNS name is refused.
    pub fn from_der(der: &[u8]) -> Result<Self, PkiError> {
        let info = Self::parse(der)?;
        if info.name.is_empty() {
            return Err(PkiError::NoName);
        }
        Ok(info)
    }

    /// Reads a CA certificate (which has no DNS name).
    pub fn ca_from_der(der: &[u8]) -> Result<Self, PkiError> {
        let info = Self::parse(der)?;
        if !info.is_ca {
            return Err(PkiError::BadCa {
                what: "certificate",
                reason: "it is not a CA certificate".to_owned(),
            });
        }
        Ok(info)
    }

    /// Reads the first certificate of a PEM text, which must be a CA's.
    pub fn ca_from_pem(pem: &str) -> Result<Self, PkiError> {
        Self::ca_from_der(&der_from_pem(pem)?)
    }

    /// Reads the first certificate of a PEM text.
    pub fn from_pem(pem: &str) -> Result<Self, PkiError> {
        Self::from_der(&der_from_pem(pem)?)
    }

    fn parse(der: &[u8]) -> Result<Self, PkiError> {
        let (rest, cert) =
            x509_parser::parse_x509_certificate(der).map_err(|e| PkiError::Parse(e.to_string()))?;
        if !rest.is_empty() {
            return Err(PkiError::Parse(format!("{} trailing bytes", rest.len())));
        }
        let dns_names: Vec<String> = match cert.subject_alternative_name() {
            Ok(Some(san)) => san
                .value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    GeneralName::DNSName(dns) => Some((*dns).to_owned()),
                    _ => None,
                })
                .collect(),
            Ok(None) => Vec::new(),
            Err(e) => return Err(PkiError::Parse(e.to_string())),
        };
        let not_after = cert.validity().not_after.timestamp();
        let not_before = cert.validity().not_before.timestamp();
        let ip_addresses = match cert.subject_alternative_name() {
            Ok(Some(san)) => san
                .value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    GeneralName::IPAddress(bytes) => ip_of(bytes),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(Self {
            name: dns_names.first().cloned().unwrap_or_default(),
            dns_names,
            not_before: UNIX_EPOCH + Duration::from_secs(u64::try_from(not_before).unwrap_or(0)),
            not_after: UNIX_EPOCH + Duration::from_secs(u64::try_from(not_after).unwrap_or(0)),
            ip_addresses,
            serial: Serial::from_be_bytes(cert.tbs_certificate.raw_serial()),
            fingerprint: fingerprint(der),
            is_ca: cert.is_ca(),
            public_key: cert.public_key().subject_public_key.data.to_vec(),
        })
    }
}

fn ip_of(bytes: &[u8]) -> Option<std::net::IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(std::net::IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(std::net::IpAddr::from),
        _ => None,
    }
}

/// The DER of the first certificate in a PEM text.
pub(super) fn der_from_pem(pem: &str) -> Result<CertificateDer<'static>, PkiError> {
    CertificateDer::from_pem_slice(pem.as_bytes()).map_err(|e| PkiError::Parse(e.to_string()))
}
