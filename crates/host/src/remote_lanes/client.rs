//! The asking side: a `remote.call` request becomes a `LaneCall` on the
//! hub link, and the answer the op's reply (or its error).

use std::sync::Arc;

use flotilla_actors::federation::LaneCall;
use flotilla_actors::names::PeerId;
use flotilla_actors::protocol::{ControlError, ErrorCode, REMOTE_LANE_OPS, RemoteCallArgs};
use serde_json::Value;
use tokio::sync::oneshot;

use super::OutgoingCall;
use crate::context::HostContext;

/// Relays a lane op to another host and waits for its answer (as long as
/// the op takes: `lane.wait` waits for the turn).
pub async fn call(ctx: &Arc<HostContext>, args: RemoteCallArgs) -> Result<Value, ControlError> {
    if !REMOTE_LANE_OPS.contains(&args.op.as_str()) {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!("{} cannot be called on another host", args.op),
        )
        .with_hint(format!("remote ops: {}", REMOTE_LANE_OPS.join(", "))));
    }
    if args.host == ctx.host {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!("{} is this host", args.host),
        )
        .with_hint("drop --host to drive a lane of this host"));
    }
    let requester: PeerId = crate::lanes::ensure_owner(ctx, args.as_peer.as_ref()).await?;
    let sender = ctx
        .hub_calls
        .lock()
        .ok()
        .and_then(|s| s.clone())
        .ok_or_else(|| {
            ControlError::new(
                ErrorCode::Unavailable,
                format!(
                    "this host is not linked to the hub, so {} cannot be reached",
                    args.host
                ),
            )
            .with_hint("`flotilla host status` shows the hub link; remote lanes need it up")
        })?;
    let (reply, answer) = oneshot::channel();
    let call = LaneCall {
        call: 0,
        host: args.host.clone(),
        requester,
        groups: Vec::new(),
        op: args.op.clone(),
        args: args.args.to_string(),
    };
    let lost = || {
        ControlError::new(
            ErrorCode::Unavailable,
            format!("the hub link dropped before {} answered", args.host),
        )
        .with_hint(format!(
            "a lane started there keeps running; once the link is back, ask again (for example `flotilla lane wait NAME --host {}`)",
            args.host
        ))
    };
    sender
        .send(OutgoingCall { call, reply })
        .await
        .map_err(|_| lost())?;
    match answer.await.map_err(|_| lost())? {
        Ok(json) => serde_json::from_str(&json).map_err(|e| {
            ControlError::internal(format!("{} answered unreadable JSON: {e}", args.host))
        }),
        Err(json) => Err(serde_json::from_str::<ControlError>(&json)
            .unwrap_or_else(|_| ControlError::new(ErrorCode::Internal, json))),
    }
}
