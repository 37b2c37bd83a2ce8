//! The certificate files of a home and what is made from them: `hub init`
//! (the CA and the hub's certificate), `certs issue` (a host's key and
//! certificate, made at the CA), `certs show` (what a home holds), and the
//! QUIC configs of the hub and of a host.
//!
//! Owns the file names inside a home's `certs/` directory ([`CertPaths`])
//! and the rule that a CA is never overwritten. Takes `now` from the caller;
//! knows nothing of where a home is (the host crate resolves it) nor of
//! `config.toml`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use flotilla_actors::names::HostName;
use flotilla_actors::pki::{
    AltName, CA_VALIDITY, CertInfo, CertificateAuthority, Fingerprint, PkiError, Role, Subject,
    Validity, files,
};
use flotilla_actors::tls::{self, Revocations, TlsError, TlsIdentity};

use crate::transport::{self, QuicConfigError};

/// Why certificates could not be made, read or turned into a config.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A CA already exists here; it is never replaced.
    #[error(
        "a CA already exists in {0}; refusing to replace it (every host enrolled with it would be cut off). \
         Use another --home, or move the certs/ directory away first if you really mean to start over"
    )]
    CaExists(PathBuf),
    /// This home holds no CA, so it cannot issue.
    #[error(
        "no CA in {0} (ca.pem and ca.key); run `flotilla hub init --name HUB` here first, \
         or pass the --home of the hub that holds the CA"
    )]
    NoCa(PathBuf),
    /// A file this needs is missing.
    #[error("{what} is missing: {path}; {hint}")]
    Missing {
        /// What the file is.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// What to do.
        hint: &'static str,
    },
    /// A certificate or key could not be made, read or written.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// TLS refused the certificates.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// QUIC cannot use the TLS config.
    #[error(transparent)]
    Quic(#[from] QuicConfigError),
}

/// The files of a home's `certs/` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertPaths {
    /// The directory (mode 0700).
    pub dir: PathBuf,
}

impl CertPaths {
    /// The files under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }
    /// The CA certificate, trusted by every host and the hub.
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    /// The CA key (at the hub only).
    pub fn ca_key(&self) -> PathBuf {
        self.dir.join("ca.key")
    }
    /// The hub's certificate.
    pub fn hub_cert(&self) -> PathBuf {
        self.dir.join("hub.pem")
    }
    /// The hub's key.
    pub fn hub_key(&self) -> PathBuf {
        self.dir.join("hub.key")
    }
    /// A host's certificate.
    pub fn host_cert(&self) -> PathBuf {
        self.dir.join("host.pem")
    }
    /// A host's key.
    pub fn host_key(&self) -> PathBuf {
        self.dir.join("host.key")
    }

    fn require(
        &self,
        what: &'static str,
        path: PathBuf,
        hint: &'static str,
    ) -> Result<PathBuf, SetupError> {
        if path.exists() {
            Ok(path)
        } else {
            Err(SetupError::Missing { what, path, hint })
        }
    }
}

/// One certificate as `certs show` and the reports describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSummary {
    /// The holder's name (the CA's is empty).
    pub name: String,
    /// Its DNS names.
    pub dns_names: Vec<String>,
    /// SHA-256 of its DER.
    pub fingerprint: Fingerprint,
    /// Its serial, hex.
    pub serial: String,
    /// The last instant it is valid.
    pub not_after: SystemTime,
}

impl CertSummary {
    fn of(info: &CertInfo) -> Self {
        Self {
            name: info.name.clone(),
            dns_names: info.dns_names.clone(),
            fingerprint: info.fingerprint,
            serial: info.serial.to_string(),
            not_after: info.not_after,
        }
    }

    /// Whole days from `now` to `not_after` (negative once expired).
    pub fn days_left(&self, now: SystemTime) -> i64 {
        match self.not_after.duration_since(now) {
            Ok(left) => (left.as_secs() / 86_400) as i64,
            Err(past) => -((past.duration().as_secs() / 86_400) as i64) - 1,
        }
    }
}

/// What `hub init` made.
#[derive(Debug, Clone)]
pub struct Initialized {
    /// The CA.
    pub ca: CertSummary,
    /// The hub's certificate.
    pub hub: CertSummary,
}

