//! The fleet ops that change a fleet: start, a new task, pause, resume and
//! stop. Each is checked in full before anything starts or is saved; the
//! pair table refuses an unproven pairing before any process runs.

use std::path::Path;

use flotilla_actors::fleet::nesting::parent_of;
use flotilla_actors::fleet::pairs::check_pair;
use flotilla_actors::fleet::{Artifact, FleetRecord, FleetRun, FleetSpec, Lifecycle, Task};
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, FleetRemoveReply, FleetResumeArgs, FleetStartArgs, FleetTaskArgs,
    FleetView, LaneRemoveArgs,
};

use crate::lanes::LaneSupervisorMsg;

use super::actions::perform;
use super::members;
use super::runner::{FleetsRef, FleetsState, with_rules};
use super::view;

fn bad(message: String, hint: &str) -> ControlError {
    ControlError::new(ErrorCode::BadRequest, message).with_hint(hint.to_owned())
}

/// `fleet.start`.
pub(super) async fn start(
    state: &mut FleetsState,
    myself: &FleetsRef,
    args: FleetStartArgs,
) -> Result<FleetView, ControlError> {
    let mut spec = args.spec;
    spec.matrix = state.ctx.config.fleet_matrix.clone();
    for worker in &mut spec.workers {
        // `--host` naming this host places the worker here.
        if worker.host.as_ref() == Some(&state.ctx.host) {
            worker.host = None;
        }
    }
    check_spec(state, &spec).await?;
    let task = match (args.task, spec.lifecycle) {
        (Some(task), _) => Some(task),
        (None, Lifecycle::Smoke) => Some(smoke_task(&spec)),
        (None, _) => None,
    };
    if let Some(task) = &task {
        task.validate()
            .map_err(|e| bad(e.to_string(), "fix the task; see docs/fleets.md#tasks"))?;
    }
    let parent = parent_of(spec.as_peer.as_ref(), state.fleets.values())
        .map_err(|e| bad(e, "start this fleet from a member of a shallower fleet"))?;
    let mut record = FleetRecord {
        spec,
        started_ms: Timestamp::now().0,
        stopped: false,
        run: FleetRun::default(),
        parent,
        remote_seen: Default::default(),
    };
    let actions = match task {
        Some(task) => with_rules(&mut record, |run, r| run.give(task, r))
            .map_err(|e| bad(e, "wait for the fleet's task to end"))?,
        None => Vec::new(),
    };
    save(state, myself, record, actions).await
}

async fn check_spec(state: &FleetsState, spec: &FleetSpec) -> Result<(), ControlError> {
    if state.fleets.contains_key(&spec.name) {
        return Err(ControlError::new(
            ErrorCode::AlreadyExists,
            format!("a fleet named {} exists", spec.name),
        )
        .with_hint(format!(
            "pick another name, or remove it first: flotilla fleet stop {0}; flotilla fleet rm {0}",
            spec.name
        )));
    }
    spec.validate()
        .map_err(|e| bad(e, "see `flotilla fleet start --help`"))?;
    for worker in &spec.workers {
        check_pair(spec.supervisor.cli, worker.cli, spec.lifecycle).map_err(|e| {
            ControlError::new(ErrorCode::Forbidden, e)
                .with_hint("`flotilla fleet pairs` lists the pairs Flotilla's tests ran".to_owned())
        })?;
    }
    let dir = Path::new(&spec.dir);
    if !dir.is_absolute() || !dir.is_dir() {
        return Err(bad(
            format!(
                "{:?} is not an existing directory given by its absolute path",
                spec.dir
            ),
            "pass the fleet's directory with -C DIR",
        ));
    }
    crate::lanes::ensure_owner(&state.ctx, spec.as_peer.as_ref()).await?;
    super::remote::check_hosts(&state.ctx, spec).await?;
    let claimed: Vec<_> = spec.workers.iter().filter(|w| w.claim.is_some()).collect();
    if !claimed.is_empty() {
        crate::governance::lanes::check_fleet_claims(&state.ctx, &spec.dir, &claimed).await?;
    }
    for (role, member) in spec.members() {
        if member.host.is_none() && members::lane_of(&state.ctx, spec, &role).await.is_some() {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("a lane named {} exists", spec.lane_of(&role)),
            )
            .with_hint(format!(
                "remove it (flotilla lane remove {}) or pick another fleet name",
                spec.lane_of(&role)
            )));
        }
    }
    Ok(())
}

/// A smoke fleet's one short round: each worker writes one line.
fn smoke_task(spec: &FleetSpec) -> Task {
    Task {
        goal: "Prove this pairing in one short round: have each worker write the file \
               smoke/<its role>.txt holding the word ready, then say done."
            .into(),
        hours: None,
        artifacts: spec
            .worker_roles()
            .into_iter()
            .map(|role| Artifact {
                path: format!("smoke/{role}.txt"),
                min_chars: 0,
                contains: vec!["ready".into()],
            })
            .collect(),
        checks: Vec::new(),
    }
}

