//! What `fleet status`, `fleet list` and `fleet history` show: a fleet's
//! record joined with its members' lane records and inbox depths, read
//! from the store (no lane actor is asked, so a busy member never slows a
//! status).

use std::collections::BTreeMap;

use flotilla_actors::fleet::{FleetRecord, MemberSpec, TaskState};
use flotilla_actors::lane::{LanePhase, LaneRecord};
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::{PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, FleetChildView, FleetHistoryReply, FleetListReply, FleetMemberView,
    FleetState, FleetStepView, FleetView,
};

use crate::context::HostContext;

/// Decisions a status shows.
const RECENT: usize = 20;

/// The error for a fleet that does not exist.
pub fn no_such_fleet(name: &PeerName) -> ControlError {
    ControlError::new(ErrorCode::NotFound, format!("no fleet named {name}"))
        .with_hint("`flotilla fleet list` shows this host's fleets".to_owned())
}

/// Every fleet's view.
pub fn list(ctx: &HostContext, all: &BTreeMap<PeerName, FleetRecord>) -> FleetListReply {
    let lanes = lanes(ctx);
    let depths = ctx.store.inbox_depths().unwrap_or_default();
    FleetListReply {
        schema: "flotilla.fleets.v1".into(),
        fleets: all
            .values()
            .map(|r| build(ctx, r, &lanes, &depths, all))
            .collect(),
    }
}

/// One fleet's view; `all` holds every fleet, for its children.
pub fn of(
    ctx: &HostContext,
    record: &FleetRecord,
    all: &BTreeMap<PeerName, FleetRecord>,
) -> FleetView {
    let depths = ctx.store.inbox_depths().unwrap_or_default();
    build(ctx, record, &lanes(ctx), &depths, all)
}

/// Seconds since the last event of `lane`, while its turn runs.
fn quiet_secs(ctx: &HostContext, lane: Option<&LaneRecord>) -> Option<u64> {
    let lane = lane.filter(|l| l.phase == LanePhase::Running)?;
    let last = ctx.store.last_lane_event(lane.spec.name.as_str()).ok()??;
    let since = last
        .at
        .max(lane.running.as_ref().map_or(last.at, |t| t.started_at));
    Some(since.until(Timestamp::now()).as_secs())
}

/// The fleets `record`'s members started.
fn children(record: &FleetRecord, all: &BTreeMap<PeerName, FleetRecord>) -> Vec<FleetChildView> {
    all.values()
        .filter_map(|r| {
            let p = r.parent.as_ref().filter(|p| p.fleet == record.spec.name)?;
            Some(FleetChildView {
                name: r.spec.name.clone(),
                role: p.role.clone(),
                state: state_of(r),
            })
        })
        .collect()
}

/// A fleet's decisions.
pub fn history(record: &FleetRecord) -> FleetHistoryReply {
    FleetHistoryReply {
        schema: "flotilla.fleet-history.v1".into(),
        name: record.spec.name.clone(),
        decisions: record.run.log.clone(),
        handoffs: record.run.handoffs.clone(),
    }
}

fn lanes(ctx: &HostContext) -> BTreeMap<String, LaneRecord> {
    ctx.store
        .load_lanes()
        .unwrap_or_default()
        .into_iter()
        .map(|l| (l.spec.name.to_string(), l))
        .collect()
}

fn state_of(record: &FleetRecord) -> FleetState {
    let run = &record.run;
    match (record.stopped, &run.task, run.ledger.state) {
        (true, _, _) => FleetState::Stopped,
        (false, None, _) => FleetState::Idle,
        (false, Some(_), TaskState::Completed) => FleetState::Completed,
        (false, Some(_), TaskState::Blocked) => FleetState::Blocked,
        _ if run.paused.is_some() => FleetState::Paused,
        _ => FleetState::Running,
    }
}

fn build(
    ctx: &HostContext,
    record: &FleetRecord,
    lanes: &BTreeMap<String, LaneRecord>,
    depths: &BTreeMap<String, u64>,
    all: &BTreeMap<PeerName, FleetRecord>,
) -> FleetView {
    let spec = &record.spec;
    let run = &record.run;
    let members = spec
        .members()
        .into_iter()
        .map(|(role, m)| {
            let lane_name = spec.lane_of(&role);
            let lane = lanes.get(&lane_name);
            let last = lane.and_then(|l| l.last_result.as_ref());
            let id = PeerName::new(&lane_name)
                .map(|n| PeerId::new(ctx.host.clone(), n).to_string())
                .unwrap_or_default();
            let step = if role == flotilla_actors::fleet::SUPERVISOR {
                run.supervisor.as_ref().map(|_| "plan".to_owned())
            } else {
                run.working.get(&role).map(|a| a.step.clone())
            };
            if m.host.is_some() {
                return remote_member(record, role, lane_name, m, step);
            }
            FleetMemberView {
                lane: lane_name,
                host: None,
                cli: m.cli,
                model: m.model.clone(),
                phase: lane.map(|l| l.phase),
                turns: lane.map_or(0, |l| l.turns),
                step,
                context_used_pct: last.and_then(|r| r.context_used_pct),
                usage: last.map(|r| r.usage),
                cost_usd: last.and_then(|r| r.cost_usd),
                inbox_depth: depths.get(&id).copied().unwrap_or(0),
                quiet_secs: quiet_secs(ctx, lane),
                claim: m.claim.clone(),
                role,
            }
        })
        .collect();
    let steps = run
        .ledger
        .steps
        .iter()
        .map(|(step, s)| FleetStepView {
            step: step.clone(),
            bounces: s.bounces,
            last_reasons: s.last_reasons.clone(),
            evidence: s.accepted.clone(),
        })
        .collect();
    FleetView {
        schema: "flotilla.fleet.v1".into(),
        name: spec.name.clone(),
        state: state_of(record),
        paused_reason: run.paused.clone(),
        lifecycle: spec.lifecycle,
        dir: spec.dir.clone(),
        group: spec.group(),
        started_at: Timestamp(record.started_ms),
        task: run.task.clone(),
        task_state: run.task.as_ref().map(|_| run.ledger.state),
        steps,
        members,
        spent: run.spent.clone(),
        budget: spec.budget.clone(),
        max_busy: spec.max_busy,
        recent: run.log.iter().rev().take(RECENT).rev().cloned().collect(),
        parent: record.parent.clone(),
        children: children(record, all),
    }
}

/// A member on another host, as the fleet last heard of it.
fn remote_member(
    record: &FleetRecord,
    role: String,
    lane: String,
    m: &MemberSpec,
    step: Option<String>,
) -> FleetMemberView {
    let seen = record.remote_seen.get(&role);
    let busy = record.run.working.contains_key(&role) || record.run.serving.contains_key(&role);
    let phase = match (busy, seen) {
        (true, _) => Some(LanePhase::Running),
        (false, Some(_)) => Some(LanePhase::Idle),
        (false, None) => None,
    };
    FleetMemberView {
        lane,
        host: m.host.clone(),
        cli: m.cli,
        model: m.model.clone(),
        phase,
        turns: seen.map_or(0, |s| s.turn),
        step,
        context_used_pct: seen.and_then(|s| s.context_used_pct),
        usage: None,
        cost_usd: seen.and_then(|s| s.cost_usd),
        inbox_depth: 0,
        quiet_secs: None,
        claim: None,
        role,
    }
}
