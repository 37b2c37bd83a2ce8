//! The `Fleets` actor: every fleet of this host, each a saved
//! [`FleetRecord`] whose run ([`flotilla_actors::fleet::run`]) decides
//! everything. The actor feeds the run what happened, saves the record
//! (durably) before doing anything the run asked for, and does it in
//! tasks of its own ([`super::actions`]). At start it reloads every fleet and picks up
//! what was in flight: a turn it had started is waited for, one it had not
//! is started, a judgement is made again (the ledger never accepts a step
//! twice).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::fleet::rotation::note_request;
use flotilla_actors::fleet::{Action, FleetRecord, FleetRun, Rules, SUPERVISOR, TurnEnd, Verdict};
use flotilla_actors::lane::CliKind;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ControlError, FleetHistoryReply, FleetListReply, FleetRemoveReply, FleetRequestArgs,
    FleetRequestReply, FleetResumeArgs, FleetStartArgs, FleetTaskArgs, FleetView,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::actions::{adopt_or_run, perform, wait_for};
use super::{members, start, view};
use crate::context::HostContext;

pub(super) type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// Messages of the fleets' actor.
#[derive(Debug)]
pub enum FleetsMsg {
    /// `fleet.start`.
    Start(Box<FleetStartArgs>, Reply<FleetView>),
    /// `fleet.task`.
    Task(Box<FleetTaskArgs>, Reply<FleetView>),
    /// `fleet.status`.
    Status(PeerName, Reply<FleetView>),
    /// `fleet.list`.
    List(Reply<FleetListReply>),
    /// `fleet.pause`.
    Pause(PeerName, Reply<FleetView>),
    /// `fleet.resume`.
    Resume(Box<FleetResumeArgs>, Reply<FleetView>),
    /// `fleet.stop`.
    Stop(PeerName, Reply<FleetView>),
    /// `fleet.history`.
    History(PeerName, Reply<FleetHistoryReply>),
    /// `fleet.request`: answered when the member's reply passes or fails.
    Request(Box<FleetRequestArgs>, Reply<FleetRequestReply>),
    /// A member's turn started (its lane turn) or could not start.
    Started(PeerName, String, Result<u32, String>),
    /// A member's turn ended.
    Ended(PeerName, String, u32, TurnEnd),
    /// A member's running turn reports its context use (percent).
    Context(PeerName, String, u32, f64),
    /// A step was judged.
    Judged(PeerName, String, Verdict),
    /// A usage wall should have lifted.
    WallLifted(PeerName),
    /// The model endpoint a fleet waits for was probed: it answers, or not.
    Probed(PeerName, String, bool),
    /// `fleet.remove`.
    Remove(PeerName, Reply<FleetRemoveReply>),
}

/// A handle on the fleets' actor.
pub type FleetsRef = ActorRef<FleetsMsg>;

/// The fleets' actor.
#[derive(Debug)]
pub struct Fleets;

/// Its state.
#[derive(Debug)]
pub struct FleetsState {
    pub(super) ctx: Arc<HostContext>,
    pub(super) fleets: BTreeMap<PeerName, FleetRecord>,
    /// Callers waiting for their service request's answer.
    pub(super) answers: BTreeMap<(PeerName, u64), Reply<FleetRequestReply>>,
}

