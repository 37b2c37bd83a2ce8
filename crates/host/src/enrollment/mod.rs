//! Enrollment, revocation and renewal, glued to a [`Home`]: `hub invite`
//! and `hub revoke` at the hub's home, `host join` at a host's, and the
//! renewal a host's link runs.
//!
//! Owns where the hub keeps its enrollment records (`state/hub/enroll/`)
//! and its revocation list (`state/hub/revoked.json`), and what `host join`
//! writes (the host's `certs/` and `hub`, `hub_name`, `name` in
//! `config.toml`). The protocol and its decisions are
//! `flotilla_actors::federation::enroll`'s; QUIC, the store and the
//! revocation list are `flotilla_hub`'s. Must not print: the CLI does.

pub mod addrs;
pub mod config_edit;
mod join;
pub mod renewal;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use flotilla_actors::federation::enroll::{
    EnrollToken, TokenError, base64url_encode, unix_seconds,
};
use flotilla_actors::names::HostName;
use flotilla_actors::pki::{CertInfo, PkiError, files};
use flotilla_hub::StoreError;
use flotilla_hub::enroll::client::EnrollClientError;
use flotilla_hub::enroll_store::EnrollStore;
use flotilla_hub::revocation_list::{RevocationList, RevokedEntry};
use flotilla_hub::setup::{CertPaths, SetupError};

pub use join::{Joined, join};

use crate::config::{ConfigError, HostConfig, HubServerConfig};
use crate::home::{Home, HomeError};

/// Why an invite, a join, a revocation or a renewal failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnrollmentError {
    /// The home cannot be used.
    #[error(transparent)]
    Home(#[from] HomeError),
    /// `config.toml` is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A config value is wrong.
    #[error("{0}")]
    ConfigValue(String),
    /// This home runs no hub.
    #[error(
        "this home runs no hub ([hub_server] is missing from {0}); run this on the hub's home, \
         or `flotilla hub init --name HUB` first"
    )]
    NotHub(PathBuf),
    /// The hub's certificates are missing or unreadable.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A certificate or key could not be made, read or written.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The hub's records failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No address for the token.
    #[error(transparent)]
    Addr(#[from] addrs::AddrError),
    /// The token text is not a token.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The token is for another host than this home.
    #[error(
        "this token enrolls host {token:?} but this home's config.toml names it {home:?}; \
         ask the hub operator for a token for {home} (flotilla hub invite {home}), or use another --home"
    )]
    NameMismatch {
        /// The host in the token.
        token: String,
        /// The name in config.toml.
        home: String,
    },
    /// The hub refused, could not be reached, or was not the expected hub.
    #[error(transparent)]
    Client(#[from] EnrollClientError),
    /// Nothing is recorded for the host.
    #[error(
        "no certificate issued to {0:?} is recorded at this hub (only certificates issued through \
         `flotilla host join` or renewal are); check the host's name"
    )]
    NothingToRevoke(String),
}

/// The hub's enrollment records and revocation list under `home`.
pub fn hub_records(home: &Home) -> (EnrollStore, RevocationList) {
    let dir = home.state_dir.join("hub");
    (
        EnrollStore::new(dir.join("enroll")),
        RevocationList::new(dir.join("revoked.json")),
    )
}

fn hub_server(home: &Home) -> Result<HubServerConfig, EnrollmentError> {
    HostConfig::load(&home.config_file)?
        .hub_server
        .ok_or_else(|| EnrollmentError::NotHub(home.config_file.clone()))
}

/// The pairs of addresses a token should carry for this hub.
pub fn dial_pairs(
    home: &Home,
    server: &HubServerConfig,
    overrides: &[String],
) -> Result<Vec<addrs::DialPair>, EnrollmentError> {
    let listen = server.listen_addr().map_err(EnrollmentError::ConfigValue)?;
    let enroll = server.enroll_addr().map_err(EnrollmentError::ConfigValue)?;
    let certs = CertPaths::new(&home.certs_dir);
    let (ips, dns) = if overrides.is_empty() && listen.ip().is_unspecified() {
        let chain = files::read_certificates(&certs.hub_cert())?;
        let info = CertInfo::from_der(&chain[0])?;
        (info.ip_addresses, info.dns_names)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(addrs::dial_pairs(listen, enroll, overrides, &ips, &dns)?)
}

/// What `hub invite` made.
#[derive(Debug)]
pub struct Invitation {
    /// The token line: the only copy of the secret.
    pub token: String,
    /// The decoded token (for `--json`; its Debug hides the secret).
    pub decoded: EnrollToken,
    /// When it stops working.
    pub expires: SystemTime,
}

/// Makes a single-use token for `host`, valid for `ttl`. Works whether or
/// not the hub runs: the invite is a file the running hub reads.
pub fn invite(
    home: &Home,
    host: &HostName,
    ttl: Duration,
    overrides: &[String],
    now: SystemTime,
) -> Result<Invitation, EnrollmentError> {
    home.prepare()?;
    let server = hub_server(home)?;
    let pairs = dial_pairs(home, &server, overrides)?;
    let certs = CertPaths::new(&home.certs_dir);
    let ca = files::read_certificates(&certs.ca_cert())?;
    let ca_fingerprint = CertInfo::ca_from_der(&ca[0])?.fingerprint;
    let (store, _) = hub_records(home);
    let made = store.create_invite(host, ttl, now)?;
    let decoded = EnrollToken {
        hub_name: server.name.clone(),
        hub_addrs: pairs.iter().map(|p| p.hub.clone()).collect(),
        enroll_addrs: pairs.iter().map(|p| p.enroll.clone()).collect(),
        ca_fingerprint: ca_fingerprint.to_string(),
        host: host.clone(),
        token_id: made.token_id,
        secret: base64url_encode(&made.secret),
    };
    Ok(Invitation {
        token: decoded.encode(),
        decoded,
        expires: made.expires,
    })
}

/// What `hub revoke` did.
#[derive(Debug)]
pub struct Revoked {
    /// Every certificate of the host now on the list.
    pub entries: Vec<RevokedEntry>,
    /// How many were not on it before.
    pub added: usize,
    /// The list file.
    pub list: PathBuf,
}

/// Revokes every certificate recorded for `host`. A running hub refuses
/// them and drops the host's link within about a second.
pub fn revoke(home: &Home, host: &HostName, now: SystemTime) -> Result<Revoked, EnrollmentError> {
    home.prepare()?;
    hub_server(home)?;
    let (store, list) = hub_records(home);
    let issued = store.issued(host.as_str())?;
    if issued.is_empty() {
        return Err(EnrollmentError::NothingToRevoke(host.as_str().to_owned()));
    }
    let entries: Vec<RevokedEntry> = issued
        .into_iter()
        .map(|r| RevokedEntry {
            host: host.as_str().to_owned(),
            serial: r.serial,
            fingerprint: r.fingerprint,
            revoked_unix: unix_seconds(now),
        })
        .collect();
    files::ensure_private_dir(list.path().parent().unwrap_or(&home.state_dir))?;
    let added = list.add(entries.clone())?.len();
    Ok(Revoked {
        entries,
        added,
        list: list.path().to_owned(),
    })
}
