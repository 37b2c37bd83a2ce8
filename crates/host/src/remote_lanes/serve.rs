//! The answering side: a lane op relayed by the hub from another host,
//! checked against this host's policy (who may ask, and what a lane may
//! ask for: [`super::limits`]), then run like a local request. A
//! started lane's owner is the requester (a peer of the asking host), so
//! its results go to that peer's inbox through the hub.

use std::sync::Arc;

use flotilla_actors::federation::{LaneCall, RosterPeer};
use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneListReply, LaneStatusArgs, LaneView, Request, reply_value,
};
use serde_json::Value;

use super::policy::RemoteLanePolicy;
use crate::context::HostContext;
use crate::registry::RegistryMsg;

/// Answers a relayed call: the op's result as JSON text, or a control
/// error as JSON text.
pub async fn serve(ctx: &Arc<HostContext>, call: LaneCall) -> Result<String, String> {
    match answer(ctx, call).await {
        Ok(value) => Ok(value.to_string()),
        Err(e) => Err(serde_json::to_string(&e).unwrap_or_else(|_| e.to_string())),
    }
}

fn forbidden(ctx: &HostContext, why: String) -> ControlError {
    ControlError::new(ErrorCode::Forbidden, format!("{} refused: {why}", ctx.host))
}

async fn answer(ctx: &Arc<HostContext>, call: LaneCall) -> Result<Value, ControlError> {
    let policy = RemoteLanePolicy::from_config(&ctx.config, &super::default_root(&ctx.home))
        .map_err(|e| forbidden(ctx, format!("its remote lane policy is invalid ({e})")))?;
    let args: Value = serde_json::from_str(&call.args)
        .map_err(|e| ControlError::new(ErrorCode::BadRequest, format!("bad arguments: {e}")))?;
    let mut request = Request::from_parts(&call.op, args)?;
    let list = matches!(request, Request::LaneList(_));
    match &mut request {
        Request::LaneStart(a) => {
            policy
                .check_start(a.cli, &call.groups)
                .map_err(|why| forbidden(ctx, why))?;
            let limits = policy.limits();
            limits.check(a).map_err(|r| forbidden(ctx, r.to_string()))?;
            a.cwd = Some(match &a.cwd {
                Some(dir) => limits
                    .resolve_cwd(dir, |p| std::fs::canonicalize(p))
                    .map_err(|r| forbidden(ctx, r.to_string()))?
                    .display()
                    .to_string(),
                None => match &ctx.config.remote_lane_dir {
                    Some(dir) => limits
                        .resolve_cwd(&dir.display().to_string(), |p| std::fs::canonicalize(p))
                        .map_err(|r| forbidden(ctx, format!("remote_lane_dir: {r}")))?
                        .display()
                        .to_string(),
                    None => workdir(ctx, &a.name)?,
                },
            });
            a.as_peer = None;
            a.owner = Some(call.requester.clone());
            remember_requester(ctx, &call);
        }
        Request::LaneResume(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneWait(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneStatus(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneInterrupt(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneArchive(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneEvents(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneRemove(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneFiles(a) => drive(ctx, &policy, &call, &a.name).await?,
        Request::LaneList(_) | Request::LaneDoctor(_) => {
            policy.check_open().map_err(|why| forbidden(ctx, why))?
        }
        _ => {
            return Err(forbidden(
                ctx,
                format!("{} is not a remote lane op", call.op),
            ));
        }
    }
    let value = crate::control::dispatch(ctx, request).await?;
    if list {
        // Only the lanes the asking host placed.
        let mut reply: LaneListReply =
            serde_json::from_value(value).map_err(|e| ControlError::internal(e.to_string()))?;
        reply.lanes.retain(|l| l.owner.host == call.host);
        return Ok(reply_value(&reply));
    }
    Ok(value)
}

/// May the asking host drive lane `name`? Only if it placed it (the
/// lane's owner is one of its peers). The owner comes from the lane itself.
async fn drive(
    ctx: &Arc<HostContext>,
    policy: &RemoteLanePolicy,
    call: &LaneCall,
    name: &PeerName,
) -> Result<(), ControlError> {
    let status = Request::LaneStatus(LaneStatusArgs { name: name.clone() });
    let view: LaneView = serde_json::from_value(crate::control::dispatch(ctx, status).await?)
        .map_err(|e| ControlError::internal(e.to_string()))?;
    policy
        .check_drive(&call.host, &view.owner)
        .map_err(|why| forbidden(ctx, why))
}

/// A fresh directory for a remote lane that named none: under this host's
/// state, owner-only.
fn workdir(ctx: &HostContext, name: &PeerName) -> Result<String, ControlError> {
    let dir = super::default_root(&ctx.home).join(name.as_str());
    crate::home::create_private(&dir).map_err(|e| ControlError::internal(e.to_string()))?;
    Ok(dir.display().to_string())
}

/// Knows the requester at once (with the groups the hub vouched for), so
/// the lane's results can be addressed to it before the hub's next roster
/// change arrives.
fn remember_requester(ctx: &HostContext, call: &LaneCall) {
    let record = PeerRecord {
        id: call.requester.clone(),
        kind: PeerKind::Mailbox,
        product: None,
        groups: call
            .groups
            .iter()
            .filter(|g| !g.is_session())
            .cloned()
            .collect(),
        joined_at: Timestamp::now(),
    };
    if let Ok(mut remote) = ctx.remote.write() {
        remote.entry(call.requester.clone()).or_insert(RosterPeer {
            record,
            online: true,
        });
    }
    if let Some(registry) = ctx.children.registry() {
        let _ = registry.cast(RegistryMsg::Republish);
    }
}
