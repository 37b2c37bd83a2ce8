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

use super::state::Liveness;
use super::{LinkTracker, ReconnectPolicy, resolve};
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
            policy: ReconnectPolicy {
                min,
                max,
                startup: ctx.config.hub_startup_retry(),
            },
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
            settings.policy.clone(),
            Timestamp::now(),
        ),
        liveness: Liveness::new(settings.ping_interval, settings.timeout),
        ctx,
        settings,
        endpoint: None,
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
    /// Pings and the judgement of a silent link.
    liveness: Liveness,
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
        let (addr, name) =
            resolve::resolve_target(&self.settings.target, &self.settings.certs).await?;
        self.update(|t| t.dialling(addr.to_string(), &name));
        let endpoint = self.endpoint_for(addr)?;
        let mut options = ConnectOptions::new(addr, name, config);
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

    /// Runs the established link until it fails (returns why) or `stop`
    /// fires (closes the link, returns `None`).
    async fn keep(
        &mut self,
        session: HubSession,
        stop: &mut oneshot::Receiver<()>,
    ) -> Option<String> {
        self.liveness.reset();
        let ctx = self.ctx.clone();
        let tracker = &mut self.tracker;
        let mut on_rtt = |rtt: Duration| {
            tracker.round_trip(rtt);
            if let Ok(mut slot) = ctx.hub_link.write() {
                *slot = Some(tracker.clone());
            }
        };
        super::session::run(&self.ctx, session, &mut self.liveness, &mut on_rtt, stop).await
    }
}

/// A draw in `[0, 1)` for the backoff's jitter.
fn jitter() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}
