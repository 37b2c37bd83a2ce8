//! Doing what a fleet's run asked ([`Action`]), each in a task of its own
//! that reports back to the fleets' actor: starting and waiting for
//! members' turns ([`super::members`]), judging steps
//! ([`super::acceptance`], or [`super::remote`] for a worker on another
//! host), interrupting a turn, telling the owner, timers for walls and
//! probes, and the run record of a claimed worker's handoff. Decides
//! nothing: the run did.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::fleet::{Action, FleetRecord, Place};
use flotilla_actors::model::Timestamp;

use super::members;
use super::runner::{FleetsMsg, FleetsRef};
use crate::context::HostContext;

/// A turn the run had not seen start: the daemon may have died between
/// starting it and saving that. The member's lane then runs it, or holds
/// its result (newer than the run has seen): adopt it rather than run the
/// turn twice.
pub(super) fn adopt_or_run(
    ctx: &Arc<HostContext>,
    myself: &FleetsRef,
    record: &FleetRecord,
    role: String,
    seen: u32,
    run_it: Action,
) {
    let (ctx, me, record) = (ctx.clone(), myself.clone(), record.clone());
    tokio::spawn(async move {
        match members::adopt(&ctx, &record.spec, &role, seen).await {
            Some(turn) => {
                let name = record.spec.name.clone();
                let _ = me.cast(FleetsMsg::Started(name, role, Ok(turn)));
            }
            None => perform(&ctx, &me, &record, vec![run_it]),
        }
    });
}

pub(super) fn wait_for(
    ctx: &Arc<HostContext>,
    myself: &FleetsRef,
    record: &FleetRecord,
    role: String,
    turn: u32,
) {
    let (ctx, me, spec) = (ctx.clone(), myself.clone(), record.spec.clone());
    tokio::spawn(async move {
        let (fleet, who, tell) = (spec.name.clone(), role.clone(), me.clone());
        let context = move |pct: f64| {
            let _ = tell.cast(FleetsMsg::Context(fleet.clone(), who.clone(), turn, pct));
        };
        let mut end = members::wait(&ctx, &spec, &role, turn, &context).await;
        super::probe::mark(&spec, &role, &mut end).await;
        let _ = me.cast(FleetsMsg::Ended(spec.name.clone(), role, turn, end));
    });
}

/// Does what a run asked, each in a task of its own that reports back.
pub(super) fn perform(
    ctx: &Arc<HostContext>,
    myself: &FleetsRef,
    record: &FleetRecord,
    actions: Vec<Action>,
) {
    for action in actions {
        let (ctx, me, spec) = (ctx.clone(), myself.clone(), record.spec.clone());
        match action {
            Action::Run {
                role,
                prompt,
                fresh,
                model,
            } => {
                let member = spec
                    .members()
                    .into_iter()
                    .find(|(r, _)| *r == role)
                    .map(|(_, m)| m.clone());
                tokio::spawn(async move {
                    let started = match member {
                        Some(m) => {
                            members::begin(&ctx, &spec, &role, &m, prompt, fresh, model).await
                        }
                        None => Err(format!("the fleet has no member {role}")),
                    };
                    crate::crash_point::reached(&ctx, "fleet.turn-started");
                    let _ = me.cast(FleetsMsg::Started(spec.name.clone(), role, started));
                });
            }
            Action::Judge { step, task } => {
                let timeout = Duration::from_secs(spec.check_timeout_secs.max(1));
                let role = record.run.judging.get(&step).map(|a| a.to.clone());
                let host = role
                    .as_deref()
                    .and_then(|r| super::remote::host_of(&spec, r));
                tokio::spawn(async move {
                    let verdict = match (role, host) {
                        (Some(role), Some(host)) => {
                            super::remote_judge::judge_step(&ctx, &spec, &role, &host, &task).await
                        }
                        (role, _) => {
                            let role = role.as_deref();
                            super::acceptance::judge_in_place(&ctx, &spec, role, &task, timeout)
                                .await
                        }
                    };
                    let _ = me.cast(FleetsMsg::Judged(spec.name.clone(), step, verdict));
                });
            }
            Action::Ended(task_state) => {
                tracing::info!(fleet = %spec.name, state = ?task_state, "a fleet's task ended");
                let record = record.clone();
                tokio::spawn(async move {
                    super::notice::task_ended(&ctx, &record, task_state).await;
                });
            }
            Action::Paused(reason) => {
                tracing::info!(fleet = %spec.name, %reason, "a fleet paused");
            }
            Action::WallUntil(until) => {
                let wait = until.saturating_sub(Timestamp::now().0);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    let _ = me.cast(FleetsMsg::WallLifted(spec.name.clone()));
                });
            }
            Action::Probe(at) => super::probe::again(me, spec.name.clone(), at),
            Action::Interrupt(role) => {
                tokio::spawn(async move { members::interrupt(&ctx, &spec, &role).await });
            }
            Action::Answered(id, _) => {
                tracing::warn!(fleet = %spec.name, id, "an answer reached the wrong place");
            }
        }
    }
}

/// Writes a run record for each handoff past the first `seen` of a worker
/// on a claim.
pub(super) fn record_handoffs(ctx: &Arc<HostContext>, record: &FleetRecord, seen: usize) {
    let spec = &record.spec;
    for handoff in record.run.handoffs.iter().skip(seen) {
        let Place::Claim(id) = spec.place_of(&handoff.role) else {
            continue;
        };
        let lane = format!("{}/{}", ctx.host, spec.lane_of(&handoff.role));
        let note = handoff.note.clone();
        crate::governance::turns::record_handoff_later(ctx, &spec.dir, id, lane, note);
    }
}