/// Makes the CA and the hub's certificate in `paths`, refusing if a CA is
/// already there. The hub is named `name` (a DNS name) and reachable also
/// by `extra`.
pub fn init(
    paths: &CertPaths,
    name: &str,
    extra: Vec<AltName>,
    now: SystemTime,
) -> Result<Initialized, SetupError> {
    if paths.ca_cert().exists() || paths.ca_key().exists() {
        return Err(SetupError::CaExists(paths.dir.clone()));
    }
    let subject = Subject::hub(name, extra)?;
    let ca = CertificateAuthority::create(name, Validity::starting(now, CA_VALIDITY)?)?;
    let hub = ca.issue(&subject, Validity::default_for(Role::Hub, now))?;
    let hub_key = hub.key_pem.as_deref().unwrap_or_default();
    files::ensure_private_dir(&paths.dir)?;
    files::write_private_key(&paths.ca_key(), &ca.key_pem())?;
    files::write_certificate(&paths.ca_cert(), ca.cert_pem())?;
    files::write_private_key(&paths.hub_key(), hub_key)?;
    files::write_certificate(&paths.hub_cert(), &hub.cert_pem)?;
    Ok(Initialized {
        ca: ca_summary(&ca)?,
        hub: CertSummary::of(&CertInfo::from_der(&hub.cert_der)?),
    })
}

fn ca_summary(ca: &CertificateAuthority) -> Result<CertSummary, SetupError> {
    Ok(CertSummary::of(&CertInfo::ca_from_der(ca.cert_der())?))
}

/// What `certs issue` wrote.
#[derive(Debug, Clone)]
pub struct IssuedFiles {
    /// Where the host's files were written.
    pub out: CertPaths,
    /// The host's certificate.
    pub cert: CertSummary,
    /// The CA's fingerprint, for the host to check.
    pub ca_fingerprint: Fingerprint,
}

/// Issues a key and certificate for `host` with the CA in `ca_paths`, and
/// writes `host.key` (0600), `host.pem` and `ca.pem` into `out`: the files
/// to copy into that host's `certs/`. An existing key in `out` is never
/// replaced.
pub fn issue_host(
    ca_paths: &CertPaths,
    host: &HostName,
    out: &Path,
    now: SystemTime,
) -> Result<IssuedFiles, SetupError> {
    if !ca_paths.ca_key().exists() {
        return Err(SetupError::NoCa(ca_paths.dir.clone()));
    }
    let ca = CertificateAuthority::load(&ca_paths.ca_cert(), &ca_paths.ca_key())?;
    let issued = ca.issue(&Subject::host(host), Validity::default_for(Role::Host, now))?;
    let out = CertPaths::new(out);
    files::ensure_private_dir(&out.dir)?;
    files::write_private_key(
        &out.host_key(),
        issued.key_pem.as_deref().unwrap_or_default(),
    )?;
    files::write_certificate(&out.host_cert(), &issued.cert_pem)?;
    files::write_certificate(&out.ca_cert(), ca.cert_pem())?;
    Ok(IssuedFiles {
        out,
        cert: CertSummary::of(&CertInfo::from_der(&issued.cert_der)?),
        ca_fingerprint: ca.fingerprint(),
    })
}

/// One file's entry in [`Inventory`]: absent, read, or unreadable (why).
pub type Entry = Option<Result<CertSummary, String>>;

/// What a home's `certs/` holds (`certs show`); never a key's content.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// `ca.pem`.
    pub ca: Entry,
    /// Whether `ca.key` is present (this home is the CA).
    pub ca_key: bool,
    /// `hub.pem`.
    pub hub: Entry,
    /// `host.pem`.
    pub host: Entry,
}

/// Reads what `paths` holds.
pub fn inventory(paths: &CertPaths) -> Inventory {
    let read = |path: PathBuf, ca: bool| -> Entry {
        if !path.exists() {
            return None;
        }
        let summary = files::read_certificates(&path).and_then(|chain| {
            let info = if ca {
                CertInfo::ca_from_der(&chain[0])?
            } else {
                CertInfo::from_der(&chain[0])?
            };
            Ok(CertSummary::of(&info))
        });
        Some(summary.map_err(|e| e.to_string()))
    };
    Inventory {
        ca: read(paths.ca_cert(), true),
        ca_key: paths.ca_key().exists(),
        hub: read(paths.hub_cert(), false),
        host: read(paths.host_cert(), false),
    }
}

