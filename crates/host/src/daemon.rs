//! Running the daemon in the foreground: the start-up sequence, waiting for
//! a stop signal, and the graceful shutdown.
//!
//! Start: prepare the home, take the lock, open logs, read the config,
//! refuse a store that vanished ([`crate::store_file`]), open the store,
//! write the pid file, start the store's writer, start the actor tree.
//! Stop (SIGTERM, SIGINT or a `host.shutdown` request): stop the tree (the
//! socket goes first, so nothing new is accepted), let the writer finish
//! everything queued, and release the lock.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::names::HostName;
use flotilla_actors::store::commit::CommitQueue;
use flotilla_actors::store::{Integrity, Store, StoreError};
use ractor::Actor;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::config::{ConfigError, HostConfig, machine_host_name};
use crate::context::HostContext;
use crate::home::{Home, HomeError};
use crate::lock::{DaemonLock, LockError};
use crate::store_file::StoreFileError;
use crate::supervisor::HostSupervisor;

/// Options of `flotilla host run`.
#[derive(Debug, Clone, Default)]
pub struct DaemonOptions {
    /// Overrides the host name of the config and the machine.
    pub name: Option<HostName>,
    /// Honour test-only requests (`FLOTILLA_TEST_HOOKS=1`).
    pub test_hooks: bool,
    /// Overrides the hub address of the config (`--hub`).
    pub hub: Option<String>,
    /// Overrides the hub name of the config (`--hub-name`).
    pub hub_name: Option<String>,
    /// Overrides `allow_remote_lanes` (`--allow-remote-lanes`).
    pub allow_remote_lanes: Option<Vec<String>>,
    /// Overrides `allow_remote_groups` (`--allow-remote-groups`).
    pub allow_remote_groups: Option<Vec<String>>,
    /// Overrides `remote_lane_roots` (`--remote-lane-roots`).
    pub remote_lane_roots: Option<Vec<std::path::PathBuf>>,
    /// Overrides `remote_lane_max_permissions` (`--remote-lane-max-permissions`).
    pub remote_lane_max_permissions: Option<String>,
    /// Overrides `remote_lane_env` (`--remote-lane-env`).
    pub remote_lane_env: Option<Vec<String>>,
    /// Sets `remote_lane_args` (`--remote-lane-args`).
    pub remote_lane_args: bool,
    /// Start with a new, empty store although this home had one
    /// (`--new-store`; see [`crate::store_file`]).
    pub new_store: bool,
}

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// The home cannot be used.
    #[error(transparent)]
    Home(#[from] HomeError),
    /// Another daemon holds the home.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The config file is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store is missing although the home had one.
    #[error(transparent)]
    StoreFile(#[from] StoreFileError),
    /// The actor tree did not start.
    #[error("the daemon could not start: {0}")]
    Start(String),
    /// Something else in the OS failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The flags of `host run` over the config's remote-lane keys.
fn override_remote_lanes(config: &mut HostConfig, options: &mut DaemonOptions) {
    if let Some(clis) = options.allow_remote_lanes.take() {
        config.allow_remote_lanes = clis;
    }
    if let Some(groups) = options.allow_remote_groups.take() {
        config.allow_remote_groups = groups;
    }
    if let Some(roots) = options.remote_lane_roots.take() {
        config.remote_lane_roots = roots;
    }
    if let Some(max) = options.remote_lane_max_permissions.take() {
        config.remote_lane_max_permissions = max;
    }
    if let Some(env) = options.remote_lane_env.take() {
        config.remote_lane_env = env;
    }
    config.remote_lane_args |= options.remote_lane_args;
}

/// Runs the daemon until it is asked to stop.
pub async fn run(home: Home, mut options: DaemonOptions) -> Result<(), DaemonError> {
    home.prepare()?;
    let mut lock = DaemonLock::acquire(&home)?;
    crate::logging::init(&home)?;
    let mut config = HostConfig::load(&home.config_file)?;
    override_remote_lanes(&mut config, &mut options);
    config.hub = options.hub.or(config.hub);
    config.hub_name = options.hub_name.or(config.hub_name);
    config.hub_target().map_err(|message| ConfigError::Parse {
        path: "--hub".into(),
        message,
    })?;
    // A typo in the remote-lane policy is an error now, not a refusal of
    // every request later.
    crate::remote_lanes::policy::RemoteLanePolicy::from_config(
        &config,
        &crate::remote_lanes::default_root(&home),
    )
    .map_err(|message| ConfigError::Parse {
        path: "config.toml or its --allow-remote-* / --remote-lane-* flags".into(),
        message: format!("{message}. "),
    })?;
    let host = options
        .name
        .or_else(|| config.name.clone())
        .unwrap_or_else(machine_host_name);
    crate::store_file::check(&home, options.new_store)?;
    let store = Arc::new(open_store(&home.store_file()).await?);
    // Only now is this daemon the one: the store opens in one process only.
    lock.publish_pid()?;
    crate::store_file::record(&home)?;
    if *store.integrity() == Integrity::Repaired {
        tracing::warn!(path = %store.path().display(), "the store was damaged and has been repaired");
    }
    let (epoch_tx, epoch_rx) = watch::channel(0u64);
    let (commit, writer) = CommitQueue::start(store.clone(), epoch_tx)?;
    let ctx = Arc::new(HostContext::new(
        host.clone(),
        home,
        config,
        store,
        commit.clone(),
        epoch_rx,
        options.test_hooks,
    ));
    let (supervisor, handle) = Actor::spawn(None, HostSupervisor, ctx.clone())
        .await
        .map_err(|e| DaemonError::Start(e.to_string()))?;
    tracing::info!(host = %host, pid = std::process::id(), version = crate::status::VERSION, "daemon started");
    let advertised = ctx.config.advertise.then(|| advertise(&ctx)).flatten();
    wait_for_stop(&ctx).await?;
    if let Some(advertised) = advertised {
        advertised.withdraw().await;
    }
    tracing::info!("stopping");
    ctx.begin_stop();
    supervisor.stop(Some("shutdown".into()));
    let _ = handle.await;
    commit.shutdown().await;
    drop(ctx);
    drop(commit);
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    tracing::info!("daemon stopped");
    drop(lock);
    Ok(())
}

/// How long a start waits for a previous daemon of this home, which has
/// let go of the lock but not yet of the store, to exit.
const STORE_PATIENCE: Duration = Duration::from_secs(10);

/// Opens the store. This daemon holds the home's lock, so the only other
/// process that may have the store open is the daemon before it, still
/// exiting (`restart`): that is waited for, up to [`STORE_PATIENCE`].
async fn open_store(path: &std::path::Path) -> Result<Store, StoreError> {
    let deadline = tokio::time::Instant::now() + STORE_PATIENCE;
    loop {
        match Store::open(path) {
            Err(StoreError::Locked { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            opened => return opened,
        }
    }
}

/// Advertises this host over mDNS (`_flotilla-host._udp.local.`, TXT
/// `name`, `v`, and `fp` when it has a CA), so `flotilla discover` lists it.
/// Opt-in (`advertise = true`); a failure is logged, not fatal.
fn advertise(ctx: &HostContext) -> Option<flotilla_hub::discovery::mdns::Advertised> {
    let certs = flotilla_hub::setup::CertPaths::new(&ctx.home.certs_dir);
    let ca = flotilla_hub::setup::ca_fingerprint(&certs).ok();
    let ad = flotilla_hub::discovery::Advertisement::host(ctx.host.as_str(), ca.as_ref());
    flotilla_hub::discovery::mdns::Advertised::start(&ad, "host")
}

async fn wait_for_stop(ctx: &HostContext) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
        _ = ctx.shutdown.notified() => tracing::info!("shutdown requested"),
    }
    Ok(())
}
