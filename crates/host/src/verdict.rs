//! The hub's verdict on a send, for the sender: a message for peers of
//! other hosts is answered once the hub has it on disk (or refused it), so
//! a full queue at the hub is an error the sender sees at once. While the
//! hub link is down the message waits here and the answer says so.
//!
//! Reads only (the outbox and the link's state); the hub link writes the
//! verdict. Must not retry or resend anything.

use std::time::Duration;

use flotilla_actors::protocol::{ControlError, ErrorCode, HubLinkState, SendReply};
use flotilla_actors::store::DeliveryState;
use serde_json::json;

use crate::context::HostContext;

/// How long a send waits for the hub's verdict before answering with the
/// message still `accepted` (the outbox follows it).
const VERDICT_WAIT: Duration = Duration::from_secs(5);

fn linked(ctx: &HostContext) -> bool {
    ctx.hub_link.read().ok().is_some_and(|t| {
        t.as_ref().is_some_and(|t| {
            t.status(flotilla_actors::model::Timestamp::now()).state == HubLinkState::Connected
        })
    })
}

/// Waits (bounded) for the hub's verdict on `reply`'s remote recipients;
/// fills `reply.remote`, or fails when the hub refused them.
pub(crate) async fn await_hub(
    ctx: &HostContext,
    mut reply: SendReply,
    sender: &flotilla_actors::names::PeerName,
) -> Result<SendReply, ControlError> {
    let mut epoch = ctx.mail_epoch.clone();
    let deadline = tokio::time::Instant::now() + VERDICT_WAIT;
    let entry = loop {
        let entry = ctx
            .store
            .outbox_entry(&reply.id)
            .map_err(crate::registry::store_error)?;
        let waiting = entry.as_ref().is_some_and(|e| {
            e.recipients
                .iter()
                .any(|r| r.state == DeliveryState::Accepted)
        });
        if !waiting || !linked(ctx) {
            break entry;
        }
        match tokio::time::timeout_at(deadline, epoch.changed()).await {
            Ok(Ok(())) => {}
            _ => break entry,
        }
    };
    reply.remote = entry
        .map(|e| {
            e.recipients
                .into_iter()
                .filter(|r| !ctx.is_local(&r.peer))
                .collect()
        })
        .unwrap_or_default();
    let refused: Vec<_> = reply
        .remote
        .iter()
        .filter(|r| r.state == DeliveryState::Dropped)
        .collect();
    if let Some(first) = refused.first() {
        let reason = first.reason.clone().unwrap_or_default();
        let ids: Vec<String> = refused.iter().map(|r| r.peer.to_string()).collect();
        return Err(ControlError::new(
            ErrorCode::TargetsRefused,
            format!(
                "message {} was not delivered to {}: {reason}",
                reply.id,
                ids.join(", ")
            ),
        )
        .with_hint(format!(
            "recipients on this host (if any) got it; `flotilla outbox --as {sender}` shows each recipient"
        ))
        .with_details(json!({ "id": reply.id, "remote": reply.remote })));
    }
    Ok(reply)
}
