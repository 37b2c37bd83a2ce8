//! The `LaneSupervisor` and everything lanes are made of.
//!
//! ```text
//! LaneSupervisor
//! └── Lane (one per lane: its record, its turns)
//!     └── Connector (one per running CLI process: output, exit, signals)
//! ```
//!
//! The supervisor creates lanes (`start`: registering each as a peer
//! `HOST/NAME` in its own and its owner's private groups), removes them
//! (`removal`), reloads every lane from the
//! store at start (lanes adopt turns that survived a daemon crash), ticks
//! them (deadlines, auto-archive), hands messages for persistent lanes to
//! them, and tells them when their owner leaves. At shutdown it stops every
//! lane, and each lane stops its process: no process outlives its lane.

mod answers;
mod attach_plan;
pub mod cli;
pub mod cli_home;
pub mod connector;
pub mod doctor;
pub(crate) mod endpoint;
mod hold;
pub mod identity;
pub mod lane;
mod launch;
mod mail;
mod notify;
mod on_disk;
mod persist;
pub mod process;
mod removal;
mod results;
mod stall;
mod start;
mod turn;
mod version_floor;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::lane::{LanePhase, LaneSpec};
use flotilla_actors::names::{PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, LanePruneArgs, LanePruneReply, LaneRemoveArgs, LaneRemoveReply, LaneStartArgs,
    LaneStartReply,
};
use ractor::concurrency::JoinHandle;
use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

pub use lane::{Collected, LaneMsg, LaneRef};
pub(crate) use start::ensure_owner;

use crate::context::HostContext;

/// Largest prompt accepted: 4 MiB.
pub const MAX_PROMPT: usize = 4 * 1024 * 1024;
/// How often lanes are ticked.
const TICK: Duration = Duration::from_millis(250);
/// The owner of lanes started without `--as`.
pub const OPERATOR: &str = "operator";

type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// Messages of the lane supervisor.
#[derive(Debug)]
pub enum LaneSupervisorMsg {
    /// Create a lane and start its first turn.
    Start(Box<LaneStartArgs>, Reply<LaneStartReply>),
    /// The actor of a lane.
    Get(PeerName, RpcReplyPort<Option<LaneRef>>),
    /// Every lane's actor.
    All(RpcReplyPort<Vec<LaneRef>>),
    /// A peer left: its non-persistent lanes stop.
    OwnerLeft(PeerId),
    /// Time to tick the lanes and deliver messages to persistent ones.
    Tick,
    /// From the watchdog: look for stalled turns.
    Watchdog,
    /// Remove an idle or archived lane for good.
    Remove(LaneRemoveArgs, Reply<LaneRemoveReply>),
    /// Remove archived lanes.
    Prune(LanePruneArgs, Reply<LanePruneReply>),
}

/// A handle on the lane supervisor.
pub type LaneSupervisorRef = ActorRef<LaneSupervisorMsg>;

/// The lane supervisor actor.
#[derive(Debug)]
pub struct LaneSupervisor;

/// Its state.
#[derive(Debug)]
pub struct LaneSupervisorState {
    ctx: Arc<HostContext>,
    /// Each lane's actor, and whether it is persistent.
    lanes: BTreeMap<PeerName, (LaneRef, bool)>,
    ticker: JoinHandle<()>,
}

