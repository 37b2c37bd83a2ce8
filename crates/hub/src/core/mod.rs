//! The `HubCore` actor: the one owner of the hub's roster and store. Every
//! session hands it the frames of its host; it decides with the roster,
//! writes to the store, and answers through each link's outgoing queue.
//!
//! Being one actor makes every decision see one consistent roster, and
//! every forward is on disk before its `Forwarded` leaves. Deliveries are
//! numbered here and pushed before the queue writer has stored them
//! (`fresh.rs`), to each host in queue order, at most [`WINDOW`]
//! unacknowledged at a time and no more bytes than half the link's
//! outbound bound ([`window`]); whatever was not acknowledged is pushed
//! again when the host comes back. Must not touch sockets: sessions own their streams and only hand
//! over frames through [`LinkHandle`]s.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use flotilla_actors::federation::Frame;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::grants::SessionGrants;
use crate::group_policy::GroupPolicy;
use crate::roster::HubRoster;
use crate::store::{Depth, HubStore};
use crate::view;

mod admit;
mod deliver;
mod forget;
mod fresh;
mod hold;
mod links;
mod policy;
mod relay;
mod relink;
mod window;

use hold::Holds;
use policy::log_refused;

/// A lane's membership in its remote owner's private group.
type Grant = (
    flotilla_actors::names::PeerId,
    flotilla_actors::names::GroupName,
);

/// Deliveries in flight to one host before the hub waits for acks.
pub const WINDOW: usize = 256;
/// How often queued deliveries are checked for expiry.
const EXPIRY_SWEEP: Duration = Duration::from_secs(60);

/// Limits of the hub's queues.
#[derive(Debug, Clone, Copy)]
pub struct QueueLimits {
    /// A delivery not taken by its host within this time is dropped.
    pub ttl: Duration,
    /// Most messages queued per host.
    pub max_messages: u64,
    /// Most bytes (bodies and summaries) queued per host.
    pub max_bytes: u64,
    /// An offline host not seen for this long is forgotten: its roster,
    /// queue and owed receipts are removed.
    pub forget_hosts_after: Duration,
}

impl Default for QueueLimits {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(7 * 24 * 3600),
            max_messages: 10_000,
            max_bytes: 256 * 1024 * 1024,
            forget_hosts_after: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

/// One live link, as the core sees it.
#[derive(Debug, Clone)]
pub struct LinkHandle {
    /// Tells this link from an older one of the same host.
    pub id: u64,
    /// Frames to send to the host.
    pub tx: crate::outbound::Outbound,
    /// For its round-trip time and to close it.
    pub connection: quinn::Connection,
    /// Where the host connects from.
    pub remote: SocketAddr,
    /// When it came up.
    pub since: Timestamp,
}

/// Messages of the core.
#[derive(Debug)]
pub enum CoreMsg {
    /// A host passed the handshake.
    LinkUp {
        /// The name in its certificate.
        host: HostName,
        /// The release it runs.
        version: String,
        /// Its link.
        link: LinkHandle,
    },
    /// A host's link ended.
    LinkDown {
        /// The host.
        host: HostName,
        /// Which link.
        link_id: u64,
    },
    /// A change of a host's budget state, from its link.
    Budget {
        /// The host.
        host: HostName,
        /// What changed.
        event: crate::budget::BudgetEvent,
    },
    /// A frame from a host.
    Frame {
        /// The host (from its certificate).
        host: HostName,
        /// Which link.
        link_id: u64,
        /// The frame.
        frame: Frame,
    },
    /// The operator's view, as JSON (a `flotilla.hub-roster.v1` object,
    /// written by [`view::write_roster`]).
    /// An error is for a person: it is a bug in the view's shape.
    Roster(RpcReplyPort<Result<Vec<u8>, String>>),
    /// The operator's group list changed (read again from its file): every
    /// host's peers are screened again.
    SetPolicy(GroupPolicy),
    /// Drop what is older than the TTL.
    Expire,
    /// The hub's relink grace is over: lane calls still waiting for their
    /// targets are refused.
    RelinkGraceOver,
    /// The queue writer's outcomes of one group of writes.
    Written(Vec<crate::queue_writer::WriterDone>),
    /// Tell the hosts what the roster changes gathered since the last
    /// telling changed in their views: sent to itself behind the messages
    /// already waiting, so a burst of changes is told as one.
    Tell,
}

/// A handle on the core.
pub type CoreRef = ActorRef<CoreMsg>;

/// The hub core actor.
#[derive(Debug)]
pub struct HubCore;

/// What the core starts from.
#[derive(Debug)]
pub struct CoreArgs {
    /// The hub's name.
    pub hub: String,
    /// The open store.
    pub store: HubStore,
    /// Queue limits.
    pub limits: QueueLimits,
    /// Who may be in which group (empty: every host in any group).
    pub policy: GroupPolicy,
}

/// The core's state.
#[derive(Debug)]
pub struct CoreState {
    hub: String,
    /// Shared with the blocking threads that run its durable commits.
    store: std::sync::Arc<HubStore>,
    limits: QueueLimits,
    roster: HubRoster,
    links: HashMap<HostName, LinkHandle>,
    depths: HashMap<HostName, Depth>,
    /// Per linked host: the deliveries pushed and not yet acknowledged.
    pushed: HashMap<HostName, window::DeliveryWindow>,
    /// Lane calls relayed and not yet answered: (target, asking host, call)
    /// to the private-group grant the call made, taken back if it fails.
    calls: HashMap<(HostName, HostName, u64), Option<Grant>>,
    /// Each host's budget state, for the operator.
    budgets: crate::budget::BudgetBook,
    /// Senders whose later messages wait behind one the store could not
    /// take, per linked host.
    holds: Holds,
    /// Lane calls waiting for their targets to relink after this hub's
    /// start.
    relink: relink::RelinkWaits,
    /// Queues admitted forwards, many to a durable commit.
    writer: crate::queue_writer::QueueWriter,
    /// Deliveries numbered here and not yet committed, by host: pushed
    /// behind what the store holds.
    fresh: fresh::FreshDeliveries,
    /// Roster changes not yet told to the hosts that see them.
    untold: crate::roster::Untold,
    /// Whether a [`CoreMsg::Tell`] is on its way.
    tell_due: bool,
    /// The size of the last operator's view: the next one is written into
    /// a buffer that large (megabytes at 1,000 hosts).
    roster_json_len: usize,
}

impl Actor for HubCore {
    type Msg = CoreMsg;
    type State = CoreState;
    type Arguments = CoreArgs;

