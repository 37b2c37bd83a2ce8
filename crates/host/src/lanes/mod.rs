//! The `LaneSupervisor` and everything lanes are made of.
//!
//! ```text
//! LaneSupervisor
//! └── Lane (one per lane: its record, its turns)
//!     └── Connector (one per running CLI process: output, exit, signals)
//! ```
//!
//! The supervisor creates lanes (registering each as a peer `HOST/NAME` in
//! its own and its owner's private groups), reloads every lane from the
//! store at start (lanes adopt turns that survived a daemon crash), ticks
//! them (deadlines, auto-archive), hands messages for persistent lanes to
//! them, and tells them when their owner leaves. At shutdown it stops every
//! lane, and each lane stops its process: no process outlives its lane.

mod answers;
pub mod cli;
pub mod cli_home;
pub mod connector;
pub mod doctor;
mod endpoint;
pub mod identity;
pub mod lane;
mod mail;
mod notify;
pub mod process;
mod removal;
mod results;
mod stall;
mod turn;
mod version_floor;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::lane::{CliKind, LanePhase, LaneRecord, LaneSpec};
use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LanePruneArgs, LanePruneReply, LaneRemoveArgs, LaneRemoveReply,
    LaneStartArgs, LaneStartReply, PeerJoinArgs,
};
use ractor::concurrency::JoinHandle;
use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

pub use lane::{Collected, LaneMsg, LaneRef};

use crate::context::HostContext;
use crate::registry::RegistryMsg;

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
            let (actor, _) =
                Actor::spawn_linked(None, lane::Lane, (ctx.clone(), record), myself.get_cell())
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
            && let Ok((actor, _)) =
                Actor::spawn_linked(None, lane::Lane, (self.ctx.clone(), record), me.get_cell())
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

    async fn start(
        &mut self,
        myself: &LaneSupervisorRef,
        args: LaneStartArgs,
    ) -> Result<LaneStartReply, ControlError> {
        let spec = self.spec(args.clone()).await?;
        let notes = self.version_notes(&spec, args.force).await?;
        let peer = self.lane_peer(&spec);
        let registry = self
            .ctx
            .children
            .registry()
            .ok_or_else(|| ControlError::unavailable("the registry"))?;
        call(&registry, |r| RegistryMsg::PutLanePeer(peer.clone(), r)).await?;
        let record = LaneRecord::new(spec.clone(), Timestamp::now());
        self.ctx
            .commit
            .put_lane(record.clone())
            .await
            .map_err(crate::registry::store_error)?;
        let (actor, _) = Actor::spawn_linked(
            None,
            lane::Lane,
            (self.ctx.clone(), record),
            myself.get_cell(),
        )
        .await
        .map_err(|e| ControlError::internal(format!("cannot start the lane: {e}")))?;
        self.lanes
            .insert(spec.name.clone(), (actor.clone(), spec.persistent));
        let begun = call(&actor, |reply| LaneMsg::BeginTurn {
            prompt: args.prompt.clone(),
            resume: false,
            reply,
        })
        .await;
        let turn = match begun {
            Ok(turn) => turn,
            Err(refused) => {
                // A lane whose first turn cannot start is not kept: no ghost
                // lane, no burned name.
                if let Err(e) = self.remove_now(&spec.name, actor, true).await {
                    tracing::warn!(lane = %spec.name, error = %e, "could not remove a lane whose start failed");
                }
                return Err(refused);
            }
        };
        Ok(LaneStartReply {
            lane: peer.id,
            turn,
            cwd: Some(spec.cwd.clone()),
            notes,
        })
    }

    /// The CLI's version against the supported range: refused below the
    /// floor unless `force`; notes for the operator otherwise.
    async fn version_notes(
        &self,
        spec: &LaneSpec,
        force: bool,
    ) -> Result<Vec<String>, ControlError> {
        let Some(connector) = cli::connector(spec.cli).filter(|_| spec.cli != CliKind::Exec) else {
            return Ok(Vec::new());
        };
        let program = self.ctx.config.cli_program(spec.cli, connector.program());
        Ok(version_floor::check_start(spec.cli, &program, force)
            .await?
            .into_iter()
            .collect())
    }

    /// Checks a start request and makes the lane's spec.
    async fn spec(&self, args: LaneStartArgs) -> Result<LaneSpec, ControlError> {
        let directory = self.ctx.directory();
        let lane_id = PeerId::new(self.ctx.host.clone(), args.name.clone());
        if self.lanes.contains_key(&args.name) {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("lane {} already exists", args.name),
            )
            .with_hint(format!(
                "continue it with `flotilla lane resume {}`, or pick another name",
                args.name
            )));
        }
        if directory.get(&lane_id).is_some() {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("{lane_id} is already a peer"),
            )
            .with_hint("pick another lane name"));
        }
        if args.prompt.len() > MAX_PROMPT {
            return Err(ControlError::new(
                ErrorCode::TooLarge,
                format!(
                    "the prompt is {} bytes, over the limit of {MAX_PROMPT}",
                    args.prompt.len()
                ),
            ));
        }
        flotilla_actors::lane::input::check(&args.args, args.model.as_deref(), &args.env)?;
        if let Some(g) = args.groups.iter().find(|g| g.is_session()) {
            return Err(flotilla_actors::names::NameError::ReservedGroup(g.to_string()).into());
        }
        let owner = match &args.owner {
            Some(remote) => remote.clone(),
            None => ensure_owner(&self.ctx, args.as_peer.as_ref()).await?,
        };
        let cwd = resolve_cwd(args.cwd.as_deref())?;
        let host = self.ctx.host.to_string();
        if let Some(refused) =
            doctor::unusable(&self.ctx.config, &host, args.cli, &args.args, cwd.as_ref())
        {
            return Err(refused);
        }
        let mut groups = args.groups.clone();
        if args.inherit_groups
            && let Some(o) = directory.get(&owner)
        {
            groups.extend(o.groups.iter().filter(|g| !g.is_session()).cloned());
        }
        Ok(LaneSpec {
            name: args.name,
            cli: args.cli,
            cwd,
            model: args.model,
            permissions: args.permissions,
            timeout_secs: args.timeout_secs,
            persistent: args.persistent,
            auto_archive_secs: args.auto_archive_secs,
            groups,
            inherit_groups: args.inherit_groups,
            owner,
            env: args.env,
            args: args.args,
            restart_on_stall: args.restart_on_stall,
        })
    }

    fn lane_peer(&self, spec: &LaneSpec) -> PeerRecord {
        let mut groups: std::collections::BTreeSet<GroupName> =
            spec.groups.iter().cloned().collect();
        groups.insert(GroupName::session(&spec.owner));
        PeerRecord {
            id: PeerId::new(self.ctx.host.clone(), spec.name.clone()),
            kind: PeerKind::Lane,
            product: Some(spec.cli.to_string()),
            groups,
            joined_at: Timestamp::now(),
        }
    }
}