impl Actor for LaneSupervisor {
    type Msg = LaneSupervisorMsg;
    type State = LaneSupervisorState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: LaneSupervisorRef,
        ctx: Arc<HostContext>,
    ) -> Result<Self::State, ActorProcessingErr> {
        let mut lanes = BTreeMap::new();
        for record in ctx.store.load_lanes()? {
            let (name, persistent) = (record.spec.name.clone(), record.spec.persistent);
            let (actor, _) = Actor::spawn_linked(
                None,
                lane::Lane,
                (ctx.clone(), record, None),
                myself.get_cell(),
            )
            .await?;
            lanes.insert(name, (actor, persistent));
        }
        let ticker = myself.send_interval(TICK, || LaneSupervisorMsg::Tick);
        Ok(LaneSupervisorState { ctx, lanes, ticker })
    }

    async fn post_stop(
        &self,
        _: LaneSupervisorRef,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.ticker.abort();
        let stops = state.lanes.values().map(|(l, _)| {
            l.stop_and_wait(
                Some("daemon stopping".into()),
                Some(Duration::from_secs(20)),
            )
        });
        futures_join(stops).await;
        Ok(())
    }

    async fn handle(
        &self,
        myself: LaneSupervisorRef,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            LaneSupervisorMsg::Start(args, reply) => {
                let _ = reply.send(state.start(&myself, *args).await);
            }
            LaneSupervisorMsg::Get(name, reply) => {
                let _ = reply.send(state.lanes.get(&name).map(|(l, _)| l.clone()));
            }
            LaneSupervisorMsg::All(reply) => {
                let _ = reply.send(state.lanes.values().map(|(l, _)| l.clone()).collect());
            }
            LaneSupervisorMsg::OwnerLeft(owner) => state.owner_left(&owner).await,
            LaneSupervisorMsg::Tick => state.tick(),
            LaneSupervisorMsg::Remove(args, reply) => {
                let _ = reply.send(state.remove(args).await);
            }
            LaneSupervisorMsg::Prune(args, reply) => {
                let _ = reply.send(Ok(state.prune(args).await));
            }
            LaneSupervisorMsg::Watchdog => {
                for (lane, _) in state.lanes.values() {
                    let _ = lane.cast(LaneMsg::StallCheck);
                }
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _: LaneSupervisorRef,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let exited = match &event {
            SupervisionEvent::ActorFailed(cell, err) => Some((cell, err.to_string())),
            SupervisionEvent::ActorTerminated(cell, _, Some(reason))
                if reason != "daemon stopping" =>
            {
                Some((cell, reason.clone()))
            }
            _ => None,
        };
        if let Some((cell, err)) = exited {
            let gone: Vec<PeerName> = state
                .lanes
                .iter()
                .filter(|(_, (l, _))| l.get_id() == cell.get_id())
                .map(|(n, _)| n.clone())
                .collect();
            for name in gone {
                tracing::error!(lane = %name, error = %err, "lane actor exited; reloading it from the store");
                state.lanes.remove(&name);
                state.reload(&name).await;
            }
        }
        Ok(())
    }
}

async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) {
    for f in futures {
        f.await;
    }
}

impl LaneSupervisorState {
    async fn reload(&mut self, name: &PeerName) {
        let Ok(records) = self.ctx.store.load_lanes() else {
            return;
        };
        let Some(record) = records.into_iter().find(|r| &r.spec.name == name) else {
            return;
        };
        let persistent = record.spec.persistent;
        if let Some(me) = self.ctx.children.lanes()
            && let Ok((actor, _)) = Actor::spawn_linked(
                None,
                lane::Lane,
                (self.ctx.clone(), record, None),
                me.get_cell(),
            )
            .await
        {
            self.lanes.insert(name.clone(), (actor, persistent));
        }
    }

    fn tick(&mut self) {
        for (lane, _) in self.lanes.values() {
            let _ = lane.cast(LaneMsg::Tick);
        }
        self.deliver_mail();
    }

    /// Messages to persistent lanes become the prompts of their turns: a
    /// lane with mail is told to read it (see `mail`). Only the inboxes of
    /// persistent lanes are read (a range read each).
    fn deliver_mail(&self) {
        for (name, (lane, persistent)) in &self.lanes {
            if !*persistent {
                continue;
            }
            let id = PeerId::new(self.ctx.host.clone(), name.clone());
            if let Ok((messages, _)) = self.ctx.store.fetch_inbox(&id, 1, 4 * 1024 * 1024)
                && !messages.is_empty()
            {
                let _ = lane.cast(LaneMsg::ReadMail);
            }
        }
    }

    async fn owner_left(&self, owner: &PeerId) {
        for (lane, _) in self.lanes.values() {
            if let Ok(CallResult::Success(view)) = lane
                .call(LaneMsg::Status, Some(Duration::from_secs(5)))
                .await
                && &view.owner == owner
            {
                let _ = lane.cast(LaneMsg::OwnerLeft);
            }
        }
    }
}

/// Calls an actor whose reply is a `Result`, mapping a dead actor to
/// `unavailable`.
pub(crate) async fn call<M: ractor::Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    msg: impl FnOnce(RpcReplyPort<Result<T, ControlError>>) -> M,
) -> Result<T, ControlError> {
    match actor.call(msg, None).await {
        Ok(CallResult::Success(r)) => r,
        _ => Err(ControlError::unavailable("a lane actor")),
    }
}

/// Whether a lane should be listed.
pub fn listed(phase: LanePhase, all: bool) -> bool {
    all || phase != LanePhase::Archived
}

/// The identity of a lane's processes.
pub(crate) fn identity_of(ctx: &HostContext, spec: &LaneSpec) -> identity::LaneIdentity {
    let peer = PeerId::new(ctx.host.clone(), spec.name.clone());
    identity::LaneIdentity::new(ctx.home.root.as_deref(), peer)
}

/// Flotilla's MCP server for a lane, run by this executable; `None` when
/// the executable cannot be found (the lane then runs without the tools).
pub(crate) fn mcp_server_of(ctx: &HostContext, spec: &LaneSpec) -> Option<identity::McpServer> {
    let exe = std::env::current_exe().ok()?;
    Some(identity_of(ctx, spec).mcp_server(&exe.display().to_string()))
}
