//! The `Router` actor: admission of messages and delivery into inboxes.
//!
//! For each send it checks the sender, the size and every target against
//! the current directory (all or nothing), queues the message on the store's
//! writer in arrival order, and answers only once the message is on disk
//! (the answer is awaited off the actor, so many sends share one commit).
//! It also serves acknowledgements. An inbox read needs no actor: the
//! control connection calls [`read_inbox`] itself, one hop less between a
//! stored message and its waiting reader. The router keeps no state of its
//! own beyond the shared context, so a restart loses nothing. It must not
//! change registrations (the registry's).

use std::sync::Arc;

use flotilla_actors::federation::stage;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::{MessageId, PeerId, PeerName};
use flotilla_actors::protocol::{
    BroadcastArgs, ControlError, InboxAckArgs, InboxAckReply, InboxReply, ReplyArgs, SendArgs,
    SendReply,
};
use flotilla_actors::store::{AcceptOutcome, NewMessage, SeenRecord};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::context::HostContext;
use crate::registry::store_error;

mod admit;

use admit::{Admitted, admit_broadcast, admit_reply, admit_send, sender};

/// Most bytes of message bodies returned by one inbox read (at least one
/// message is always returned).
const FETCH_BUDGET: usize = 8 * 1024 * 1024;
type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// Messages of the router.
#[derive(Debug)]
pub enum RouterMsg {
    /// Send to named targets.
    Send(SendArgs, Reply<SendReply>),
    /// Send to a group.
    Broadcast(BroadcastArgs, Reply<SendReply>),
    /// Answer a message's sender.
    Reply(ReplyArgs, Reply<SendReply>),
    /// Acknowledge read messages.
    Ack(InboxAckArgs, Reply<InboxAckReply>),
    /// Liveness check from the watchdog.
    Ping(RpcReplyPort<()>),
    /// Test hook: fail now.
    Fail,
}

/// A handle on the router.
pub type RouterRef = ActorRef<RouterMsg>;

/// The router actor.
#[derive(Debug)]
pub struct Router;

impl Actor for Router {
    type Msg = RouterMsg;
    type State = Arc<HostContext>;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        _: RouterRef,
        ctx: Arc<HostContext>,
    ) -> Result<Arc<HostContext>, ActorProcessingErr> {
        Ok(ctx)
    }

    async fn handle(
        &self,
        _myself: RouterRef,
        msg: RouterMsg,
        ctx: &mut Arc<HostContext>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RouterMsg::Send(args, reply) => {
                let admitted = admit_send(ctx, args);
                deliver(ctx, admitted, reply).await
            }
            RouterMsg::Broadcast(args, reply) => {
                let admitted = admit_broadcast(ctx, args);
                deliver(ctx, admitted, reply).await
            }
            RouterMsg::Reply(args, reply) => {
                let admitted = admit_reply(ctx, args);
                deliver(ctx, admitted, reply).await
            }
            RouterMsg::Ack(args, reply) => {
                let ctx = ctx.clone();
                tokio::spawn(async move {
                    let _ = reply.send(ack(&ctx, args).await);
                });
            }
            RouterMsg::Ping(reply) => {
                let _ = reply.send(());
            }
            RouterMsg::Fail => panic!("router failed on request (test hook)"),
        }
        Ok(())
    }
}

/// Queues an admitted message and answers once it is on disk (and, for
/// recipients on other hosts while the hub link is up, once the hub has it
/// or refused it).
async fn deliver(
    ctx: &Arc<HostContext>,
    admitted: Result<Admitted, ControlError>,
    reply: Reply<SendReply>,
) {
    let a = match admitted {
        Ok(a) => a,
        Err(e) => {
            let _ = reply.send(Err(e));
            return;
        }
    };
    let id = a.id.unwrap_or_else(MessageId::generate);
    stage::reached("send.admitted", &id);
    let sender = a.sender.id.name.clone();
    let message = NewMessage {
        id: id.clone(),
        from: a.sender.id,
        to: a.to,
        group: a.group,
        summary: a.summary,
        body: a.body,
        in_reply_to: a.in_reply_to,
        sent_at: Timestamp::now(),
        outbox_room: ctx.config.outbox_room(),
    };
    let remote: Vec<PeerId> = message
        .to
        .iter()
        .filter(|p| !ctx.is_local(p))
        .cloned()
        .collect();
    if let Err(e) = crate::frame_fit::check_hub_link(&message, &remote) {
        let _ = reply.send(Err(e));
        return;
    }
    match ctx.commit.submit_accept(message).await {
        Ok(pending) => {
            let ctx = ctx.clone();
            let id_of_answer = id.clone();
            tokio::spawn(async move {
                let sent = pending
                    .await
                    .map(|o| send_reply(id, o))
                    .map_err(store_error);
                if sent.is_ok() {
                    stage::reached("send.stored", &id_of_answer);
                    crate::crash_point::reached(&ctx, "send.stored");
                }
                let sent = match sent {
                    Ok(r) if r.recipients.iter().any(|p| !ctx.is_local(p)) => {
                        crate::verdict::await_hub(&ctx, r, &sender).await
                    }
                    other => other,
                };
                stage::reached("send.answered", &id_of_answer);
                let _ = reply.send(sent);
            });
        }
        Err(e) => {
            let _ = reply.send(Err(store_error(e)));
        }
    }
}

fn send_reply(id: MessageId, outcome: AcceptOutcome) -> SendReply {
    let (record, duplicate): (SeenRecord, bool) = match outcome {
        AcceptOutcome::Stored(r) => (r, false),
        AcceptOutcome::Duplicate(r) => (r, true),
    };
    SendReply {
        id,
        recipients: record.to,
        seq: record.seq,
        sent_at: record.sent_at,
        duplicate,
        remote: Vec::new(),
    }
}

/// The oldest messages (at most `limit`) of the inbox of `name`, a peer of
/// this host.
pub(crate) fn read_inbox(
    ctx: &HostContext,
    name: &PeerName,
    limit: usize,
) -> Result<InboxReply, ControlError> {
    let reader = sender(ctx, name)?;
    let (messages, remaining) = ctx
        .store
        .fetch_inbox(&reader.id, limit.max(1), FETCH_BUDGET)
        .map_err(store_error)?;
    Ok(InboxReply {
        schema: "flotilla.inbox.v1".into(),
        peer: reader.id,
        messages,
        remaining,
    })
}

async fn ack(ctx: &HostContext, args: InboxAckArgs) -> Result<InboxAckReply, ControlError> {
    let reader = sender(ctx, &args.as_peer)?;
    let acked = ctx
        .commit
        .ack(reader.id, args.ids)
        .await
        .map_err(store_error)?;
    Ok(InboxAckReply { acked })
}
