//! `flotilla host join TOKEN`: make this host's key, have the hub sign it
//! over the enrollment channel, and store what a link needs.
//!
//! Owns the order of writes: nothing is written until the hub has issued;
//! then the new key (0600, never sent) and certificate replace any old
//! ones by rename, `ca.pem` is written, and `config.toml` gets `hub`,
//! `hub_name` (and `name` if it had none), so `flotilla up` links.

use std::path::Path;
use std::time::Duration;

use flotilla_actors::federation::enroll::EnrollToken;
use flotilla_actors::pki::{CertInfo, Fingerprint, PkiError, Subject, files, make_csr};
use flotilla_hub::enroll::client::{self, EnrollClientError};
use flotilla_hub::setup::CertPaths;

use super::EnrollmentError;
use super::config_edit::{HubLinkSettings, write_hub_link};
use crate::config::HostConfig;
use crate::home::Home;

/// Time allowed for the whole enrollment exchange.
const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What `host join` did.
#[derive(Debug)]
pub struct Joined {
    /// The decoded token.
    pub token: EnrollToken,
    /// The hub address written to `config.toml`.
    pub hub_addr: String,
    /// This host's new certificate.
    pub certificate: CertInfo,
    /// The CA's fingerprint (equal to the token's).
    pub ca_fingerprint: Fingerprint,
    /// Where the files went.
    pub certs: CertPaths,
}

/// Enrolls this home's host with `token_text`.
pub async fn join(home: &Home, token_text: &str) -> Result<Joined, EnrollmentError> {
    let token = EnrollToken::parse(token_text)?;
    home.prepare()?;
    if let Some(name) = HostConfig::load(&home.config_file)?.name
        && name != token.host
    {
        return Err(EnrollmentError::NameMismatch {
            token: token.host.as_str().to_owned(),
            home: name.as_str().to_owned(),
        });
    }
    let csr = make_csr(&Subject::host(&token.host))?;
    let joined = client::join(&token, &csr.csr_pem, JOIN_TIMEOUT).await?;
    let issued = &joined.issued;
    let certificate = CertInfo::from_pem(&issued.cert_pem)?;
    let ca_fingerprint = check_answer(&token, &certificate, &issued.ca_pem)?;
    let certs = CertPaths::new(&home.certs_dir);
    install(&certs, &csr.key_pem, &issued.cert_pem, &issued.ca_pem)?;
    let link = HubLinkSettings {
        addr: &joined.hub_addr,
        name: &token.hub_name,
        enroll: &joined.enroll_addr,
    };
    write_hub_link(&home.config_file, &link, &token.host)?;
    Ok(Joined {
        token,
        hub_addr: joined.hub_addr,
        certificate,
        ca_fingerprint,
        certs,
    })
}

/// The hub's answer must be for this host and come with the pinned CA.
fn check_answer(
    token: &EnrollToken,
    certificate: &CertInfo,
    ca_pem: &str,
) -> Result<Fingerprint, EnrollmentError> {
    let protocol = |what: String| EnrollmentError::Client(EnrollClientError::Protocol(what));
    let ca = CertInfo::ca_from_pem(ca_pem)?;
    if ca.fingerprint.to_string() != token.ca_fingerprint {
        return Err(protocol(format!(
            "the hub sent CA {} but the token names {}",
            ca.fingerprint, token.ca_fingerprint
        )));
    }
    if certificate.name != token.host.as_str() {
        return Err(protocol(format!(
            "the hub issued a certificate for {:?}, not {}",
            certificate.name, token.host
        )));
    }
    Ok(ca.fingerprint)
}

/// Writes the key, certificate and CA, replacing earlier ones.
pub(super) fn install(
    certs: &CertPaths,
    key_pem: &str,
    cert_pem: &str,
    ca_pem: &str,
) -> Result<(), EnrollmentError> {
    files::ensure_private_dir(&certs.dir)?;
    replace_key(&certs.host_key(), key_pem)?;
    files::write_certificate(&certs.host_cert(), cert_pem)?;
    files::write_certificate(&certs.ca_cert(), ca_pem)?;
    Ok(())
}

/// Writes a new 0600 key beside `path`, then renames it over `path`.
pub(super) fn replace_key(path: &Path, key_pem: &str) -> Result<(), EnrollmentError> {
    let fresh = path.with_extension("key.new");
    let _ = std::fs::remove_file(&fresh);
    files::write_private_key(&fresh, key_pem)?;
    std::fs::rename(&fresh, path).map_err(|source| PkiError::Io {
        action: "could not install",
        path: path.to_owned(),
        source,
    })?;
    Ok(())
}