impl Actor for Fleets {
    type Msg = FleetsMsg;
    type State = FleetsState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: FleetsRef,
        ctx: Arc<HostContext>,
    ) -> Result<FleetsState, ActorProcessingErr> {
        let mut state = FleetsState {
            fleets: ctx
                .store
                .fleets()?
                .into_iter()
                .map(|r| (r.spec.name.clone(), r))
                .collect(),
            ctx,
            answers: BTreeMap::new(),
        };
        let names: Vec<PeerName> = state.fleets.keys().cloned().collect();
        for name in names {
            state.pick_up(&myself, &name);
        }
        Ok(state)
    }

    async fn handle(
        &self,
        myself: FleetsRef,
        msg: FleetsMsg,
        state: &mut FleetsState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            FleetsMsg::Start(args, reply) => {
                let _ = reply.send(start::start(state, &myself, *args).await);
            }
            FleetsMsg::Task(args, reply) => {
                let _ = reply.send(start::give(state, &myself, *args).await);
            }
            FleetsMsg::Status(name, reply) => {
                let _ = reply.send(
                    state
                        .get(&name)
                        .map(|r| view::of(&state.ctx, r, &state.fleets)),
                );
            }
            FleetsMsg::List(reply) => {
                let _ = reply.send(Ok(view::list(&state.ctx, &state.fleets)));
            }
            FleetsMsg::Pause(name, reply) => {
                let _ = reply.send(start::pause(state, &myself, &name).await);
            }
            FleetsMsg::Resume(args, reply) => {
                let _ = reply.send(start::resume(state, &myself, *args).await);
            }
            FleetsMsg::Stop(name, reply) => {
                let _ = reply.send(start::stop(state, &myself, &name).await);
            }
            FleetsMsg::History(name, reply) => {
                let _ = reply.send(state.get(&name).map(view::history));
            }
            FleetsMsg::Request(args, reply) => state.request(&myself, *args, reply).await,
            FleetsMsg::Started(name, role, started) => {
                state.started(&myself, &name, role, started).await;
            }
            FleetsMsg::Ended(name, role, turn, end) => {
                if let Some(record) = state.fleets.get_mut(&name) {
                    super::remote::saw(record, &role, turn, &end);
                }
                state
                    .event(&myself, &name, |run, r| {
                        run.seen(&role, turn);
                        run.ended(&role, end, r)
                    })
                    .await;
                if let Some(record) = state.fleets.get(&name) {
                    members::handed_out(&state.ctx, &record.spec, &role, turn).await;
                }
            }
            FleetsMsg::Remove(name, reply) => {
                let _ = reply.send(start::remove(state, &name).await);
            }
            FleetsMsg::WallLifted(name) => {
                state
                    .event(&myself, &name, |run, r| run.wall_lifted(r))
                    .await;
            }
            FleetsMsg::Probed(name, at, answers) => state.probed(&myself, &name, at, answers).await,
            FleetsMsg::Context(name, role, turn, pct) => {
                state
                    .event(&myself, &name, |run, r| {
                        run.context_seen(&role, turn, pct, r)
                    })
                    .await;
            }
            FleetsMsg::Judged(name, step, verdict) => {
                state
                    .event(&myself, &name, |run, r| run.judged(&step, verdict, r))
                    .await;
            }
        }
        Ok(())
    }
}