    async fn pre_start(
        &self,
        myself: CoreRef,
        args: CoreArgs,
    ) -> Result<CoreState, ActorProcessingErr> {
        let grants = SessionGrants::new(args.store.load_grants()?);
        let mut roster = HubRoster::new(args.store.load_hosts()?, grants);
        for change in roster.set_policy(args.policy) {
            log_refused(&change);
        }
        let depths = args.store.depths()?;
        let fresh = fresh::FreshDeliveries::new(args.store.delivery_seq_floor()?);
        myself.send_interval(EXPIRY_SWEEP, || CoreMsg::Expire);
        let _ = myself.send_message(CoreMsg::Expire);
        myself.send_after(relink::RELINK_GRACE, || CoreMsg::RelinkGraceOver);
        let store = std::sync::Arc::new(args.store);
        let core = myself.clone();
        let writer = crate::queue_writer::QueueWriter::start(store.clone(), move |done| {
            let _ = core.cast(CoreMsg::Written(done));
        })?;
        Ok(CoreState {
            hub: args.hub,
            store,
            limits: args.limits,
            roster,
            links: HashMap::new(),
            depths,
            pushed: HashMap::new(),
            calls: HashMap::new(),
            budgets: Default::default(),
            holds: Holds::default(),
            relink: relink::RelinkWaits::new(std::time::Instant::now()),
            writer,
            fresh,
            untold: Default::default(),
            tell_due: false,
            roster_json_len: 0,
        })
    }

