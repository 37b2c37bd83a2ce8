//! The lane actor: one per lane. It owns the lane's record (persisted after
//! every change), starts each turn's connector, turns the connector's
//! reports into events and results, enforces the deadline, interrupts,
//! archives, holds the lane for a person (`hold`), and tells the owner how
//! each turn ended. The rules live in
//! `flotilla_actors::lane`; this actor carries out their effects.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::hold::{LaneHold, WaitingTurn};
use flotilla_actors::lane::{LanePhase, LaneRecord, TurnResult, TurnStatus};
use flotilla_actors::model::{PeerRecord, Timestamp};
use flotilla_actors::names::PeerId;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneAttachArgs, LaneAttachReply, LaneReleaseArgs, LaneView,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use super::cli::Outcome;
use super::connector::{ConnectorMsg, ConnectorRef};
pub use super::results::Collected;
use super::turn;
use crate::context::HostContext;

/// How long an interrupted process gets before SIGTERM, then SIGKILL.
pub(crate) const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// Messages of a lane.
#[derive(Debug)]
pub enum LaneMsg {
    /// Start a turn.
    BeginTurn {
        /// The prompt.
        prompt: String,
        /// Continue the native session.
        resume: bool,
        /// The turn number, or why not.
        reply: Reply<u32>,
    },
    /// Run the next turns with this model (a fleet member moved down its
    /// fallback chain); kept in the lane's spec from its next turn.
    SetModel(String),
    /// Show the oldest result not handed out yet.
    Collect(RpcReplyPort<Collected>),
    /// The result of this turn reached the client: it is collected.
    HandedOut(u32),
    /// The lane's view.
    Status(RpcReplyPort<LaneView>),
    /// Interrupt the running turn.
    Interrupt(Reply<LaneView>),
    /// Hold the lane for a person (`lane.attach`).
    Attach(Box<LaneAttachArgs>, Reply<LaneAttachReply>),
    /// End the hold of the holding process (`lane.release`).
    Release(LaneReleaseArgs, Reply<LaneView>),
    /// Archive (interrupting first if needed).
    Archive(Reply<LaneView>),
    /// The owner left.
    OwnerLeft,
    /// A persistent lane has messages: read them (prompts of turns).
    ReadMail,
    /// Periodic check: deadline, auto-archive.
    Tick,
    /// From the watchdog: is the turn stalled?
    StallCheck,
    /// From the connector: parsed output.
    Events {
        /// The events.
        kinds: Vec<EventKind>,
        /// Bytes of stdout consumed so far.
        offset: u64,
    },
    /// From the connector: the process used CPU time.
    Progress,
    /// The owner was told of these turns (all that were owed, with `all`).
    NoticesPaid {
        /// The turns.
        turns: Vec<u32>,
        /// Every notice of the batch was paid.
        all: bool,
    },
    /// From the connector: the process ended.
    Exited {
        /// What its output said.
        outcome: Outcome,
        /// Its exit code.
        exit: Option<i32>,
    },
}

/// A handle on a lane.
pub type LaneRef = ActorRef<LaneMsg>;

/// The lane actor.
#[derive(Debug)]
pub struct Lane;

/// The lane's state.
#[derive(Debug)]
pub struct LaneState {
    pub(super) ctx: Arc<HostContext>,
    pub(super) record: LaneRecord,
    pub(super) connector: Option<ConnectorRef>,
    /// Why the turn is being stopped, when Flotilla stops it.
    pub(super) stopping: Option<(TurnStatus, String)>,
    pub(super) archive_after_turn: bool,
    pub(super) last_progress: Instant,
    /// The running turn was adopted after a daemon restart.
    pub(super) adopted: bool,
    /// The watchdog killed the turn's process to start it again.
    pub(super) restarting: bool,
    /// Results not handed out yet that a message's turn put aside, by turn
    /// (on disk too).
    pub(super) shelf: BTreeMap<u32, TurnResult>,
    /// Turns whose end the owner was not told of yet (on disk too).
    pub(super) owed: BTreeMap<u32, TurnResult>,
    /// A person holds the lane (on disk too, see `hold`).
    pub(super) hold: Option<LaneHold>,
    /// An attach waiting for the running turn to end.
    pub(super) attach: Option<super::hold::PendingAttach>,
    /// The turn that waited for a hold just ended, about to start.
    pub(super) released: Option<WaitingTurn>,
    /// A new lane's peer, until its first turn stores it.
    pub(super) unstored_peer: Option<PeerRecord>,
    /// The lane itself, for the tasks that report back to it.
    pub(super) myself: LaneRef,
    /// A batch of owed notices is on its way (see `notify`).
    pub(super) notifying: bool,
}

