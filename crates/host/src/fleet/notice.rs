//! Telling a fleet's owner that its task ended (completed, blocked, out of
//! budget): a message from the supervisor's lane to the owner's inbox,
//! with the daemon's last decision. The id is fixed per fleet and task (a
//! task ends once), so a retry never stores it twice; a fleet's later
//! tasks each get their own.

use flotilla_actors::fleet::{FleetRecord, TaskState};
use flotilla_actors::names::{MessageId, PeerId, PeerName};
use flotilla_actors::protocol::SendArgs;
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::lanes::OPERATOR;
use crate::router::RouterMsg;

/// Sends the end of the fleet's task to its owner; a failure is logged
/// (`fleet status` and `fleet history` keep the same facts).
pub(super) async fn task_ended(ctx: &HostContext, record: &FleetRecord, state: TaskState) {
    let spec = &record.spec;
    let owner = spec
        .as_peer
        .clone()
        .or_else(|| PeerName::new(OPERATOR).ok());
    let (Some(owner), Ok(from)) = (owner, PeerName::new(&spec.lane_of("supervisor"))) else {
        return;
    };
    let n = record.run.tasks;
    let Ok(id) = MessageId::new(&format!(
        "fleet-{}-{}-task-{n}-end",
        spec.name, record.started_ms
    )) else {
        return;
    };
    let state = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let why = record.run.log.last().map_or("", |d| d.text.as_str());
    let summary = format!("fleet {}: the task is {state}", spec.name);
    let body = format!(
        "{summary}: {why}\n\nsee: flotilla fleet status {0}\n     flotilla fleet history {0}",
        spec.name
    );
    let args = SendArgs {
        as_peer: from,
        to: vec![PeerId::new(ctx.host.clone(), owner).to_string()],
        summary: Some(flotilla_actors::lane::events::clip(&summary, 250)),
        body,
        id: Some(id),
    };
    let Some(router) = ctx.children.router() else {
        tracing::warn!(fleet = %spec.name, "the router is restarting; the owner was not told");
        return;
    };
    match router.call(|r| RouterMsg::Send(args, r), None).await {
        Ok(CallResult::Success(Ok(_))) => {}
        Ok(CallResult::Success(Err(e))) => {
            tracing::warn!(fleet = %spec.name, error = %e, "could not tell the fleet's owner");
        }
        _ => tracing::warn!(fleet = %spec.name, "could not tell the fleet's owner"),
    }
}
