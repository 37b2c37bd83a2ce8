//! The `HostSupervisor`: root of the daemon's actor tree.
//!
//! ```text
//! HostSupervisor
//! ├── Registry        peers and groups; publishes the directory
//! ├── Router          admission and delivery into inboxes
//! ├── Watchdog        pings the others, kills one that hangs
//! ├── LaneSupervisor  lanes: one Lane actor each, one Connector per running CLI
//! ├── ControlServer   the Unix socket; one task per connection
//! ├── HubLink         the QUIC link to the hub (only when a hub is configured)
//! └── Discovery       (federation issue) mDNS
//! ```
//!
//! Children start in that order (the socket last, so a client that can
//! connect finds everything serving). A child that fails or stops on its own
//! is restarted after a bounded exponential backoff and reloads its state
//! from the store; the supervisor never stops because a child did (ractor's
//! default would). On shutdown it stops the children in reverse order. It
//! keeps each child's state and restart count in the shared context for
//! `host status`.

use std::sync::Arc;
use std::time::Instant;

use flotilla_actors::protocol::{ActorState, ActorStatus};
use flotilla_actors::supervision::Backoff;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SpawnErr, SupervisionEvent};

use crate::context::HostContext;
use crate::control::ControlServer;
use crate::fleet::runner::Fleets;
use crate::hub_link::HubLink;
use crate::lanes::LaneSupervisor;
use crate::registry::Registry;
use crate::router::Router;
use crate::watchdog::Watchdog;

/// The supervised children, in start order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// Peers and groups.
    Registry,
    /// Delivery.
    Router,
    /// Liveness.
    Watchdog,
    /// Lanes.
    LaneSupervisor,
    /// Fleets (after lanes: their members are lanes).
    Fleets,
    /// The socket.
    ControlServer,
    /// The link to the hub.
    HubLink,
}

impl ChildKind {
    const ALL: [ChildKind; 7] = [
        Self::Registry,
        Self::Router,
        Self::Watchdog,
        Self::LaneSupervisor,
        Self::Fleets,
        Self::ControlServer,
        Self::HubLink,
    ];

    /// The children this daemon runs, in start order: the hub link only
    /// when a hub is configured.
    fn wanted(ctx: &HostContext) -> Vec<ChildKind> {
        let hub = matches!(ctx.config.hub_target(), Ok(Some(_)));
        Self::ALL
            .into_iter()
            .filter(|k| *k != Self::HubLink || hub)
            .collect()
    }

    fn name(self) -> &'static str {
        match self {
            Self::Registry => "registry",
            Self::Router => "router",
            Self::Watchdog => "watchdog",
            Self::LaneSupervisor => "lane_supervisor",
            Self::Fleets => "fleets",
            Self::ControlServer => "control_server",
            Self::HubLink => "hub_link",
        }
    }
}

/// Messages of the supervisor.
#[derive(Debug)]
pub enum SupervisorMsg {
    /// Restart a child whose backoff has passed.
    Restart(ChildKind),
}

/// A handle on the supervisor.
pub type SupervisorRef = ActorRef<SupervisorMsg>;

/// The supervisor actor.
#[derive(Debug)]
pub struct HostSupervisor;

#[derive(Debug)]
struct Slot {
    kind: ChildKind,
    cell: Option<ActorCell>,
    started: Instant,
    backoff: Backoff,
    restarts: u32,
    state: ActorState,
    last_failure: Option<String>,
}

/// The supervisor's state.
#[derive(Debug)]
pub struct SupervisorState {
    ctx: Arc<HostContext>,
    slots: Vec<Slot>,
}

impl Actor for HostSupervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: SupervisorRef,
        ctx: Arc<HostContext>,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let kinds = ChildKind::wanted(&ctx);
        let slots = kinds
            .iter()
            .map(|&kind| Slot {
                kind,
                cell: None,
                started: Instant::now(),
                backoff: Backoff::default(),
                restarts: 0,
                state: ActorState::Stopped,
                last_failure: None,
            })
            .collect();
        let mut state = SupervisorState { ctx, slots };
        for kind in kinds {
            // A child that cannot start at all (the socket cannot be bound)
            // makes the daemon fail to start, with the reason.
            state.start(&myself, kind).await?;
        }
        Ok(state)
    }

    async fn post_stop(
        &self,
        _: SupervisorRef,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        state.ctx.begin_stop();
        for slot in state.slots.iter_mut().rev() {
            if let Some(cell) = slot.cell.take() {
                let _ = cell
                    .stop_and_wait(Some("daemon stopping".into()), None)
                    .await;
            }
            slot.state = ActorState::Stopped;
        }
        state.publish();
        Ok(())
    }

    async fn handle(
        &self,
        myself: SupervisorRef,
        msg: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Restart(kind) => state.restart(&myself, kind).await,
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: SupervisorRef,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(cell, err) => {
                state.on_exit(&myself, &cell, err.to_string())
            }
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                state.on_exit(&myself, &cell, reason.unwrap_or_else(|| "stopped".into()))
            }
            SupervisionEvent::ActorStarted(cell) => {
                tracing::debug!(id = %cell.get_id(), "child started")
            }
            other => tracing::debug!(event = ?other, "supervision event"),
        }
        Ok(())
    }
}

