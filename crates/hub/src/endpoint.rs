//! The hub's QUIC endpoint: binds (or is handed) a UDP socket, accepts
//! connections until a shutdown future resolves, and runs one session task
//! per host.
//!
//! Owns the accept loop and the lifecycle of session tasks; each session
//! ([`crate::session`]) owns its own connection. Reports what happens to
//! links as [`LinkEvent`]s for whoever subscribes (the hub's actors later,
//! tests now). Must not make TLS decisions: the server config it is given
//! already requires and checks client certificates.

use std::future::Future;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use flotilla_actors::federation::{DEFAULT_MAX_FRAME, HubHandshake, Refusal};
use tokio::sync::broadcast;
use tokio::task::JoinSet;

use crate::core::CoreRef;
use crate::live::LiveLinks;
use crate::session::{self, Shared};
use crate::transport::close;

/// How long shutdown waits for connections to say goodbye.
const DRAIN: Duration = Duration::from_secs(2);
/// Events kept for a subscriber that lags.
const EVENT_BACKLOG: usize = 256;

/// Why the hub could not bind its endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// The UDP socket could not be bound or set up.
    #[error(
        "cannot listen for hosts on {addr}: {source}; pick another address or port, or stop what uses it"
    )]
    Socket {
        /// The address.
        addr: String,
        /// The OS reason.
        source: std::io::Error,
    },
}

/// Something that happened to a link, for the hub's state and for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkEvent {
    /// A host passed the handshake; its link is up.
    Up {
        /// The host's name, from its certificate.
        host: String,
        /// Where it connects from.
        remote: SocketAddr,
        /// The release it says it runs.
        version: String,
    },
    /// A host was authenticated but its hello refused.
    Refused {
        /// The name in its certificate.
        identity: String,
        /// Where it connected from.
        remote: SocketAddr,
        /// Why.
        refusal: Refusal,
    },
    /// A connection failed before the hello: TLS refused the peer's
    /// certificate (unknown CA, revoked, none), or it never sent a hello.
    Failed {
        /// Where it connected from.
        remote: SocketAddr,
        /// What went wrong.
        reason: String,
    },
    /// A host's link ended.
    Closed {
        /// The host's name.
        host: String,
        /// Why it ended.
        reason: String,
    },
}

/// The hub's endpoint, bound and ready to [`run`](Self::run).
#[derive(Debug)]
pub struct HubEndpoint {
    /// The quinn endpoint on the bound socket.
    endpoint: quinn::Endpoint,
    /// What every session needs: the handshake, limits, the event sender.
    shared: Arc<Shared>,
}

impl HubEndpoint {
    /// Binds a UDP socket on `addr` and serves `server_config` there (build
    /// it with [`crate::transport::server_config`]), with `endpoint_config`
    /// ([`crate::transport::hub_endpoint_config`]: the reset key that lets a
    /// restarted hub end its predecessor's links at once).
    pub fn bind(
        addr: SocketAddr,
        endpoint_config: quinn::EndpointConfig,
        server_config: quinn::ServerConfig,
        handshake: HubHandshake,
    ) -> Result<Self, BindError> {
        let socket = UdpSocket::bind(addr).map_err(|source| BindError::Socket {
            addr: addr.to_string(),
            source,
        })?;
        Self::from_socket(socket, endpoint_config, server_config, handshake)
    }

    /// Serves on a socket the caller bound. Needs a tokio runtime.
    pub fn from_socket(
        socket: UdpSocket,
        endpoint_config: quinn::EndpointConfig,
        server_config: quinn::ServerConfig,
        handshake: HubHandshake,
    ) -> Result<Self, BindError> {
        let addr = socket
            .local_addr()
            .map_or_else(|_| "(unknown)".to_owned(), |a| a.to_string());
        let runtime = Arc::new(quinn::TokioRuntime);
        let endpoint = quinn::Endpoint::new(endpoint_config, Some(server_config), socket, runtime)
            .map_err(|source| BindError::Socket { addr, source })?;
        let (events, _) = broadcast::channel(EVENT_BACKLOG);
        let shared = Arc::new(Shared {
            handshake,
            max_frame: DEFAULT_MAX_FRAME,
            link_queue_bytes: crate::outbound::DEFAULT_LINK_QUEUE_BYTES,
            budget: crate::budget::BudgetLimits::default(),
            failures: std::sync::Mutex::new(crate::attempts::AttemptLimiter::new(
                crate::session::FAILURES_LOGGED,
                Duration::from_secs(60),
            )),
            events,
            core: None,
            next_link: AtomicU64::new(1),
            live: Arc::default(),
        });
        Ok(Self { endpoint, shared })
    }

    /// Hands every accepted link's frames to `core` (the hub's roster,
    /// routing and queues). Without a core, links only answer pings.
    pub fn with_core(mut self, core: CoreRef) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.core = Some(core);
        }
        self
    }

    /// Closes a host's link when more than `bytes` wait to be sent to it
    /// (a host that does not read).
    pub fn with_link_queue_bytes(mut self, bytes: usize) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.link_queue_bytes = bytes;
        }
        self
    }

    /// What one host may send before it is slowed, then cut.
    pub fn with_budget(mut self, budget: crate::budget::BudgetLimits) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.budget = budget;
        }
        self
    }

    /// The address hosts should dial.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.endpoint.local_addr()
    }

    /// The accepted links by host (for closing revoked ones).
    pub fn live_links(&self) -> Arc<LiveLinks> {
        self.shared.live.clone()
    }

    /// Events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<LinkEvent> {
        self.shared.events.subscribe()
    }

    /// Accepts hosts until `shutdown` resolves, then closes every link and
    /// waits (briefly) for them to go.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut sessions = JoinSet::new();
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                incoming = self.endpoint.accept() => match incoming {
                    Some(incoming) => {
                        sessions.spawn(session::serve(incoming, self.shared.clone()));
                    }
                    None => break,
                },
                Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
            }
        }
        tracing::info!(links = sessions.len(), "hub shutting down");
        self.endpoint
            .close(close::SHUTDOWN.into(), b"the hub is shutting down");
        let drained = tokio::time::timeout(DRAIN, async {
            while sessions.join_next().await.is_some() {}
            self.endpoint.wait_idle().await;
        });
        if drained.await.is_err() {
            sessions.abort_all();
        }
    }
}