impl Actor for Lane {
    type Msg = LaneMsg;
    type State = LaneState;
    /// The context, the lane's record and, for a lane being started, its
    /// peer, stored with its first turn.
    type Arguments = (Arc<HostContext>, LaneRecord, Option<PeerRecord>);

    async fn pre_start(
        &self,
        myself: LaneRef,
        (ctx, record, unstored_peer): Self::Arguments,
    ) -> Result<LaneState, ActorProcessingErr> {
        let name = record.spec.name.as_str();
        let shelf = ctx.store.lane_shelf(name)?.into_iter().collect();
        let owed = ctx.store.lane_notices(name)?.into_iter().collect();
        let mut state = LaneState {
            ctx,
            record,
            connector: None,
            stopping: None,
            archive_after_turn: false,
            last_progress: Instant::now(),
            adopted: false,
            restarting: false,
            shelf,
            owed,
            hold: None,
            attach: None,
            released: None,
            unstored_peer,
            myself: myself.clone(),
            notifying: false,
        };
        state.hold = super::hold::load(&state);
        turn::recover(&mut state, &myself).await;
        // Owners not told before a crash are told now.
        state.pay_notices();
        state.pay_replies().await;
        Ok(state)
    }

    async fn post_stop(&self, _: LaneRef, state: &mut LaneState) -> Result<(), ActorProcessingErr> {
        turn::stop_for_shutdown(state).await;
        Ok(())
    }

    async fn handle(
        &self,
        myself: LaneRef,
        msg: LaneMsg,
        state: &mut LaneState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            LaneMsg::BeginTurn {
                prompt,
                resume,
                reply,
            } => {
                let begun = super::hold::begin_or_wait(state, &myself, prompt, resume);
                let _ = reply.send(begun.await);
            }
            LaneMsg::Collect(reply) => {
                let _ = reply.send(state.collect());
            }
            LaneMsg::HandedOut(turn) => state.handed_out(turn).await,
            LaneMsg::SetModel(model) => state.record.spec.model = Some(model),
            LaneMsg::Status(reply) => {
                let _ = reply.send(state.view());
            }
            LaneMsg::Interrupt(reply) => {
                let r = state
                    .interrupt(TurnStatus::Interrupted, "interrupted on request")
                    .await;
                let _ = reply.send(r.map(|()| state.view()));
            }
            LaneMsg::Attach(args, reply) => super::hold::attach(state, *args, reply).await,
            LaneMsg::Release(args, reply) => {
                let _ = reply.send(super::hold::release(state, &myself, &args).await);
            }
            LaneMsg::Archive(reply) => {
                let _ = reply.send(state.archive().await.map(|()| state.view()));
            }
            LaneMsg::OwnerLeft => state.owner_left().await,
            LaneMsg::ReadMail => super::mail::read(state, &myself).await,
            LaneMsg::Tick => {
                state.tick().await;
                super::hold::check_holder(state, &myself).await;
            }
            LaneMsg::StallCheck => super::stall::check(state).await,
            LaneMsg::Events { kinds, offset } => state.events(kinds, offset).await,
            LaneMsg::Progress => state.last_progress = Instant::now(),
            LaneMsg::NoticesPaid { turns, all } => state.notices_paid(turns, all),
            LaneMsg::Exited { outcome, exit } => turn::exited(state, &myself, outcome, exit).await,
        }
        // An attach waiting for the turn's end is answered.
        super::hold::answer(state).await;
        // Messages that arrived during a turn start the next one.
        turn::start_queued(state, &myself).await;
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _: LaneRef,
        event: SupervisionEvent,
        state: &mut LaneState,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(_, err) = event {
            tracing::error!(lane = %state.record.spec.name, error = %err, "connector failed");
            state.connector = None;
            if state.record.phase == LanePhase::Running {
                let outcome = Outcome {
                    failed: true,
                    error: Some(format!("the connector failed: {err}")),
                    ..Outcome::default()
                };
                turn::finish(state, outcome, None).await;
            }
        }
        Ok(())
    }
}