/// `fleet.task`.
pub(super) async fn give(
    state: &mut FleetsState,
    myself: &FleetsRef,
    args: FleetTaskArgs,
) -> Result<FleetView, ControlError> {
    args.task
        .validate()
        .map_err(|e| bad(e.to_string(), "fix the task; see docs/fleets.md#tasks"))?;
    let record = state.get(&args.name)?;
    if record.stopped {
        return Err(stopped(&args.name));
    }
    let mut record = record.clone();
    let actions = with_rules(&mut record, |run, r| run.give(args.task, r)).map_err(|e| {
        ControlError::new(ErrorCode::Conflict, e).with_hint(format!(
            "wait for it (flotilla fleet status {0}) or stop it (flotilla fleet stop {0})",
            args.name
        ))
    })?;
    save(state, myself, record, actions).await
}

/// `fleet.pause`.
pub(super) async fn pause(
    state: &mut FleetsState,
    myself: &FleetsRef,
    name: &PeerName,
) -> Result<FleetView, ControlError> {
    let mut record = state.get(name)?.clone();
    if !record.stopped {
        with_rules(&mut record, |run, r| run.pause_by_person(r));
    }
    save(state, myself, record, Vec::new()).await
}

/// `fleet.resume`.
pub(super) async fn resume(
    state: &mut FleetsState,
    myself: &FleetsRef,
    args: FleetResumeArgs,
) -> Result<FleetView, ControlError> {
    let mut record = state.get(&args.name)?.clone();
    if record.stopped {
        return Err(stopped(&args.name));
    }
    if let Some(card) = args.budget {
        record.spec.budget = card;
    }
    let actions = with_rules(&mut record, |run, r| run.resume(r));
    save(state, myself, record, actions).await
}

/// `fleet.stop`: running turns are interrupted; the record stays for
/// `status` and `history`.
pub(super) async fn stop(
    state: &mut FleetsState,
    myself: &FleetsRef,
    name: &PeerName,
) -> Result<FleetView, ControlError> {
    let mut record = state.get(name)?.clone();
    if !record.stopped {
        record.stopped = true;
        with_rules(&mut record, |run, r| {
            run.pause("stopped by a person".into(), r)
        });
        members::interrupt_all(&state.ctx, &record.spec).await;
    }
    save(state, myself, record, Vec::new()).await
}

/// `fleet.remove`: a stopped fleet, or one with nothing in flight, goes
/// with its members' lanes (their results and unread messages too).
pub(super) async fn remove(
    state: &mut FleetsState,
    name: &PeerName,
) -> Result<FleetRemoveReply, ControlError> {
    let record = state.get(name)?;
    if !record.stopped && !record.run.idle() {
        return Err(
            ControlError::new(ErrorCode::Conflict, format!("the fleet {name} is working"))
                .with_hint(format!("stop it first: flotilla fleet stop {name}")),
        );
    }
    let spec = record.spec.clone();
    let mut lanes = Vec::new();
    for (role, member) in spec.members() {
        if let Some(host) = &member.host {
            match super::remote::remove(&state.ctx, &spec, &role, host).await {
                Ok(true) => lanes.push(format!("{host}/{}", spec.lane_of(&role))),
                Ok(false) => {}
                Err(e) => tracing::warn!(fleet = %name, %role, %host, error = %e.message,
                    "a remote member's lane stays on its host"),
            }
            continue;
        }
        if members::lane_of(&state.ctx, &spec, &role).await.is_none() {
            continue;
        }
        let lane = PeerName::new(&spec.lane_of(&role)).map_err(ControlError::from)?;
        let sup = state
            .ctx
            .children
            .lanes()
            .ok_or_else(|| ControlError::unavailable("the lane supervisor"))?;
        let args = LaneRemoveArgs {
            name: lane.clone(),
            force: true,
        };
        crate::lanes::call(&sup, |r| LaneSupervisorMsg::Remove(args, r))
            .await
            .map_err(|e| {
                let hint = format!("its turn is still ending; try again: flotilla fleet rm {name}");
                ControlError::new(e.code, format!("{}: {}", spec.lane_of(&role), e.message))
                    .with_hint(hint)
            })?;
        lanes.push(lane.to_string());
    }
    state
        .ctx
        .commit
        .remove_fleet(name.as_str())
        .await
        .map_err(crate::registry::store_error)?;
    state.fleets.remove(name);
    Ok(FleetRemoveReply {
        schema: "flotilla.fleet-remove.v1".into(),
        name: name.clone(),
        lanes,
    })
}

async fn save(
    state: &mut FleetsState,
    myself: &FleetsRef,
    record: FleetRecord,
    actions: Vec<flotilla_actors::fleet::Action>,
) -> Result<FleetView, ControlError> {
    state
        .ctx
        .commit
        .put_fleet(&record)
        .await
        .map_err(crate::registry::store_error)?;
    perform(&state.ctx, myself, &record, actions);
    let name = record.spec.name.clone();
    state.fleets.insert(name.clone(), record);
    let record = &state.fleets[&name];
    Ok(view::of(&state.ctx, record, &state.fleets))
}

fn stopped(name: &PeerName) -> ControlError {
    ControlError::new(ErrorCode::Conflict, format!("the fleet {name} was stopped"))
        .with_hint(format!("start a new fleet: flotilla fleet start NAME ... (`flotilla fleet status {name}` shows the stopped one)"))
}
