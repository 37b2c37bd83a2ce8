//! The hub link's one task: dial, keep the link with pings, and reconnect
//! after a backoff, recording every step in the shared [`LinkTracker`].
//! Stops, closing the link politely, when the actor says so.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_actors::federation::Hello;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;
use flotilla_hub::setup::{self, CertPaths};
use flotilla_hub::{ConnectOptions, HubSession};
use tokio::sync::oneshot;

use super::{LinkTracker, ReconnectPolicy};
use crate::config::HubTarget;
use crate::context::HostContext;

/// What the driver needs, read once from the context.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// This host's name, sent in the hello.
    host: HostName,
    /// Where the hub is and what it is called.
    target: HubTarget,
    /// This home's certificate files.
    certs: CertPaths,
    /// Delays between attempts.
    policy: ReconnectPolicy,
    /// Time between pings.
    ping_interval: Duration,
    /// Time allowed for a connect or a ping.
    timeout: Duration,
}

impl Settings {
    pub(super) fn from_context(ctx: &HostContext) -> Result<Self, String> {
        let target = ctx
            .config
            .hub_target()?
            .ok_or("no hub is configured, so there is no hub link to run")?;
        let (min, max) = ctx.config.hub_reconnect();
        Ok(Self {
            host: ctx.host.clone(),
            target,
            certs: CertPaths::new(&ctx.home.certs_dir),
            policy: ReconnectPolicy { min, max },
            ping_interval: ctx.config.hub_ping_interval(),
            timeout: ctx.config.hub_connect_timeout(),
        })
    }
}

/// Links to the hub until `stop` fires (or its sender is dropped).
pub(super) async fn drive(
    ctx: Arc<HostContext>,
    settings: Settings,
    mut stop: oneshot::Receiver<()>,
) {
    let mut link = Driver {
        tracker: LinkTracker::new(
            settings.target.addr.clone(),
            settings.target.name.clone(),
            settings.policy,
            Timestamp::now(),
        ),
        ctx,
        settings,
        endpoint: None,
        nonce: 0,
    };
    loop {
        link.update(|t| t.connecting(Timestamp::now()));
        let outcome = tokio::select! {
            _ = &mut stop => return,
            outcome = link.attempt() => outcome,
        };
        let error = match outcome {
            Ok(session) => {
                link.update(|t| t.connected(Timestamp::now()));
                tracing::info!(hub = %link.settings.target.addr, "hub link up");
                crate::enrollment::renewal::after_link(&link.ctx);
                match link.keep(session, &mut stop).await {
                    Some(error) => error,
                    None => return,
                }
            }
            Err(error) => error,
        };
        tracing::warn!(hub = %link.settings.target.addr, "hub link down: {error}");
        let mut delay = Duration::ZERO;
        link.update(|t| delay = t.failed(error, jitter(), Timestamp::now()));
        tokio::select! {
            _ = &mut stop => return,
            () = tokio::time::sleep(delay) => {}
        }
    }
}

/// The driver's own state.
struct Driver {
    /// Shared with `host status`.
    ctx: Arc<HostContext>,
    /// What to dial.
    settings: Settings,
    /// The link's bookkeeping, published after every change.
    tracker: LinkTracker,
    /// The UDP endpoint, kept across attempts.
    endpoint: Option<quinn::Endpoint>,
    /// The last ping's nonce.
    nonce: u64,
}

impl Driver {
    fn update(&mut self, change: impl FnOnce(&mut LinkTracker)) {
        change(&mut self.tracker);
        if let Ok(mut slot) = self.ctx.hub_link.write() {
            *slot = Some(self.tracker.clone());
        }
    }

    /// One attempt: read the certificates, resolve the hub, dial, hello.
    async fn attempt(&mut self) -> Result<HubSession, String> {
        let config = setup::host_client_config(&self.settings.certs).map_err(|e| e.to_string())?;
        let target = self.settings.target.clone();
        let addr = tokio::net::lookup_host(&target.addr)
            .await
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| {
                format!(
                    "cannot resolve the hub address {:?}; check `hub` in config.toml or --hub",
                    target.addr
                )
            })?;
        let endpoint = self.endpoint_for(addr)?;
        let mut options = ConnectOptions::new(addr, target.name.clone(), config);
        options.timeout = self.settings.timeout;
        let hello = Hello::new(self.settings.host.clone());
        flotilla_hub::connect(&endpoint, &options, hello)
            .await
            .map_err(|e| e.to_string())
    }

    /// A client endpoint of the hub address's family.
    fn endpoint_for(&mut self, hub: SocketAddr) -> Result<quinn::Endpoint, String> {
        if let Some(endpoint) = &self.endpoint
            && endpoint
                .local_addr()
                .is_ok_and(|a| a.is_ipv4() == hub.is_ipv4())
        {
            return Ok(endpoint.clone());
        }
        let local: SocketAddr = if hub.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let endpoint = quinn::Endpoint::client(local)
            .map_err(|e| format!("cannot open a UDP socket to reach the hub: {e}"))?;
        self.endpoint = Some(endpoint.clone());
        Ok(endpoint)
    }

    /// Pings the hub until the link fails (returns why) or `stop` fires
    /// (closes the link, returns `None`).
    async fn keep(
        &mut self,
        mut session: HubSession,
        stop: &mut oneshot::Receiver<()>,
    ) -> Option<String> {
        let connection = session.connection().clone();
        loop {
            self.nonce += 1;
            let sent = Instant::now();
            let pong = tokio::select! {
                _ = &mut *stop => {
                    session.close();
                    return None;
                }
                pong = session.ping(self.nonce, self.settings.timeout) => pong,
            };
            match pong {
                Ok(()) => self.update(|t| t.round_trip(sent.elapsed())),
                Err(e) => return Some(e.to_string()),
            }
            tokio::select! {
                _ = &mut *stop => {
                    session.close();
                    return None;
                }
                reason = connection.closed() => {
                    return Some(format!("the hub link was closed: {reason}"));
                }
                () = tokio::time::sleep(self.settings.ping_interval) => {}
            }
        }
    }
}

/// A draw in `[0, 1)` for the backoff's jitter.
fn jitter() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}