impl LaneState {
    pub(super) fn id(&self) -> PeerId {
        PeerId::new(self.ctx.host.clone(), self.record.spec.name.clone())
    }

    pub(super) fn view(&self) -> LaneView {
        let r = &self.record;
        LaneView {
            lane: self.id(),
            cli: r.spec.cli,
            phase: r.phase,
            turns: r.turns,
            owner: r.spec.owner.clone(),
            cwd: r.spec.cwd.clone(),
            model: r.spec.model.clone(),
            permissions: r.spec.permissions,
            persistent: r.spec.persistent,
            pid: r.running.as_ref().and_then(|t| t.pid),
            native_session_id: r.native_session.clone(),
            last_status: r.last_result.as_ref().map(|t| t.status),
            uncollected: r.uncollected.is_some() || !self.shelf.is_empty(),
            created_at: r.created_at,
            finished_at: r.finished_at,
            held_by: self.hold.as_ref().map(|h| h.holder.name.clone()),
            context_used_pct: r.last_result.as_ref().and_then(|t| t.context_used_pct),
        }
    }

    fn current_turn(&self) -> u32 {
        self.record
            .running
            .as_ref()
            .map_or(self.record.turns, |t| t.turn)
    }

    pub(super) async fn interrupt(
        &mut self,
        status: TurnStatus,
        why: &str,
    ) -> Result<(), ControlError> {
        self.record
            .mark_interrupted()
            .map_err(|e| ControlError::new(ErrorCode::Conflict, e.to_string()))?;
        if self.stopping.is_none() {
            self.stopping = Some((status, why.to_owned()));
        }
        self.save().await;
        let turn = self.current_turn();
        self.log(
            turn,
            vec![EventKind::Note {
                text: format!("stopping the turn: {why}"),
            }],
        )
        .await;
        if let Some(c) = &self.connector {
            let _ = c.cast(ConnectorMsg::Interrupt(INTERRUPT_GRACE));
        }
        Ok(())
    }

    async fn archive(&mut self) -> Result<(), ControlError> {
        if self.record.phase == LanePhase::Running {
            self.archive_after_turn = true;
            return self.interrupt(TurnStatus::Interrupted, "archived").await;
        }
        self.archive_now().await;
        Ok(())
    }

    pub(super) async fn archive_now(&mut self) {
        if self.record.archive().is_ok() {
            self.save().await;
            self.log(
                self.record.turns,
                vec![EventKind::Note {
                    text: "lane archived".into(),
                }],
            )
            .await;
        }
    }

    async fn owner_left(&mut self) {
        if self.record.spec.persistent {
            return;
        }
        if self.record.phase == LanePhase::Running {
            self.archive_after_turn = true;
            let _ = self
                .interrupt(TurnStatus::Interrupted, "its owner left")
                .await;
        } else {
            self.archive_now().await;
        }
    }

    async fn tick(&mut self) {
        self.pay_notices();
        if !self.record.replies_owed.is_empty() {
            self.pay_replies().await;
        }
        let now = Timestamp::now();
        if self.record.deadline_passed(now) && self.stopping.is_none() {
            let _ = self
                .interrupt(TurnStatus::TimedOut, "the turn's deadline passed")
                .await;
        } else if self.record.auto_archive_due(now) && self.hold.is_none() {
            self.archive_now().await;
        }
    }

    /// Output turned into events: the events and the offset they end at
    /// are saved together, so an adopted turn never repeats them.
    async fn events(&mut self, kinds: Vec<EventKind>, offset: u64) {
        self.last_progress = Instant::now();
        if let Some(t) = self.record.running.as_mut() {
            t.output_offset = offset;
        }
        let turn = self.current_turn();
        self.save_with(turn, kinds, |_| ()).await;
        crate::crash_point::reached(&self.ctx, "lane.events");
    }
}
