//! What every actor of one daemon shares: the store and its writer, the
//! published directory, the mail signal, the current child refs, and the
//! daemon's identity and settings.
//!
//! The supervisor creates it once; children get an `Arc` of it and never own
//! it, so a restarted child finds the same store and channels.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use flotilla_actors::directory::Directory;
use flotilla_actors::federation::RosterPeer;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::{HostName, PeerId};
use flotilla_actors::protocol::ActorStatus;
use flotilla_actors::store::Store;
use flotilla_actors::store::commit::CommitQueue;
use tokio::sync::{Notify, watch};

use crate::config::HostConfig;
use crate::home::Home;
use crate::registry::RegistryRef;
use crate::router::RouterRef;

/// The current refs of the children that serve requests; `None` while one is
/// restarting.
#[derive(Debug, Default)]
pub struct ChildRefs {
    registry: RwLock<Option<RegistryRef>>,
    router: RwLock<Option<RouterRef>>,
    lanes: RwLock<Option<crate::lanes::LaneSupervisorRef>>,
    fleets: RwLock<Option<crate::fleet::runner::FleetsRef>>,
}

impl ChildRefs {
    /// The registry, if it is running.
    pub fn registry(&self) -> Option<RegistryRef> {
        self.registry.read().ok().and_then(|r| r.clone())
    }

    /// The router, if it is running.
    pub fn router(&self) -> Option<RouterRef> {
        self.router.read().ok().and_then(|r| r.clone())
    }

    /// The lane supervisor, if it is running.
    pub fn lanes(&self) -> Option<crate::lanes::LaneSupervisorRef> {
        self.lanes.read().ok().and_then(|r| r.clone())
    }

    /// The fleets' actor, if it is running.
    pub fn fleets(&self) -> Option<crate::fleet::runner::FleetsRef> {
        self.fleets.read().ok().and_then(|r| r.clone())
    }

    pub(crate) fn set_fleets(&self, r: Option<crate::fleet::runner::FleetsRef>) {
        if let Ok(mut slot) = self.fleets.write() {
            *slot = r;
        }
    }

    pub(crate) fn set_lanes(&self, r: Option<crate::lanes::LaneSupervisorRef>) {
        if let Ok(mut slot) = self.lanes.write() {
            *slot = r;
        }
    }

    pub(crate) fn set_registry(&self, r: Option<RegistryRef>) {
        if let Ok(mut slot) = self.registry.write() {
            *slot = r;
        }
    }

    pub(crate) fn set_router(&self, r: Option<RouterRef>) {
        if let Ok(mut slot) = self.router.write() {
            *slot = r;
        }
    }
}

/// Shared by the actors of one daemon.
#[derive(Debug)]
pub struct HostContext {
    /// This host's name.
    pub host: HostName,
    /// Where it keeps things.
    pub home: Home,
    /// Its settings.
    pub config: HostConfig,
    /// The open store (reads).
    pub store: Arc<Store>,
    /// The store's one writer.
    pub commit: CommitQueue,
    /// The registry publishes the directory here after every change.
    pub directory: watch::Sender<Arc<Directory>>,
    /// Bumped after every commit that changed an inbox.
    pub mail_epoch: watch::Receiver<u64>,
    /// The children that serve requests.
    pub children: ChildRefs,
    /// When the daemon started.
    pub started_at: Timestamp,
    /// Monotonic start, for uptime.
    pub started: Instant,
    /// Whether test-only requests (`debug.fail`) are honoured.
    pub test_hooks: bool,
    /// Signalled when a client asks the daemon to stop.
    pub shutdown: Notify,
    /// Each actor's state, kept by the supervisor.
    pub actors: RwLock<Vec<ActorStatus>>,
    /// Readers blocked in `inbox --wait`, per peer.
    pub waiting:
        std::sync::Mutex<std::collections::BTreeMap<flotilla_actors::names::PeerId, usize>>,
    /// The hub link's state, kept by the `HubLink` actor; `None` without a
    /// hub.
    pub hub_link: RwLock<Option<crate::hub_link::LinkTracker>>,
    /// Peers of other hosts this host may see, as the hub last said, with
    /// whether their host is linked. Merged into the directory by the
    /// registry.
    pub remote: RwLock<BTreeMap<PeerId, RosterPeer>>,
    /// Where lane calls for other hosts go while the hub link is up; set
    /// and cleared by the link. A call made while the link is down waits on
    /// it (up to the call's own deadline) for the link to come back.
    pub hub_calls: tokio::sync::watch::Sender<
        Option<tokio::sync::mpsc::Sender<crate::remote_lanes::OutgoingCall>>,
    >,
    /// One writer of claims and run records per repository at a time.
    pub repo_locks: crate::governance::RepoLocks,
    /// The hub's verdicts heard and not yet recorded, for the senders
    /// waiting for them.
    pub verdicts: crate::verdict::HeardVerdicts,
    stopping: AtomicBool,
}

impl HostContext {
    /// Builds the shared context.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        host: HostName,
        home: Home,
        config: HostConfig,
        store: Arc<Store>,
        commit: CommitQueue,
        mail_epoch: watch::Receiver<u64>,
        test_hooks: bool,
    ) -> Self {
        let remote = saved_remote_roster(&store);
        Self {
            host,
            home,
            config,
            store,
            commit,
            directory: watch::channel(Arc::new(Directory::default())).0,
            mail_epoch,
            children: ChildRefs::default(),
            started_at: Timestamp::now(),
            started: Instant::now(),
            test_hooks,
            shutdown: Notify::new(),
            actors: RwLock::new(Vec::new()),
            waiting: Default::default(),
            hub_link: RwLock::new(None),
            remote: RwLock::new(remote),
            hub_calls: tokio::sync::watch::Sender::new(None),
            repo_locks: Default::default(),
            verdicts: Default::default(),
            stopping: AtomicBool::new(false),
        }
    }

    /// The current directory snapshot.
    pub fn directory(&self) -> Arc<Directory> {
        self.directory.borrow().clone()
    }

    /// The remote peers, as last heard from the hub.
    pub fn remote_peers(&self) -> BTreeMap<PeerId, RosterPeer> {
        self.remote.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// Whether `peer` is a peer of this host.
    pub fn is_local(&self, peer: &PeerId) -> bool {
        peer.host == self.host
    }

    /// Whether a reader of `peer` is blocked waiting for mail.
    pub fn is_waiting(&self, peer: &flotilla_actors::names::PeerId) -> bool {
        self.waiting
            .lock()
            .map(|w| w.get(peer).is_some_and(|n| *n > 0))
            .unwrap_or(false)
    }

    /// Marks the daemon as stopping: the supervisor restarts nothing more.
    pub fn begin_stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Whether the daemon is stopping.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// The remote peers the store kept from the last hub link (none if it
/// cannot read them: the hub announces them again when the link is up).
fn saved_remote_roster(store: &Store) -> BTreeMap<PeerId, RosterPeer> {
    store.remote_roster().unwrap_or_else(|e| {
        tracing::warn!("cannot read the saved remote peers: {e}");
        BTreeMap::new()
    })
}
