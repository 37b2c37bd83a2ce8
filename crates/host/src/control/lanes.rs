//! Dispatch of the lane ops: to the lane supervisor (create, list) or to the
//! lane's own actor (every other verb), waiting on the store's epoch for
//! results and events.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneEventsArgs, LaneEventsReply, LaneListReply, LaneView, LaneWaitArgs,
};
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::lanes::{Collected, LaneMsg, LaneRef, LaneSupervisorMsg, LaneSupervisorRef, listed};

/// Longest wait of `lane.wait` and `lane.events`.
const MAX_WAIT: Duration = Duration::from_secs(7 * 24 * 3600);

/// The lane supervisor, if it runs.
pub(super) fn supervisor(ctx: &HostContext) -> Result<LaneSupervisorRef, ControlError> {
    ctx.children
        .lanes()
        .ok_or_else(|| ControlError::unavailable("the lane supervisor"))
}

pub(crate) async fn lane(ctx: &HostContext, name: &PeerName) -> Result<LaneRef, ControlError> {
    let sup = supervisor(ctx)?;
    match sup
        .call(|r| LaneSupervisorMsg::Get(name.clone(), r), None)
        .await
    {
        Ok(CallResult::Success(Some(l))) => Ok(l),
        Ok(CallResult::Success(None)) => Err(ControlError::new(
            ErrorCode::NotFound,
            format!("no lane named {name}"),
        )
        .with_hint("`flotilla lane list --all` lists the lanes")),
        _ => Err(ControlError::unavailable("the lane supervisor")),
    }
}

pub(crate) async fn status(lane: &LaneRef) -> Result<LaneView, ControlError> {
    match lane.call(LaneMsg::Status, None).await {
        Ok(CallResult::Success(v)) => Ok(v),
        _ => Err(ControlError::unavailable("the lane")),
    }
}

pub(super) async fn list(ctx: &HostContext, all: bool) -> Result<LaneListReply, ControlError> {
    let sup = ctx
        .children
        .lanes()
        .ok_or_else(|| ControlError::unavailable("the lane supervisor"))?;
    let lanes = match sup.call(LaneSupervisorMsg::All, None).await {
        Ok(CallResult::Success(l)) => l,
        _ => return Err(ControlError::unavailable("the lane supervisor")),
    };
    let mut views = Vec::new();
    for l in lanes {
        if let Ok(v) = status(&l).await
            && listed(v.phase, all)
        {
            views.push(v);
        }
    }
    Ok(LaneListReply {
        schema: "flotilla.lanes.v1".into(),
        lanes: views,
    })
}

fn deadline(ms: Option<u64>) -> tokio::time::Instant {
    tokio::time::Instant::now() + ms.map_or(MAX_WAIT, Duration::from_millis).min(MAX_WAIT)
}

/// A result shown to a client and not yet marked collected: it is, once
/// the client has it (the reply was written), by [`Handout::confirm`].
/// A client that dies first leaves it collectable.
#[derive(Debug)]
pub(crate) struct Handout {
    lane: LaneRef,
    turn: u32,
}

impl Handout {
    /// The client has the result: mark it collected.
    pub(crate) fn confirm(self) {
        let _ = self.lane.cast(LaneMsg::HandedOut(self.turn));
    }
}

/// `lane.wait`: the oldest result not handed out, waiting for one while a
/// turn runs; the caller confirms the handout once the client has it.
pub(super) async fn wait(
    ctx: &Arc<HostContext>,
    args: LaneWaitArgs,
) -> Result<(LaneEvent, Handout), ControlError> {
    let lane = lane(ctx, &args.name).await?;
    let until = deadline(args.timeout_ms);
    let mut epoch = ctx.mail_epoch.clone();
    loop {
        epoch.borrow_and_update();
        match lane.call(LaneMsg::Collect, None).await {
            Ok(CallResult::Success(Collected::Result(event))) => {
                let turn = event.turn;
                let event = stored_event(ctx, &args.name, *event);
                return Ok((event, Handout { lane, turn }));
            }
            Ok(CallResult::Success(Collected::Nothing)) => {
                return Err(ControlError::new(ErrorCode::NotFound, format!("lane {} has no result to collect", args.name))
                    .with_hint(format!("its last result was already collected; `flotilla lane events {}` shows every turn", args.name)));
            }
            Ok(CallResult::Success(Collected::Running)) => {}
            _ => return Err(ControlError::unavailable("the lane")),
        }
        if tokio::time::timeout_at(until, epoch.changed())
            .await
            .is_err()
        {
            return Err(ControlError::new(
                ErrorCode::TimedOut,
                format!("lane {} is still running", args.name),
            )
            .with_hint(format!(
                "wait again later: flotilla lane wait {}",
                args.name
            )));
        }
    }
}

/// The logged `turn.completed` event of the collected turn (with its real
/// sequence number), or the collected one if the log lacks it.
fn stored_event(ctx: &HostContext, name: &PeerName, collected: LaneEvent) -> LaneEvent {
    let events = ctx
        .store
        .lane_events(name.as_str(), 0, usize::MAX)
        .unwrap_or_default();
    events
        .into_iter()
        .rev()
        .find(|e| e.turn == collected.turn && matches!(e.kind, EventKind::TurnCompleted(_)))
        .unwrap_or(collected)
}

pub(super) async fn events(
    ctx: &Arc<HostContext>,
    args: LaneEventsArgs,
) -> Result<LaneEventsReply, ControlError> {
    let lane = lane(ctx, &args.name).await?;
    let limit = args.limit.unwrap_or(1000).clamp(1, 100_000) as usize;
    let until = deadline(Some(args.wait_ms));
    let mut epoch = ctx.mail_epoch.clone();
    loop {
        epoch.borrow_and_update();
        let events = ctx
            .store
            .lane_events(args.name.as_str(), args.after, limit)
            .map_err(crate::registry::store_error)?;
        let idle = status(&lane).await?.phase != flotilla_actors::lane::LanePhase::Running;
        if !events.is_empty() || idle || tokio::time::Instant::now() >= until {
            return Ok(LaneEventsReply {
                schema: flotilla_actors::lane::events::SCHEMA.into(),
                events,
                idle,
            });
        }
        if tokio::time::timeout_at(until, epoch.changed())
            .await
            .is_err()
        {
            return Ok(LaneEventsReply {
                schema: flotilla_actors::lane::events::SCHEMA.into(),
                events: vec![],
                idle,
            });
        }
    }
}

/// This host's lanes as the roster shows them (archived ones left out),
/// read from the store: no lane actor is asked, so a busy lane never
/// slows the roster.
pub(super) fn roster_lanes(
    ctx: &HostContext,
) -> Result<Vec<flotilla_actors::protocol::RosterLane>, ControlError> {
    let records = ctx
        .store
        .load_lanes()
        .map_err(crate::registry::store_error)?;
    Ok(records
        .iter()
        .filter(|r| listed(r.phase, false))
        .map(|r| flotilla_actors::protocol::RosterLane::of(&ctx.host, r))
        .collect())
}
