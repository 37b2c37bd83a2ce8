//! The asking side: a `remote.call` request becomes a `LaneCall` on the
//! hub link, and the answer the op's reply (or its error).

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::federation::LaneCall;
use flotilla_actors::names::PeerId;
use flotilla_actors::protocol::{ControlError, ErrorCode, REMOTE_LANE_OPS, RemoteCallArgs};
use serde_json::Value;
use tokio::sync::oneshot;

use super::OutgoingCall;
use crate::context::HostContext;

/// Slack on top of an op's own wait, for the relay both ways.
const RELAY_SLACK: Duration = Duration::from_secs(30);

/// How long to wait for the answer: the op's own wait plus slack, or no
/// limit for a `lane.wait` without a timeout (the turn may take hours; a
/// dropped link still ends it).
fn patience(args: &RemoteCallArgs) -> Option<Duration> {
    let millis = |key: &str| args.args.get(key).and_then(serde_json::Value::as_u64);
    match args.op.as_str() {
        "lane.wait" => millis("timeout_ms").map(|ms| Duration::from_millis(ms) + RELAY_SLACK),
        "lane.events" => Some(Duration::from_millis(millis("wait_ms").unwrap_or(0)) + RELAY_SLACK),
        _ => Some(RELAY_SLACK),
    }
}

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
            "a lane started there keeps running; once the link is back, ask again (`flotilla lane wait {} --host {}`)",
            lane_name(&args.args).unwrap_or("NAME"),
            args.host
        ))
    };
    sender
        .send(OutgoingCall { call, reply })
        .await
        .map_err(|_| lost())?;
    let answered = match patience(&args) {
        Some(limit) => tokio::time::timeout(limit, answer).await.map_err(|_| {
            ControlError::new(
                ErrorCode::Unavailable,
                format!("{} did not answer within {limit:?}", args.host),
            )
            .with_hint("its link to the hub may be dead; `flotilla hub roster` at the hub shows it, retry once it is back")
        })?,
        None => answer.await,
    };
    match answered.map_err(|_| lost())? {
        Ok(json) => serde_json::from_str(&json).map_err(|e| {
            ControlError::internal(format!("{} answered unreadable JSON: {e}", args.host))
        }),
        Err(json) => Err(serde_json::from_str::<ControlError>(&json)
            .unwrap_or_else(|_| ControlError::new(ErrorCode::Internal, json))),
    }
}

/// The lane a relayed op names (its `name` argument), if any.
fn lane_name(args: &serde_json::Value) -> Option<&str> {
    args.get("name").and_then(|n| n.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::names::HostName;
    use serde_json::json;

    fn args(op: &str, args: Value) -> RemoteCallArgs {
        RemoteCallArgs {
            host: HostName::new("work").expect("host"),
            as_peer: None,
            op: op.into(),
            args,
        }
    }

    #[test]
    fn a_call_waits_for_its_own_wait_plus_slack_and_an_open_wait_forever() {
        assert_eq!(patience(&args("lane.status", json!({}))), Some(RELAY_SLACK));
        let wait = args("lane.wait", json!({"name": "x", "timeout_ms": 1000}));
        assert_eq!(patience(&wait), Some(RELAY_SLACK + Duration::from_secs(1)));
        assert_eq!(patience(&args("lane.wait", json!({"name": "x"}))), None);
        let events = args("lane.events", json!({"wait_ms": 30000}));
        assert_eq!(patience(&events), Some(RELAY_SLACK * 2));
    }
}
