//! A home that runs the hub: `flotilla hub init` (the CA, the hub's
//! certificate and `[hub_server]` in `config.toml`) and `flotilla hub run`
//! (the hub's endpoint, its enrollment listener and the watchers of the
//! revocation list and of the group list `hub-groups.toml`, in the
//! foreground until SIGTERM or SIGINT, advertised over mDNS unless
//! `[hub_server] advertise = false`, and serving the read-only web roster
//! when `[hub_server] web` is set), and `flotilla hub web` (that roster in
//! its own process).
//!
//! Owns the glue between a [`Home`] and the hub crate: where the files are
//! and which config key says where to listen. The certificates are made by
//! `flotilla_hub::setup`; the endpoint is `flotilla_hub::HubEndpoint`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use flotilla_actors::federation::HubHandshake;
use flotilla_actors::pki::AltName;
use flotilla_actors::tls::Revocations;
use flotilla_hub::control::{self, HubControlError};
use flotilla_hub::core::{CoreArgs, CoreRef, HubCore, QueueLimits};
use flotilla_hub::discovery::mdns::Advertised;
use flotilla_hub::discovery::{Addresses, Advertisement};
use flotilla_hub::enroll::{EnrollAuthority, EnrollServer};
use flotilla_hub::group_policy::GroupPolicy;
use flotilla_hub::groups_file::{self, GroupsFile, GroupsFileError};
use flotilla_hub::outbound::DEFAULT_LINK_QUEUE_BYTES;
use flotilla_hub::revocation_list;
use flotilla_hub::setup::{self, CertPaths, Initialized, SetupError};
use flotilla_hub::store::{HubStore, HubStoreError};
use flotilla_hub::view::HubRosterReply;
use flotilla_hub::web::{WebError, WebServer};
use flotilla_hub::{BindError, HubEndpoint};
use ractor::Actor;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::config::{ConfigError, HostConfig, HubServerConfig, write_hub_server};
use crate::enrollment;
use crate::home::{Home, HomeError};