/// A lane's owner on this host: the `--as` peer, or the operator
/// (registered on first use).
pub(crate) async fn ensure_owner(
    ctx: &HostContext,
    as_peer: Option<&PeerName>,
) -> Result<PeerId, ControlError> {
    let directory = ctx.directory();
    if let Some(name) = as_peer {
        let id = PeerId::new(ctx.host.clone(), name.clone());
        return match directory.get(&id) {
            Some(_) => Ok(id),
            None => Err(crate::registry::not_registered(&id)),
        };
    }
    let operator = PeerName::new(OPERATOR).map_err(ControlError::from)?;
    let id = PeerId::new(ctx.host.clone(), operator.clone());
    if directory.get(&id).is_none() {
        let registry = ctx
            .children
            .registry()
            .ok_or_else(|| ControlError::unavailable("the registry"))?;
        let join = PeerJoinArgs {
            name: operator,
            groups: vec![],
            product: Some("operator".into()),
            session: None,
        };
        call(&registry, |r| RegistryMsg::Join(join.clone(), r)).await?;
    }
    Ok(id)
}

fn resolve_cwd(cwd: Option<&str>) -> Result<String, ControlError> {
    let dir = match cwd {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::current_dir().map_err(|e| ControlError::internal(e.to_string()))?,
    };
    if !dir.is_absolute() || !dir.is_dir() {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!(
                "working directory {} does not exist or is not absolute",
                dir.display()
            ),
        )
        .with_hint("pass an existing directory with -C/--cd"));
    }
    Ok(dir.display().to_string())
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