/// The hub's QUIC server config from `paths`: its certificate and key,
/// trusting client certificates from the CA there, minus `revocations`.
pub fn hub_server_config(
    paths: &CertPaths,
    revocations: Arc<Revocations>,
) -> Result<quinn::ServerConfig, SetupError> {
    const HINT: &str = "run `flotilla hub init --name HUB` in this home first";
    let ca = paths.require("the CA certificate", paths.ca_cert(), HINT)?;
    let cert = paths.require("the hub certificate", paths.hub_cert(), HINT)?;
    let key = paths.require("the hub key", paths.hub_key(), HINT)?;
    let root = files::read_certificates(&ca)?.remove(0);
    let identity = TlsIdentity::load(&cert, &key)?;
    let tls = tls::hub_server_config(&root, identity, revocations)?;
    Ok(transport::server_config(tls)?)
}

/// The hub's QUIC endpoint config from `paths`: a stateless-reset key
/// derived from the hub's key, the same after every restart
/// ([`transport::reset_key_seed`]).
pub fn hub_endpoint_config(paths: &CertPaths) -> Result<quinn::EndpointConfig, SetupError> {
    const HINT: &str = "run `flotilla hub init --name HUB` in this home first";
    let key = paths.require("the hub key", paths.hub_key(), HINT)?;
    let der = files::read_private_key(&key)?;
    Ok(transport::hub_endpoint_config(&transport::reset_key_seed(
        der.secret_der(),
    )))
}

/// The hub's enrollment QUIC server config from `paths`: the hub's
/// certificate followed by the CA's (a joining host checks the CA's
/// fingerprint), a client certificate optional but checked against the CA
/// and `revocations` when presented.
pub fn enroll_server_config(
    paths: &CertPaths,
    revocations: Arc<Revocations>,
) -> Result<quinn::ServerConfig, SetupError> {
    const HINT: &str = "run `flotilla hub init --name HUB` in this home first";
    let ca = paths.require("the CA certificate", paths.ca_cert(), HINT)?;
    let cert = paths.require("the hub certificate", paths.hub_cert(), HINT)?;
    let key = paths.require("the hub key", paths.hub_key(), HINT)?;
    let root = files::read_certificates(&ca)?.remove(0);
    let mut identity = TlsIdentity::load(&cert, &key)?;
    if identity.chain.last() != Some(&root) {
        identity.chain.push(root.clone());
    }
    let tls = tls::enroll_server_config(&root, identity, revocations)?;
    Ok(transport::server_config(tls)?)
}

/// A host's QUIC client config from `paths`: its certificate and key,
/// trusting only the CA there.
pub fn host_client_config(paths: &CertPaths) -> Result<quinn::ClientConfig, SetupError> {
    const HINT: &str = "issue this host's files at the hub with `flotilla certs issue --name HOST` \
                        and copy host.pem, host.key and ca.pem into this home's certs/";
    let ca = paths.require("the CA certificate", paths.ca_cert(), HINT)?;
    let cert = paths.require("this host's certificate", paths.host_cert(), HINT)?;
    let key = paths.require("this host's key", paths.host_key(), HINT)?;
    let root = files::read_certificates(&ca)?.remove(0);
    let identity = TlsIdentity::load(&cert, &key)?;
    let tls = tls::host_client_config(&root, identity)?;
    Ok(transport::client_config(tls)?)
}

/// The fingerprint of this home's CA certificate (`ca.pem`): what a hub
/// advertises and what `--hub auto` looks for.
pub fn ca_fingerprint(paths: &CertPaths) -> Result<Fingerprint, SetupError> {
    const HINT: &str = "copy the CA certificate (ca.pem) from the hub into this home's certs/";
    let ca = paths.require("the CA certificate", paths.ca_cert(), HINT)?;
    let root = files::read_certificates(&ca)?.remove(0);
    Ok(flotilla_actors::pki::fingerprint(&root))
}

#[cfg(test)]
mod tests;
