//! Simulated hosts: each is a task in this process with its own QUIC
//! endpoint and certificate that links to the hub as a daemon would
//! (`flotilla_hub::connect` with a `Hello`), sends its whole roster
//! (`RosterDelta { reset: true }`), answers pings and reads whatever the
//! hub sends. On losing the link it dials again after a short backoff with
//! jitter, and sends its roster again. Each link made is reported on a
//! channel with the instant the hub's `HelloAck` arrived.

use std::collections::BTreeSet;
use std::hash::BuildHasher;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use flotilla_actors::federation::{Frame, Hello, RosterDelta, RosterPeer};
use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, HostName, PeerId, PeerName};
use flotilla_hub::setup::{self, CertPaths};
use flotilla_hub::{ConnectOptions, HubSession};
use tokio::sync::mpsc;

use super::HUB_NAME;

/// Shared groups peers are spread over (peer index modulo this).
pub(crate) const GROUPS: usize = 20;
/// First and longest wait between attempts to dial.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(500));
/// Time allowed for one attempt (QUIC retransmits its first packet within).
const ATTEMPT: Duration = Duration::from_secs(3);

/// One simulated host, ready to dial.
#[derive(Debug)]
pub(crate) struct SimHost {
    index: usize,
    name: HostName,
    options: ConnectOptions,
    roster: RosterDelta,
}

/// A link made: which host, and when the hub's `HelloAck` arrived.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Linked {
    pub(crate) host: usize,
    pub(crate) at: Instant,
}

/// Issues certificates for `hosts` hosts named `sim0`... at the CA of
/// `ca`, under `dir`, each with `peers` peers.
pub(crate) fn issue(
    ca: &CertPaths,
    dir: &Path,
    addr: SocketAddr,
    hosts: usize,
    peers: usize,
) -> Result<Vec<SimHost>> {
    let mut made = Vec::with_capacity(hosts);
    for index in 0..hosts {
        let name = HostName::new(&format!("sim{index}"))?;
        let out = dir.join(name.to_string());
        setup::issue_host(ca, &name, &out, SystemTime::now())?;
        let config = setup::host_client_config(&CertPaths::new(&out))?;
        let mut options = ConnectOptions::new(addr, HUB_NAME, config);
        options.timeout = ATTEMPT;
        let roster = roster(&name, index, peers)?;
        made.push(SimHost {
            index,
            name,
            options,
            roster,
        });
    }
    Ok(made)
}

/// The whole roster of host `index`: peer `j` is in group
/// `g{(index * peers + j) % GROUPS}`.
fn roster(host: &HostName, index: usize, peers: usize) -> Result<RosterDelta> {
    let mut upserts = Vec::with_capacity(peers);
    for j in 0..peers {
        let group = GroupName::explicit(&format!("g{}", (index * peers + j) % GROUPS))?;
        let record = PeerRecord {
            id: PeerId::new(host.clone(), PeerName::new(&format!("p{j}"))?),
            kind: PeerKind::Mailbox,
            product: Some("bench".into()),
            groups: BTreeSet::from([group]),
            joined_at: Timestamp::now(),
        };
        upserts.push(RosterPeer {
            record,
            online: true,
        });
    }
    Ok(RosterDelta {
        reset: true,
        upserts,
        removed: Vec::new(),
    })
}

impl SimHost {
    /// Links and relinks until the task is aborted, reporting each link.
    pub(crate) async fn run(self, links: mpsc::UnboundedSender<Linked>) {
        let Ok(endpoint) = quinn::Endpoint::client(SocketAddr::from(([127, 0, 0, 1], 0))) else {
            return;
        };
        let mut backoff = BACKOFF.0;
        loop {
            let hello = Hello::new(self.name.clone());
            if let Ok(session) = flotilla_hub::connect(&endpoint, &self.options, hello).await {
                let at = Instant::now();
                let _ = links.send(Linked {
                    host: self.index,
                    at,
                });
                backoff = BACKOFF.0;
                self.serve(session).await;
            }
            tokio::time::sleep(backoff + jitter(backoff)).await;
            backoff = (backoff * 2).min(BACKOFF.1);
        }
    }

    /// Sends the roster, then answers pings until the link fails.
    async fn serve(&self, mut session: HubSession) {
        if session
            .send(&Frame::RosterDelta(self.roster.clone()))
            .await
            .is_err()
        {
            return;
        }
        // Only small frames are decoded (a ping is one): a roster change is
        // read and dropped, as decoding it would be a real host's work, on
        // its own machine, not the hub's.
        while let Ok(body) = session.recv_body().await {
            if body.len() > SMALL_FRAME {
                continue;
            }
            if let Ok(Frame::Ping { nonce }) = flotilla_actors::codec::decode(&body, SMALL_FRAME)
                && session.send(&Frame::Pong { nonce }).await.is_err()
            {
                return;
            }
        }
    }
}

/// The largest frame a simulated host decodes (a ping is far smaller).
const SMALL_FRAME: usize = 64;

/// Up to half of `backoff`, at random, so hosts do not dial in lockstep.
fn jitter(backoff: Duration) -> Duration {
    let random = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    let half = backoff.as_micros() as u64 / 2;
    Duration::from_micros(random % half.max(1))
}