    async fn post_stop(&self, _: CoreRef, state: &mut CoreState) -> Result<(), ActorProcessingErr> {
        if let Err(e) = state.store.save_clock() {
            tracing::error!("cannot keep the hub's running clock: {e}");
        }
        if let Err(e) = state.store.flush() {
            tracing::error!("cannot flush the hub's store: {e}");
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: CoreRef,
        msg: CoreMsg,
        state: &mut CoreState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CoreMsg::LinkUp {
                host,
                version,
                link,
            } => state.link_up(host, version, link),
            CoreMsg::LinkDown { host, link_id } => state.link_down(&host, link_id),
            CoreMsg::Budget { host, event } => state.budgets.record(&host, event),
            CoreMsg::Frame {
                host,
                link_id,
                frame,
            } => {
                if state.links.get(&host).is_some_and(|l| l.id == link_id) {
                    match frame {
                        Frame::Forward(forward) => state.on_forward(&host, link_id, forward),
                        frame => state.on_frame(&host, frame),
                    }
                }
            }
            CoreMsg::Roster(reply) => {
                let _ = reply.send(state.roster_json());
            }
            CoreMsg::SetPolicy(policy) => state.set_policy(policy),
            CoreMsg::Expire => state.expire().await,
            CoreMsg::RelinkGraceOver => state.relink_grace_over(),
            CoreMsg::Written(group) => state.on_written(group),
            CoreMsg::Tell => {
                // Changes told at once since it was sent (past the limit)
                // leave nothing for it, but it was still on its way.
                state.tell_due = false;
                state.tell_untold();
            }
        }
        if !state.untold.is_empty() && !state.tell_due {
            state.tell_due = myself.cast(CoreMsg::Tell).is_ok();
        }
        Ok(())
    }
}

impl CoreState {
    /// The operator's view, as JSON.
    fn roster_json(&mut self) -> Result<Vec<u8>, String> {
        let parts = view::RosterParts {
            hub: &self.hub,
            roster: &self.roster,
            links: &self.links,
            depths: &self.depths,
            budgets: &self.budgets,
        };
        let mut out = Vec::with_capacity(self.roster_json_len + self.roster_json_len / 8);
        // Writing into memory fails only on a bug in the view's shape.
        view::write_roster(&parts, Timestamp::now(), &mut out)
            .map_err(|e| format!("the hub could not write its roster ({e}); report this bug"))?;
        self.roster_json_len = out.len();
        Ok(out)
    }

    /// The outcomes of one group of the queue writer's writes; each host
    /// something was queued for is pushed to once.
    fn on_written(&mut self, group: Vec<crate::queue_writer::WriterDone>) {
        use crate::queue_writer::WriterDone;
        let mut targets = std::collections::BTreeSet::new();
        for done in group {
            match done {
                WriterDone::Forward(done) => {
                    // Its commit is over: its deliveries are in the store
                    // now (pushed from there if they have not gone yet), or
                    // were not stored.
                    let work = &done.work;
                    let hosts = work.enqueue.by_host.keys();
                    self.fresh.settled(hosts, &work.seqs, done.outcome.is_err());
                    targets.extend(work.enqueue.by_host.keys().cloned());
                    self.on_queued(done);
                }
                WriterDone::Delivered { host, done } => self.on_taken(&host, done),
            }
        }
        for target in &targets {
            self.pump(target);
        }
    }

    fn on_frame(&mut self, host: &HostName, frame: Frame) {
        match frame {
            Frame::RosterDelta(delta) => self.on_roster(host, delta),
            Frame::Delivered(done) => self.on_delivered(host, done),
            Frame::ReceiptAck { seq } => {
                let work = crate::queue_writer::WriterWork::AckReceipts {
                    host: host.clone(),
                    seq,
                };
                if self.writer.submit(work).is_err() {
                    tracing::error!(%host, "cannot drop acknowledged receipts: the queue writer has stopped");
                }
            }
            Frame::LaneCall(call) => self.on_lane_call(host, call),
            Frame::LaneAnswer(answer) => self.on_lane_answer(host, answer),
            other => tracing::debug!(%host, kind = other.kind(), "unexpected frame; ignored"),
        }
    }

    async fn expire(&mut self) {
        let ttl_ms = u64::try_from(self.limits.ttl.as_millis()).unwrap_or(u64::MAX);
        if let Err(e) = self.store.save_clock() {
            tracing::error!("cannot keep the hub's running clock: {e}");
        }
        let cutoff = Timestamp(self.store.now().0.saturating_sub(ttl_ms));
        let store = self.store.clone();
        let expired = tokio::task::spawn_blocking(move || store.expire(cutoff)).await;
        match expired.unwrap_or_else(|e| Err(crate::store::HubStoreError::Stopped(e.to_string()))) {
            Ok(expired) => {
                if !expired.receipts.is_empty() {
                    tracing::warn!(count = expired.receipts.len(), "queued messages expired");
                }
                for (sender, receipt) in expired.receipts {
                    self.send(&sender, Frame::Receipt(receipt));
                }
                for (host, bytes) in expired.freed {
                    admit::reserve(&mut self.depths, std::iter::once(&host), bytes, false);
                    self.refresh_depth(&host);
                }
            }
            Err(e) => tracing::error!("cannot expire queued messages: {e}"),
        }
        self.forget_hosts();
        match self.store.forget_handled(cutoff.0) {
            Ok(0) => {}
            Ok(count) => tracing::debug!(count, "handled messages forgotten"),
            Err(e) => tracing::error!("cannot forget handled messages: {e}"),
        }
    }
}
