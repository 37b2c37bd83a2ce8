//! Telling a lane's owner how a turn ended: a message from the lane's peer
//! to the owner's inbox, with a one-line summary and how to collect the
//! result. Its id is fixed per lane incarnation and turn, so a retry after a
//! crash never stores it twice. Until it is stored the notice is owed (on
//! disk, see `LaneState::pay_notices`).

use flotilla_actors::lane::{LaneRecord, TurnResult};
use flotilla_actors::names::MessageId;
use flotilla_actors::protocol::SendArgs;
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::router::RouterMsg;

/// Sends the terminal status of `turn` to the lane's owner; false when it
/// should be tried again (the router is restarting or did not answer). A
/// refusal (the owner is gone) is final: true.
pub(super) async fn owner(
    ctx: &HostContext,
    record: &LaneRecord,
    turn: u32,
    result: &TurnResult,
) -> bool {
    let name = &record.spec.name;
    let Ok(id) = MessageId::new(
        &format!(
            "lane-{}-{}-t{turn}",
            record.created_at.0,
            name.as_str().replace('.', "_")
        )[..],
    ) else {
        return true;
    };
    let summary = result.summary_line(turn);
    let detail = serde_json::to_string_pretty(result).unwrap_or_default();
    let body =
        format!("{summary}\n\ncollect the result with: flotilla lane wait {name}\n\n{detail}");
    let args = SendArgs {
        as_peer: name.clone(),
        to: vec![record.spec.owner.to_string()],
        summary: Some(flotilla_actors::lane::events::clip(&summary, 250)),
        body,
        id: Some(id),
    };
    let Some(router) = ctx.children.router() else {
        tracing::warn!(lane = %name, "the router is restarting; the owner will be told later");
        return false;
    };
    match router
        .call(|r| RouterMsg::Send(args.clone(), r), None)
        .await
    {
        Ok(CallResult::Success(Ok(_))) => true,
        Ok(CallResult::Success(Err(e))) => {
            tracing::warn!(lane = %name, error = %e, "could not tell the owner");
            true
        }
        _ => {
            tracing::warn!(lane = %name, "could not tell the owner; will try again");
            false
        }
    }
}