/// Why the hub could not be set up or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubServerError {
    /// The home cannot be used.
    #[error(transparent)]
    Home(#[from] HomeError),
    /// `config.toml` is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The certificates could not be made or read.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The listen address is not `IP:PORT`.
    #[error(
        "{0:?} is not a usable listen address; use IP:PORT, for example 0.0.0.0:7700 (all interfaces) or 127.0.0.1:7700"
    )]
    Listen(String),
    /// This home has no hub.
    #[error(
        "this home runs no hub ([hub_server] is missing from {0}); run `flotilla hub init --name HUB` first"
    )]
    NotInitialized(String),
    /// The endpoint could not bind.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The revocation list could not be read.
    #[error(transparent)]
    Revocations(#[from] flotilla_hub::StoreError),
    /// The group list could not be read or written.
    #[error(transparent)]
    Groups(#[from] GroupsFileError),
    /// Signals or the control socket could not be set up.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The hub's store could not be opened.
    #[error(transparent)]
    Store(#[from] HubStoreError),
    /// The hub's core did not start.
    #[error("the hub's core could not start: {0}")]
    Core(String),
    /// The running hub could not be asked.
    #[error(transparent)]
    Control(#[from] HubControlError),
    /// The web roster could not start.
    #[error(transparent)]
    Web(#[from] WebError),
}

/// What `hub init` did.
#[derive(Debug, Clone)]
pub struct HubInit {
    /// The certificates made.
    pub made: Initialized,
    /// The address recorded in `config.toml`.
    pub listen: SocketAddr,
    /// The enrollment address recorded in `config.toml`.
    pub enroll_listen: SocketAddr,
    /// Where the certificates are.
    pub certs: CertPaths,
}

/// Where `hub init` records the hub listens.
#[derive(Debug, Clone, Copy)]
pub struct Listen<'a> {
    /// The main port, `IP:PORT`.
    pub main: &'a str,
    /// The enrollment port, `IP:PORT` (default: the main IP, next port).
    pub enroll: Option<&'a str>,
}

/// Makes the CA and the hub's certificate under `home` (refusing if a CA
/// exists) and records `[hub_server]` in its `config.toml`. The listen
/// address, if it is a specific IP, is added to the certificate's names.
pub fn init(
    home: &Home,
    name: &str,
    listen: Listen<'_>,
    sans: &[String],
    now: SystemTime,
) -> Result<HubInit, HubServerError> {
    let addr: SocketAddr = listen
        .main
        .parse()
        .map_err(|_| HubServerError::Listen(listen.main.to_owned()))?;
    home.prepare()?;
    HostConfig::load(&home.config_file)?;
    let mut extra: Vec<AltName> = sans.iter().map(|s| alt_name(s)).collect();
    if !addr.ip().is_unspecified() && !extra.contains(&AltName::Ip(addr.ip())) {
        extra.push(AltName::Ip(addr.ip()));
    }
    let mut server = HubServerConfig::new(name.to_owned(), addr.to_string());
    server.enroll_listen = listen.enroll.map(str::to_owned);
    let enroll_listen = server.enroll_addr().map_err(HubServerError::Listen)?;
    server.enroll_listen = Some(enroll_listen.to_string());
    let certs = CertPaths::new(&home.certs_dir);
    let made = setup::init(&certs, name, extra, now)?;
    write_hub_server(&home.config_file, &server)?;
    Ok(HubInit {
        made,
        listen: addr,
        enroll_listen,
        certs,
    })
}

fn alt_name(s: &str) -> AltName {
    match s.parse() {
        Ok(ip) => AltName::Ip(ip),
        Err(_) => AltName::Dns(s.to_owned()),
    }
}

/// Runs the hub of `home` until SIGTERM or SIGINT: the main endpoint, the
/// enrollment listener, and the watcher of the revocation list. Logs go to
/// stderr and `logs/hub.log`.
pub async fn run(home: &Home) -> Result<(), HubServerError> {
    home.prepare()?;
    crate::logging::init_named(home, "hub.log")?;
    let config = HostConfig::load(&home.config_file)?;
    let server = config
        .hub_server
        .ok_or_else(|| HubServerError::NotInitialized(home.config_file.display().to_string()))?;
    let addr = server.listen_addr().map_err(HubServerError::Listen)?;
    let enroll_addr = server.enroll_addr().map_err(HubServerError::Listen)?;
    let certs = CertPaths::new(&home.certs_dir);
    let (enroll_store, list) = enrollment::hub_records(home);
    let revocations = Revocations::new();
    list.apply(&revocations)?;
    let groups = hub_groups(home);
    let (core, core_task) = start_core(home, &server, groups.load()?).await?;
    let control = control::bind(&hub_socket(home))?;
    let control_task = tokio::spawn(control::serve(control, core.clone()));
    let web = match &server.web {
        Some(listen) => Some(WebServer::bind(listen).await?),
        None => None,
    };
    let quic = setup::hub_server_config(&certs, revocations.clone())?;
    let link_queue = server
        .link_queue_bytes
        .map_or(DEFAULT_LINK_QUEUE_BYTES, |b| {
            usize::try_from(b).unwrap_or(usize::MAX)
        });
    let reset = setup::hub_endpoint_config(&certs)?;
    let endpoint = HubEndpoint::bind(addr, reset, quic, HubHandshake::new(server.name.clone()))?
        .with_core(core.clone())
        .with_link_queue_bytes(link_queue)
        .with_budget(server.host_budget());
    let authority = EnrollAuthority {
        certs: certs.clone(),
        store: enroll_store,
        hub_name: server.name.clone(),
        hub_addrs: enrollment::dial_pairs(home, &server, &[])
            .map(|pairs| pairs.into_iter().map(|p| p.hub).collect())
            .unwrap_or_default(),
        host_validity: server.host_validity(),
    };
    let enroll_quic = setup::enroll_server_config(&certs, revocations.clone())?;
    let enroller = EnrollServer::bind(enroll_addr, enroll_quic, authority)?;
    let bound = endpoint.local_addr()?;
    tracing::info!(
        hub = %server.name,
        listen = %bound,
        enroll = %enroller.local_addr()?,
        "hub listening"
    );
    let (stop, stopped) = watch::channel(false);
    let until_stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    let enrolling = tokio::spawn(enroller.run(until_stopped(stopped.clone())));
    let watching = tokio::spawn(revocation_list::watch(
        list,
        revocations,
        endpoint.live_links(),
        until_stopped(stopped.clone()),
    ));
    let serving_web = web.map(|web| {
        announce_web(&web);
        tokio::spawn(web.serve(hub_socket(home), until_stopped(stopped.clone())))
    });
    let following = tokio::spawn(groups_file::watch(
        groups,
        core.clone(),
        until_stopped(stopped),
    ));
    let advertised = match server.advertise {
        true => advertise(home, &server.name, bound),
        false => None,
    };
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    endpoint
        .run(async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM received"),
                _ = int.recv() => tracing::info!("SIGINT received"),
            }
            let _ = stop.send(true);
        })
        .await;
    if let Some(advertised) = advertised {
        advertised.withdraw().await;
    }
    control_task.abort();
    if let Some(serving_web) = serving_web {
        serving_web.abort();
    }
    let _ = std::fs::remove_file(hub_socket(home));
    core.stop(None);
    let _ = tokio::join!(core_task, enrolling, watching, following);
    tracing::info!("hub stopped");
    Ok(())
}

/// Says where the web roster of `hub run` is: its URL with the token,
/// once, on stderr only (the log file gets the address without it).
fn announce_web(web: &WebServer) {
    match (web.local_addr(), web.url()) {
        (Ok(addr), Ok(url)) => {
            tracing::info!(listen = %addr, "web roster listening (its URL and token are on stderr only)");
            eprintln!("web roster: {url}");
        }
        (Err(e), _) | (_, Err(e)) => tracing::warn!("web roster: {e}"),
    }
}

/// What `flotilla hub web` started: where, and the URL (with the token).
#[derive(Debug, Clone)]
pub struct WebStarted {
    /// The address it listens on.
    pub listen: SocketAddr,
    /// The URL to open, the token in its fragment.
    pub url: String,
}

/// `flotilla hub web`: serves the read-only web roster of the hub running
/// from `home` on `listen` (default `[hub_server] web`, else
/// 127.0.0.1:7780), until SIGTERM or SIGINT. Refuses a non-loopback
/// address, and fails at once if no hub answers; `started` is told the URL
/// once the listener is bound.
pub async fn web(
    home: &Home,
    listen: Option<String>,
    started: impl FnOnce(&WebStarted) -> std::io::Result<()>,
) -> Result<(), HubServerError> {
    let config = HostConfig::load(&home.config_file)?;
    let listen = listen
        .or_else(|| config.hub_server.and_then(|s| s.web))
        .unwrap_or_else(|| flotilla_hub::web::DEFAULT_LISTEN.to_owned());
    flotilla_hub::web::check_listen(&listen)?;
    let socket = hub_socket(home);
    control::roster(&socket).await?;
    let web = WebServer::bind(&listen).await?;
    started(&WebStarted {
        listen: web.local_addr()?,
        url: web.url()?,
    })?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    web.serve(socket, async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
    .await;
    Ok(())
}

/// Opens the hub's store and starts its core.
async fn start_core(
    home: &Home,
    server: &HubServerConfig,
    policy: GroupPolicy,
) -> Result<(CoreRef, tokio::task::JoinHandle<()>), HubServerError> {
    let store = HubStore::open(&hub_store_file(home))?;
    let limits = QueueLimits {
        ttl: Duration::from_secs(server.queue_ttl_secs),
        max_messages: server.queue_max_messages,
        max_bytes: server.queue_max_bytes,
        forget_hosts_after: server.forget_hosts_after_secs.map_or(
            QueueLimits::default().forget_hosts_after,
            Duration::from_secs,
        ),
    };
    let args = CoreArgs {
        hub: server.name.clone(),
        store,
        limits,
        policy,
    };
    Actor::spawn(None, HubCore, args)
        .await
        .map_err(|e| HubServerError::Core(e.to_string()))
}

/// The hub's store in `home`.
pub fn hub_store_file(home: &Home) -> PathBuf {
    home.state_dir.join("hub.redb")
}

/// The hub's group list in `home`: `hub-groups.toml` next to `config.toml`.
pub fn hub_groups(home: &Home) -> GroupsFile {
    GroupsFile::new(home.config_file.with_file_name(groups_file::FILE_NAME))
}

/// The hub's control socket in `home` (`flotilla hub roster` asks there).
pub fn hub_socket(home: &Home) -> PathBuf {
    home.run_dir.join("hub.sock")
}

/// Asks the hub running from `home` for the federation's roster.
pub async fn roster(home: &Home) -> Result<HubRosterReply, HubServerError> {
    Ok(control::roster(&hub_socket(home)).await?)
}

/// [`roster`] read as `R`: any shape its JSON fits (see
/// [`control::roster_as`]).
pub async fn roster_as<R: serde::de::DeserializeOwned>(home: &Home) -> Result<R, HubServerError> {
    Ok(control::roster_as(&hub_socket(home)).await?)
}

/// [`roster`] as the hub wrote it (`flotilla.hub-roster.v1`), not read
/// into types but passed through `into`: for `hub roster --json`, which
/// only prints it.
pub async fn roster_to<S: serde::Serializer>(home: &Home, into: S) -> Result<(), HubServerError> {
    Ok(control::roster_to(&hub_socket(home), into).await?)
}

/// Advertises the hub over mDNS (`_flotilla-hub._udp.local.`, TXT `fp`,
/// `name`, `v`) on the port it is bound to, at the addresses it listens on.
/// A failure is logged, not fatal: hosts can still be given the address.
fn advertise(home: &Home, name: &str, bound: SocketAddr) -> Option<Advertised> {
    let Some(addrs) = Addresses::of_bound(bound.ip()) else {
        tracing::info!("the hub listens on loopback only, so it is not advertised over mDNS");
        return None;
    };
    let ca = match setup::ca_fingerprint(&CertPaths::new(&home.certs_dir)) {
        Ok(ca) => ca,
        Err(e) => {
            tracing::warn!("the hub runs but is not advertised over mDNS: {e}");
            return None;
        }
    };
    let mut ad = Advertisement::hub(name, bound.port(), &ca);
    ad.addrs = addrs;
    Advertised::start(&ad, "hub")
}
