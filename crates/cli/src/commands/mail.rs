//! `send`, `broadcast`, `reply` and `inbox`.
//!
//! Sends fix their message id before the first try and retry transient
//! failures (a daemon restarting) with the same id, so a message is stored
//! once however often it is retried. `inbox` acknowledges only after the
//! messages were written out, so a reader that dies in between gets them
//! again.

use std::time::Duration;

use anyhow::Result;
use flotilla_actors::names::{GroupName, MessageId, PeerName};
use flotilla_actors::protocol::{self, InboxAckArgs, InboxFetchArgs, Op, SendReply};
use flotilla_actors::store::DeliveryState;
use flotilla_host::client::{ClientError, ControlClient};

use super::{Env, message_text};
use crate::args::{Body, BroadcastArgs, InboxArgs, ReplyArgs, SendArgs};
use crate::exit::{CliError, OK};
use crate::output::{self, StdoutError, out, outln};

/// How long a send keeps retrying while the daemon is unreachable.
const RETRY_FOR: Duration = Duration::from_secs(15);

/// Calls `op`, reconnecting and retrying transient failures for a while.
pub(crate) async fn call_retrying<O: Op>(env: &Env, op: &O) -> Result<O::Reply> {
    call_patiently(env, op).await.map_err(|(e, _)| e.into())
}

/// [`call_retrying`] for a send of message `id`: when a try handed the
/// message to a daemon that then went away, the error says it may be
/// stored and names the id to send it again with.
pub(crate) async fn send_retrying<O: Op>(env: &Env, op: &O, id: &MessageId) -> Result<O::Reply> {
    call_patiently(env, op)
        .await
        .map_err(|(source, handed)| match handed {
            true => SendInDoubt {
                id: id.clone(),
                source,
            }
            .into(),
            false => source.into(),
        })
}

