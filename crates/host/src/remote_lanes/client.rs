//! The asking side: a `remote.call` request becomes a `LaneCall` on the
//! hub link, and the answer the op's reply (or its error).

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::federation::LaneCall;
use flotilla_actors::names::PeerId;
use flotilla_actors::protocol::{ControlError, ErrorCode, REMOTE_LANE_OPS, RemoteCallArgs};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::{CallEnd, OutgoingCall};
use crate::context::HostContext;

/// Slack on top of an op's own wait, for the relay both ways.
const RELAY_SLACK: Duration = Duration::from_secs(30);

/// How often a call no hub took is sent (a hub restarting, twice at most).
const SENDS: usize = 3;

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
    let call = LaneCall {
        call: 0,
        host: args.host.clone(),
        requester,
        groups: Vec::new(),
        op: args.op.clone(),
        args: args.args.to_string(),
    };
    match relay(ctx, &args, call).await? {
        Ok(json) => serde_json::from_str(&json).map_err(|e| {
            ControlError::internal(format!("{} answered unreadable JSON: {e}", args.host))
        }),
        Err(json) => Err(serde_json::from_str::<ControlError>(&json)
            .unwrap_or_else(|_| ControlError::new(ErrorCode::Internal, json))),
    }
}

/// Sends `call` on the hub link and waits for its answer. A call no hub
/// took (the hub restarted under it) is sent again once the link is back,
/// [`SENDS`] times at most, within the op's own deadline.
async fn relay(
    ctx: &HostContext,
    args: &RemoteCallArgs,
    call: LaneCall,
) -> Result<Result<String, String>, ControlError> {
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
    let patience = patience(args);
    let deadline = Instant::now() + patience.unwrap_or(RELAY_SLACK);
    for _ in 0..SENDS {
        // An open wait has no deadline of its own: each wait for the link
        // gets the slack.
        let link_by = match patience {
            Some(_) => deadline,
            None => Instant::now() + RELAY_SLACK,
        };
        let sender = linked(ctx, args, link_by).await?;
        let (reply, answer) = oneshot::channel();
        let sent = OutgoingCall {
            call: call.clone(),
            reply,
        };
        // A link that ended before taking the call: it was never sent.
        if sender.send(sent).await.is_err() {
            continue;
        }
        let end = match patience {
            Some(limit) => tokio::time::timeout_at(deadline, answer).await.map_err(|_| {
                ControlError::new(
                    ErrorCode::Unavailable,
                    format!("{} did not answer within {limit:?}", args.host),
                )
                .with_hint("its link to the hub may be dead; `flotilla hub roster` at the hub shows it, retry once it is back")
            })?,
            None => answer.await,
        };
        match end.map_err(|_| lost())? {
            CallEnd::Answered(result) => return Ok(result),
            CallEnd::Undelivered => tracing::info!(
                host = %args.host,
                op = %args.op,
                "the hub restarted before taking a remote lane call; it is sent again once linked"
            ),
        }
    }
    Err(lost())
}

/// The hub link's call queue. While the link is down (a hub restarting,
/// a network coming back) the call waits for it until `deadline`; with no
/// hub configured it fails at once.
async fn linked(
    ctx: &HostContext,
    args: &RemoteCallArgs,
    deadline: Instant,
) -> Result<mpsc::Sender<OutgoingCall>, ControlError> {
    let not_linked = |waited: bool| {
        let why = if waited {
            " (it did not come back in time)"
        } else {
            ""
        };
        ControlError::new(
            ErrorCode::Unavailable,
            format!(
                "this host is not linked to the hub{why}, so {} cannot be reached",
                args.host
            ),
        )
        .with_hint("`flotilla host status` shows the hub link; remote lanes need it up")
    };
    if !matches!(ctx.config.hub_target(), Ok(Some(_))) {
        return Err(not_linked(false));
    }
    let mut link = ctx.hub_calls.subscribe();
    if link.borrow().is_none() {
        tracing::info!(host = %args.host, op = %args.op, "a remote lane call waits for the hub link");
    }
    let up = tokio::time::timeout_at(deadline, link.wait_for(Option::is_some)).await;
    match up {
        Ok(Ok(sender)) => sender.clone().ok_or_else(|| not_linked(true)),
        _ => Err(not_linked(true)),
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