impl SupervisorState {
    fn slot(&mut self, kind: ChildKind) -> &mut Slot {
        let i = self.slots.iter().position(|s| s.kind == kind).unwrap_or(0);
        &mut self.slots[i]
    }

    async fn start(&mut self, myself: &SupervisorRef, kind: ChildKind) -> Result<(), SpawnErr> {
        let cell = spawn_child(myself, &self.ctx, kind).await?;
        let slot = self.slot(kind);
        slot.cell = Some(cell);
        slot.started = Instant::now();
        slot.state = ActorState::Running;
        self.publish();
        Ok(())
    }

    async fn restart(&mut self, myself: &SupervisorRef, kind: ChildKind) {
        if self.ctx.is_stopping() {
            return;
        }
        match self.start(myself, kind).await {
            Ok(()) => tracing::info!(child = kind.name(), "child restarted"),
            Err(e) => self.schedule(myself, kind, format!("restart failed: {e}")),
        }
    }

    fn on_exit(&mut self, myself: &SupervisorRef, cell: &ActorCell, why: String) {
        let Some(kind) = self
            .slots
            .iter()
            .find(|s| s.cell.as_ref().is_some_and(|c| c.get_id() == cell.get_id()))
            .map(|s| s.kind)
        else {
            return;
        };
        self.slot(kind).cell = None;
        clear_ref(&self.ctx, kind);
        if self.ctx.is_stopping() {
            self.slot(kind).state = ActorState::Stopped;
            self.publish();
            return;
        }
        tracing::error!(child = kind.name(), reason = %why, "child exited; restarting it");
        self.schedule(myself, kind, why);
    }

    fn schedule(&mut self, myself: &SupervisorRef, kind: ChildKind, why: String) {
        let slot = self.slot(kind);
        let delay = slot.backoff.on_failure(slot.started.elapsed());
        slot.restarts += 1;
        slot.state = ActorState::Restarting;
        slot.last_failure = Some(why);
        myself.send_after(delay, move || SupervisorMsg::Restart(kind));
        self.publish();
    }

    fn publish(&self) {
        let table = self
            .slots
            .iter()
            .map(|s| ActorStatus {
                name: s.kind.name().into(),
                state: s.state,
                restarts: s.restarts,
                last_failure: s.last_failure.clone(),
            })
            .collect();
        if let Ok(mut actors) = self.ctx.actors.write() {
            *actors = table;
        }
    }
}

async fn spawn_child(
    myself: &SupervisorRef,
    ctx: &Arc<HostContext>,
    kind: ChildKind,
) -> Result<ActorCell, SpawnErr> {
    let sup = myself.get_cell();
    let args = ctx.clone();
    Ok(match kind {
        ChildKind::Registry => {
            let (actor, _) = Actor::spawn_linked(None, Registry, args, sup).await?;
            ctx.children.set_registry(Some(actor.clone()));
            actor.get_cell()
        }
        ChildKind::Router => {
            let (actor, _) = Actor::spawn_linked(None, Router, args, sup).await?;
            ctx.children.set_router(Some(actor.clone()));
            actor.get_cell()
        }
        ChildKind::Watchdog => Actor::spawn_linked(None, Watchdog, args, sup)
            .await?
            .0
            .get_cell(),
        ChildKind::LaneSupervisor => {
            let (actor, _) = Actor::spawn_linked(None, LaneSupervisor, args, sup).await?;
            ctx.children.set_lanes(Some(actor.clone()));
            actor.get_cell()
        }
        ChildKind::Fleets => {
            let (actor, _) = Actor::spawn_linked(None, Fleets, args, sup).await?;
            ctx.children.set_fleets(Some(actor.clone()));
            actor.get_cell()
        }
        ChildKind::ControlServer => Actor::spawn_linked(None, ControlServer, args, sup)
            .await?
            .0
            .get_cell(),
        ChildKind::HubLink => Actor::spawn_linked(None, HubLink, args, sup)
            .await?
            .0
            .get_cell(),
    })
}

fn clear_ref(ctx: &HostContext, kind: ChildKind) {
    match kind {
        ChildKind::Registry => ctx.children.set_registry(None),
        ChildKind::Router => ctx.children.set_router(None),
        ChildKind::LaneSupervisor => ctx.children.set_lanes(None),
        ChildKind::Fleets => ctx.children.set_fleets(None),
        ChildKind::Watchdog | ChildKind::ControlServer | ChildKind::HubLink => {}
    }
}