/// Calls `op`, retrying transient failures for [`RETRY_FOR`]; a failure
/// comes with whether some try was sent and its connection then broke
/// (the daemon may have done it).
async fn call_patiently<O: Op>(env: &Env, op: &O) -> Result<O::Reply, (ClientError, bool)> {
    let deadline = tokio::time::Instant::now() + RETRY_FOR;
    let mut pause = Duration::from_millis(20);
    let mut handed = false;
    loop {
        let attempt = async { ControlClient::connect(&env.home).await?.call(op).await }.await;
        handed |= matches!(attempt, Err(ClientError::Connection(_)));
        match attempt {
            Ok(reply) => return Ok(reply),
            Err(e) if e.is_transient() && tokio::time::Instant::now() < deadline => {
                tracing::debug!(error = %e, "retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            Err(e) => return Err((e, handed)),
        }
    }
}

/// A send handed to a daemon that went away before it answered: the
/// message may be stored, and sending it again with the same id stores it
/// once.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub(crate) struct SendInDoubt {
    id: MessageId,
    #[source]
    source: ClientError,
}

impl SendInDoubt {
    /// Why it failed.
    pub(crate) fn cause(&self) -> &ClientError {
        &self.source
    }

    /// The message's id, to send it again with.
    pub(crate) fn id(&self) -> &str {
        self.id.as_str()
    }

    /// What to do next.
    pub(crate) fn hint(&self) -> String {
        format!(
            "the daemon went away while it had this message, so it may be stored already; \
             once a daemon runs (`flotilla up`), send it again with its id `{id}` \
             (`--id {id}`): a message is stored once per id",
            id = self.id
        )
    }
}

fn message_id(body: &Body) -> Result<MessageId> {
    Ok(match &body.id {
        Some(id) => MessageId::new(id)?,
        None => MessageId::generate(),
    })
}

/// Schema id of `send|broadcast|reply --json` (a [`SendReply`]).
pub(crate) const SEND_SCHEMA: &str = "flotilla.send.v1";

fn print_sent(env: &Env, sender: &PeerName, reply: &SendReply) -> Result<(), StdoutError> {
    if env.json {
        output::json_as(SEND_SCHEMA, reply)?;
        return Ok(());
    }
    let to: Vec<String> = reply.recipients.iter().map(ToString::to_string).collect();
    let dup = if reply.duplicate {
        " (already sent before; stored once)"
    } else {
        ""
    };
    if to.is_empty() {
        outln!("sent {}{dup}: nobody else is in that group yet", reply.id)?;
    } else {
        outln!("sent {} to {}{dup}", reply.id, to.join(", "))?;
    }
    let waiting = reply
        .remote
        .iter()
        .filter(|r| r.state == DeliveryState::Accepted)
        .count();
    let queued = reply
        .remote
        .iter()
        .filter(|r| r.state == DeliveryState::Queued)
        .count();
    if queued > 0 {
        outln!(
            "  {queued} recipient(s) on other hosts: on the hub, delivered when their host is linked"
        )?;
    }
    if waiting > 0 {
        outln!(
            "  {waiting} recipient(s) on other hosts: kept here until the hub link is up (`{}`)",
            crate::hint::paste(&format!("flotilla outbox --as {sender}"))
        )?;
    }
    Ok(())
}

pub(crate) async fn send(env: &Env, args: SendArgs) -> Result<u8> {
    let sender = PeerName::new(&args.sender.as_peer)?;
    if args.batch {
        return super::batch::send(env, sender, usize::from(args.in_flight)).await;
    }
    let body = Body {
        message: args.message.unwrap_or_default(),
        summary: args.summary,
        id: args.id,
    };
    let id = message_id(&body)?;
    let op = protocol::SendArgs {
        as_peer: sender.clone(),
        to: args.to,
        summary: body.summary.clone(),
        id: Some(id.clone()),
        body: message_text(&body.message)?,
    };
    print_sent(env, &sender, &send_retrying(env, &op, &id).await?)?;
    Ok(OK)
}

pub(crate) async fn broadcast(env: &Env, args: BroadcastArgs) -> Result<u8> {
    let sender = PeerName::new(&args.sender.as_peer)?;
    let id = message_id(&args.body)?;
    let op = protocol::BroadcastArgs {
        as_peer: sender.clone(),
        group: GroupName::new(&args.group)?,
        summary: args.body.summary.clone(),
        id: Some(id.clone()),
        body: message_text(&args.body.message)?,
    };
    print_sent(env, &sender, &send_retrying(env, &op, &id).await?)?;
    Ok(OK)
}

pub(crate) async fn reply(env: &Env, args: ReplyArgs) -> Result<u8> {
    let sender = PeerName::new(&args.sender.as_peer)?;
    let id = message_id(&args.body)?;
    let op = protocol::ReplyArgs {
        as_peer: sender.clone(),
        to_message: MessageId::new(&args.to_message)?,
        summary: args.body.summary.clone(),
        id: Some(id.clone()),
        body: message_text(&args.body.message)?,
    };
    print_sent(env, &sender, &send_retrying(env, &op, &id).await?)?;
    Ok(OK)
}

pub(crate) async fn inbox(env: &Env, args: InboxArgs) -> Result<u8> {
    let reader = PeerName::new(&args.reader.as_peer)?;
    let mut client = env.client().await?;
    let fetch = InboxFetchArgs {
        as_peer: reader.clone(),
        wait_ms: super::millis(args.wait),
        limit: Some(args.limit),
    };
    let waiting = (!args.wait.is_zero())
        .then(|| crate::progress::Waiting::start(format!("waiting for a message to {reader}")));
    let reply = client.call(&fetch).await?;
    drop(waiting);
    let acknowledge = !args.peek && !reply.messages.is_empty();
    let text = if env.json {
        let mut value = serde_json::to_value(&reply)?;
        value["acknowledged"] = serde_json::Value::Bool(acknowledge);
        format!("{}\n", serde_json::to_string_pretty(&value)?)
    } else {
        output::messages(&reply.messages, reply.remaining, args.peek)
    };
    // Only what reached stdout is acknowledged; a closed pipe ends the
    // command quietly, with nothing acknowledged.
    match out!("{text}") {
        Ok(()) => {}
        Err(StdoutError::Failed(e)) => {
            return Err(CliError::failed(
                format!("cannot write the messages out ({e}); none were acknowledged"),
                None,
            ));
        }
        Err(closed) => return Err(closed.into()),
    }
    if acknowledge {
        let ids = reply.messages.iter().map(|m| m.id.clone()).collect();
        let ack = InboxAckArgs {
            as_peer: reader,
            ids,
        };
        match client.call(&ack).await {
            Ok(_) => {}
            Err(e @ ClientError::Connection(_)) | Err(e @ ClientError::NotRunning { .. }) => {
                call_retrying(env, &ack).await.map_err(|_| e)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(OK)
}

pub(crate) async fn outbox(env: &Env, args: crate::args::OutboxCliArgs) -> Result<u8> {
    let op = protocol::OutboxArgs {
        as_peer: PeerName::new(&args.sender.as_peer)?,
        limit: args.limit,
    };
    let reply = env.client().await?.call(&op).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        out!("{}", output::outbox(&reply))?;
    }
    Ok(OK)
}