/// Runs `f` with the run of `record` and the rules it applies now.
pub(super) fn with_rules<T>(
    record: &mut FleetRecord,
    f: impl FnOnce(&mut FleetRun, &Rules<'_>) -> T,
) -> T {
    let spec = &record.spec;
    let workers = spec.worker_roles();
    let accounts: BTreeMap<String, String> = spec
        .members()
        .into_iter()
        .map(|(role, m)| (role, m.cli.to_string()))
        .collect();
    let picks: BTreeMap<String, (CliKind, Option<String>)> = spec
        .members()
        .into_iter()
        .map(|(role, m)| (role, (m.cli, m.model.clone())))
        .collect();
    let chains: BTreeMap<String, Vec<String>> = spec
        .members()
        .into_iter()
        .map(|(role, m)| (role, m.fallback_models.clone()))
        .collect();
    let now_ms = Timestamp::now().0;
    let rules = Rules {
        workers: &workers,
        accounts: &accounts,
        max_busy: spec.max_busy,
        budget: &spec.budget,
        elapsed: Duration::from_millis(now_ms.saturating_sub(record.started_ms)),
        now_ms,
        rotate_at_pct: spec.rotate_at_pct,
        rotate_now_at_pct: spec.rotate_now_at(),
        chains: &chains,
        wall_wait_ms: spec.wall_wait_secs.saturating_mul(1000),
        matrix: &spec.matrix,
        picks: &picks,
    };
    f(&mut record.run, &rules)
}

impl FleetsState {
    pub(super) fn get(&self, name: &PeerName) -> Result<&FleetRecord, ControlError> {
        self.fleets
            .get(name)
            .ok_or_else(|| view::no_such_fleet(name))
    }

    /// Feeds one event to a fleet's run, saves it, then does what it asked.
    pub(super) async fn event(
        &mut self,
        myself: &FleetsRef,
        name: &PeerName,
        f: impl FnOnce(&mut FleetRun, &Rules<'_>) -> Vec<Action>,
    ) {
        let Some(record) = self.fleets.get_mut(name) else {
            return;
        };
        let handed_over = record.run.handoffs.len();
        let actions = with_rules(record, f);
        if let Err(e) = self.ctx.commit.put_fleet(record).await {
            tracing::error!(fleet = %name, error = %e, "a fleet's record could not be saved; its actions wait for the next start");
            return;
        }
        super::actions::record_handoffs(&self.ctx, record, handed_over);
        let (answers, actions): (Vec<Action>, Vec<Action>) = actions
            .into_iter()
            .partition(|a| matches!(a, Action::Answered(..)));
        if !record.stopped {
            perform(&self.ctx, myself, record, actions);
        }
        for answer in answers {
            if let Action::Answered(id, answer) = answer {
                self.answer(name, id, answer);
            }
        }
    }

    /// The endpoint a fleet waits for was probed: resume when it answers,
    /// probe again when it does not (while the fleet still waits for it).
    async fn probed(&mut self, myself: &FleetsRef, name: &PeerName, at: String, answers: bool) {
        let Some(record) = self.fleets.get(name) else {
            return;
        };
        if record.stopped || record.run.offline.as_deref() != Some(at.as_str()) {
            return;
        }
        if answers {
            self.event(myself, name, |run, r| run.back_online(r)).await;
        } else {
            super::probe::again(myself.clone(), name.clone(), at);
        }
    }

    async fn started(
        &mut self,
        myself: &FleetsRef,
        name: &PeerName,
        role: String,
        started: Result<u32, String>,
    ) {
        match started {
            Ok(turn) => {
                let Some(record) = self.fleets.get_mut(name) else {
                    return;
                };
                record.run.started(&role, turn);
                if let Err(e) = self.ctx.commit.put_fleet(record).await {
                    tracing::error!(fleet = %name, error = %e, "a fleet's record could not be saved");
                }
                wait_for(&self.ctx, myself, record, role, turn);
            }
            Err(why) => {
                let end = TurnEnd {
                    ok: false,
                    text: format!("the turn could not start: {why}"),
                    class: Some("cannot_start".into()),
                    ..TurnEnd::default()
                };
                self.event(myself, name, |run, r| run.ended(&role, end, r))
                    .await;
            }
        }
    }

    /// After a start of the daemon: waits for the turns in flight, starts
    /// those that had not started, judges again what was being judged.
    fn pick_up(&mut self, myself: &FleetsRef, name: &PeerName) {
        let Some(record) = self.fleets.get_mut(name) else {
            return;
        };
        if record.stopped {
            return;
        }
        let run = &record.run;
        let mut in_flight: Vec<(String, Option<u32>, String, bool)> = Vec::new();
        if let Some(asked) = &run.supervisor {
            let prompt = asked.prompt.clone();
            in_flight.push((SUPERVISOR.into(), asked.turn, prompt, asked.fresh));
        }
        for (role, a) in &run.working {
            in_flight.push((role.clone(), a.turn, a.prompt.clone(), a.fresh));
        }
        for (role, ask) in &run.noting {
            in_flight.push((role.clone(), ask.turn, note_request(), false));
        }
        for (role, ask) in &run.serving {
            in_flight.push((role.clone(), ask.turn, ask.prompt.clone(), false));
        }
        let mut actions = Vec::new();
        if let Some(until) = run.wall_until_ms {
            actions.push(Action::WallUntil(until));
        }
        if let Some(at) = &run.offline {
            actions.push(Action::Probe(at.clone()));
        }
        for (role, turn, prompt, fresh) in in_flight {
            match turn {
                Some(turn) => wait_for(&self.ctx, myself, record, role, turn),
                None => {
                    let model = with_rules(&mut record.clone(), |run, r| run.model_of(&role, r));
                    let seen = run.seen_turns.get(&role).copied().unwrap_or(0);
                    let run_it = Action::Run {
                        role: role.clone(),
                        prompt,
                        fresh,
                        model,
                    };
                    adopt_or_run(&self.ctx, myself, record, role, seen, run_it);
                }
            }
        }
        for a in run.judging.values() {
            actions.push(Action::Judge {
                step: a.step.clone(),
                task: a.judged_against(),
            });
        }
        if run.judging_final
            && let Some(task) = &run.task
        {
            actions.push(Action::Judge {
                step: "final".into(),
                task: task.clone(),
            });
        }
        let more = with_rules(record, |run, r| run.pump(r));
        actions.extend(more);
        perform(&self.ctx, myself, record, actions);
    }
}
