//! Fixtures for the hub's integration tests: a throwaway CA whose
//! certificates are written into a temporary directory and loaded back like
//! a real home's, an in-process hub on 127.0.0.1, and bounded waits.

#![allow(dead_code, unreachable_pub)]

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::federation::{Hello, HubHandshake};
use flotilla_actors::names::HostName;
use flotilla_actors::pki::testing::TestCa;
use flotilla_actors::tls::{self, Revocations, TlsIdentity};
use flotilla_hub::{ConnectOptions, HubEndpoint, LinkEvent, transport};
use tokio::sync::{broadcast, oneshot};
use tokio::task::JoinHandle;

/// The longest any single wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(10);

/// Where every test's certificates are written.
pub struct Certs {
    /// Removed at the end of the test.
    pub dir: tempfile::TempDir,
}

impl Certs {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Issues and writes a host's certificate, then loads it as a real host
    /// would. Each call gets its own directory, so names may repeat.
    pub fn host_identity(&self, issuer: &TestCa, name: &str) -> TlsIdentity {
        let dir = tempfile::tempdir_in(self.dir.path())
            .expect("host dir")
            .keep();
        let (cert, key) = issuer.write_host(&dir, name);
        TlsIdentity::load(&cert, &key).expect("load host identity")
    }

    /// A host's quinn config: trusting `trusted`, with a certificate for
    /// `name` issued by `issuer`.
    pub fn host_config(
        &self,
        trusted: &TestCa,
        issuer: &TestCa,
        name: &str,
    ) -> quinn::ClientConfig {
        let tls = tls::host_client_config(&trusted.root(), self.host_identity(issuer, name))
            .expect("host tls config");
        transport::client_config(tls).expect("host quic config")
    }

    fn hub_identity(&self, ca: &TestCa) -> TlsIdentity {
        let dir = tempfile::tempdir_in(self.dir.path())
            .expect("hub dir")
            .keep();
        let (cert, key) = ca.write_hub(&dir, "hub");
        TlsIdentity::load(&cert, &key).expect("load hub identity")
    }
}

/// A hub running in this process.
pub struct TestHub {
    pub addr: SocketAddr,
    pub events: broadcast::Receiver<LinkEvent>,
    pub revocations: Arc<Revocations>,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl TestHub {
    /// Starts a hub named `hub` with certificates from `ca`.
    pub fn start(certs: &Certs, ca: &TestCa) -> Self {
        Self::start_with(certs, ca, HubHandshake::new("hub"))
    }

    pub fn start_with(certs: &Certs, ca: &TestCa, handshake: HubHandshake) -> Self {
        let revocations = Revocations::new();
        let tls = tls::hub_server_config(&ca.root(), certs.hub_identity(ca), revocations.clone())
            .expect("hub tls config");
        let config = transport::server_config(tls).expect("hub quic config");
        let localhost = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let reset = transport::hub_endpoint_config(&transport::reset_key_seed(b"test hub"));
        let hub = HubEndpoint::bind(localhost, reset, config, handshake).expect("bind hub");
        let addr = hub.local_addr().expect("hub addr");
        let events = hub.subscribe();
        let (shutdown, stop) = oneshot::channel::<()>();
        let task = tokio::spawn(hub.run(async {
            let _ = stop.await;
        }));
        Self {
            addr,
            events,
            revocations,
            shutdown,
            task,
        }
    }

    /// Options to reach this hub with `config`.
    pub fn options(&self, config: quinn::ClientConfig) -> ConnectOptions {
        let mut options = ConnectOptions::new(self.addr, "hub", config);
        options.timeout = WAIT;
        options
    }

    /// The next event, waiting at most [`WAIT`].
    pub async fn next_event(&mut self) -> LinkEvent {
        tokio::time::timeout(WAIT, self.events.recv())
            .await
            .expect("a hub event in time")
            .expect("the hub's event channel")
    }

    /// Stops the hub and waits for it.
    pub async fn stop(self) {
        let _ = self.shutdown.send(());
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("hub stops in time")
            .expect("hub task");
    }
}

/// A host's client endpoint on 127.0.0.1.
pub fn client_endpoint() -> quinn::Endpoint {
    quinn::Endpoint::client(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).expect("client endpoint")
}

/// A hello from `name`.
pub fn hello(name: &str) -> Hello {
    Hello::new(HostName::new(name).expect("host name"))
}
