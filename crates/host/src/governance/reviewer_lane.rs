//! The reviewer's lane: start it, wait for its turn, read its verdict, and
//! bounce a malformed one once with what was wrong.
//!
//! Owns driving that one lane. Must not record anything (the review does).

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::governance::{VERDICT_SHAPE, Verdict, parse_verdict};
use flotilla_actors::lane::TurnStatus;
use flotilla_actors::lane::events::EventKind;
use flotilla_actors::protocol::{ControlError, ErrorCode, LaneStartArgs};
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::lanes::{Collected, LaneMsg, LaneRef, LaneSupervisorMsg};

/// How often a wait looks again without a store signal.
const LOOK_AGAIN: Duration = Duration::from_secs(2);

/// What the reviewer said: a verdict, or why none well-formed came.
pub(super) type Said = Result<Verdict, String>;

/// Runs the reviewer: its lane's id, and what it said.
pub(super) async fn judge(
    ctx: &Arc<HostContext>,
    start: LaneStartArgs,
) -> Result<(String, Said), ControlError> {
    let name = start.name.clone();
    let sup =
        (ctx.children.lanes()).ok_or_else(|| ControlError::unavailable("the lane supervisor"))?;
    let started =
        crate::lanes::call(&sup, |r| LaneSupervisorMsg::Start(Box::new(start), r)).await?;
    let said = verdict(ctx, &name, started.turn).await?;
    Ok((started.lane.to_string(), said))
}

async fn verdict(
    ctx: &Arc<HostContext>,
    name: &flotilla_actors::names::PeerName,
    turn: u32,
) -> Result<Said, ControlError> {
    let text = turn_text(ctx, name, turn).await?;
    let first = match parse_verdict(&text) {
        Ok(v) => return Ok(Ok(v)),
        Err(e) => e.to_string(),
    };
    let lane = crate::control::lane_ref(ctx, name).await?;
    let prompt = format!(
        "Your answer was not a well-formed verdict: {first}\n\nReturn only the verdict as one JSON object:\n{VERDICT_SHAPE}"
    );
    let turn = match lane
        .call(
            |reply| LaneMsg::BeginTurn {
                prompt,
                resume: true,
                reply,
            },
            None,
        )
        .await
    {
        Ok(CallResult::Success(r)) => r?,
        _ => return Err(ControlError::unavailable("the reviewer's lane")),
    };
    let text = turn_text(ctx, name, turn).await?;
    Ok(parse_verdict(&text).map_err(|e| format!("bounced twice; last: {e}")))
}

/// The final text of `turn`, once it ended well; an error naming the lane
/// when it did not.
async fn turn_text(
    ctx: &Arc<HostContext>,
    name: &flotilla_actors::names::PeerName,
    turn: u32,
) -> Result<String, ControlError> {
    let lane = crate::control::lane_ref(ctx, name).await?;
    let event = collect(ctx, &lane, turn).await?;
    let EventKind::TurnCompleted(result) = event else {
        return Err(ControlError::internal(
            "the reviewer's lane reported no turn result",
        ));
    };
    if result.status != TurnStatus::Completed {
        let why = result.error.or(result.result).unwrap_or_default();
        return Err(ControlError::new(
            ErrorCode::Unavailable,
            format!(
                "the reviewer's turn did not complete ({:?}): {why}",
                result.status
            ),
        )
        .with_hint(format!("see its events: flotilla lane events {name}")));
    }
    Ok(result.result.unwrap_or_default())
}

/// Waits for turn `turn`'s result and hands it out.
async fn collect(
    ctx: &Arc<HostContext>,
    lane: &LaneRef,
    turn: u32,
) -> Result<EventKind, ControlError> {
    let mut epoch = ctx.mail_epoch.clone();
    loop {
        epoch.borrow_and_update();
        match lane.call(LaneMsg::Collect, None).await {
            Ok(CallResult::Success(Collected::Result(event))) => {
                let _ = lane.cast(LaneMsg::HandedOut(event.turn));
                if event.turn >= turn {
                    return Ok(event.kind);
                }
                continue;
            }
            Ok(CallResult::Success(Collected::Nothing)) => {
                return Err(ControlError::internal("the reviewer's turn left no result"));
            }
            Ok(CallResult::Success(Collected::Running)) => {}
            _ => return Err(ControlError::unavailable("the reviewer's lane")),
        }
        let _ = tokio::time::timeout(LOOK_AGAIN, epoch.changed()).await;
    }
}
