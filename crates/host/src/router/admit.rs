//! What the router admits: the sender registered here, the content within
//! its limits, and every target reachable now (all or nothing); and a
//! retry of a message its sender has stored already, whatever the
//! directory says now (its recipient may have left since: the message is
//! stored, and its fate is the outbox's to tell).
//!
//! Pure checks against the directory and the store's reads; must not
//! write (the commit queue does) or answer the client (the router does).

use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, MessageId, PeerId, PeerName};
use flotilla_actors::protocol::{BroadcastArgs, ControlError, ErrorCode, ReplyArgs, SendArgs};
use flotilla_actors::store::SeenRecord;
use serde_json::json;

use crate::context::HostContext;
use crate::registry::{RegistryMsg, not_registered, store_error};

/// Longest summary, in bytes.
const MAX_SUMMARY: usize = 256;

/// A message admitted by the router, not yet on disk.
#[derive(Debug)]
pub(super) struct Admitted {
    pub(super) sender: PeerRecord,
    pub(super) to: Vec<PeerId>,
    pub(super) group: Option<GroupName>,
    pub(super) summary: Option<String>,
    pub(super) body: String,
    pub(super) id: Option<MessageId>,
    pub(super) in_reply_to: Option<MessageId>,
}
pub(super) fn sender(ctx: &HostContext, name: &PeerName) -> Result<PeerRecord, ControlError> {
    let id = PeerId::new(ctx.host.clone(), name.clone());
    let record = ctx
        .directory()
        .get(&id)
        .cloned()
        .ok_or_else(|| not_registered(&id))?;
    if let Some(registry) = ctx.children.registry() {
        let _ = registry.cast(RegistryMsg::Touch(id));
    }
    Ok(record)
}

fn check_content(
    ctx: &HostContext,
    body: &str,
    summary: &Option<String>,
) -> Result<(), ControlError> {
    let limit = ctx.config.max_message_bytes;
    if body.len() > limit {
        return Err(ControlError::new(
            ErrorCode::TooLarge,
            format!(
                "message is {} bytes, over the limit of {limit} bytes",
                body.len()
            ),
        )
        .with_hint("split it into smaller messages, or raise max_message_bytes in config.toml")
        .with_details(json!({"size": body.len(), "limit": limit})));
    }
    if body.is_empty() {
        return Err(ControlError::new(ErrorCode::BadRequest, "message is empty")
            .with_hint("give the text as an argument, or `-` to read it from stdin"));
    }
    if let Some(s) = summary
        .as_deref()
        .filter(|s| s.len() > MAX_SUMMARY || s.contains('\n'))
    {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!(
                "summary must be one line of at most {MAX_SUMMARY} bytes; got {} bytes",
                s.len()
            ),
        ));
    }
    Ok(())
}

pub(super) fn admit_send(ctx: &HostContext, args: SendArgs) -> Result<Admitted, ControlError> {
    let sender = sender(ctx, &args.as_peer)?;
    check_content(ctx, &args.body, &args.summary)?;
    if args.to.is_empty() {
        return Err(ControlError::new(ErrorCode::BadRequest, "no target given")
            .with_hint("name at least one peer with --to"));
    }
    let to = admit_targets(ctx, &sender, &args.to, args.id.as_ref())?;
    Ok(Admitted {
        sender,
        to,
        group: None,
        summary: args.summary,
        body: args.body,
        id: args.id,
        in_reply_to: None,
    })
}

pub(super) fn admit_broadcast(
    ctx: &HostContext,
    args: BroadcastArgs,
) -> Result<Admitted, ControlError> {
    let sender = sender(ctx, &args.as_peer)?;
    check_content(ctx, &args.body, &args.summary)?;
    let to = ctx
        .directory()
        .admit_broadcast(&sender, &args.group)
        .map_err(|e| {
            ControlError::new(ErrorCode::NotMember, format!("nothing was sent: {e}")).with_hint(
                format!(
                    "join it first: flotilla peer join {} -g {}",
                    args.as_peer, args.group
                ),
            )
        })?;
    Ok(Admitted {
        sender,
        to,
        group: Some(args.group),
        summary: args.summary,
        body: args.body,
        id: args.id,
        in_reply_to: None,
    })
}

pub(super) fn admit_reply(ctx: &HostContext, args: ReplyArgs) -> Result<Admitted, ControlError> {
    let sender = sender(ctx, &args.as_peer)?;
    check_content(ctx, &args.body, &args.summary)?;
    let received = ctx
        .store
        .received(&sender.id, &args.to_message)
        .map_err(store_error)?;
    let original = original_of(received, &sender.id, &args.to_message, &args.as_peer)?;
    let to = admit_targets(ctx, &sender, &[original.from.to_string()], args.id.as_ref())?;
    Ok(Admitted {
        sender,
        to,
        group: None,
        summary: args.summary,
        body: args.body,
        id: args.id,
        in_reply_to: Some(args.to_message),
    })
}

/// Every target of a message from `sender` reachable now (all or
/// nothing), or the recipients it had if `sender` stored a message with
/// `id` already (a retry); else why not, with each refused target.
fn admit_targets(
    ctx: &HostContext,
    sender: &PeerRecord,
    targets: &[String],
    id: Option<&MessageId>,
) -> Result<Vec<PeerId>, ControlError> {
    ctx.directory()
        .admit_send(sender, targets)
        .or_else(|bad| stored_before(ctx, sender, id).ok_or(bad))
        .map_err(|bad| {
            let lines: Vec<String> = bad.iter().map(ToString::to_string).collect();
            ControlError::new(
                ErrorCode::TargetsRefused,
                format!("nothing was sent; refused targets: {}", lines.join("; ")),
            )
            .with_hint(format!(
                "`flotilla peers --as {}` lists who you can reach",
                sender.id.name
            ))
            .with_details(json!({ "refused": bad }))
        })
}

/// The message a reply answers, among those with its id that the replier
/// received: ids are chosen by senders, so two senders may have used the
/// same one.
fn original_of(
    mut received: Vec<SeenRecord>,
    reader: &PeerId,
    id: &MessageId,
    as_peer: &PeerName,
) -> Result<SeenRecord, ControlError> {
    match received.len() {
        1 => Ok(received.remove(0)),
        0 => Err(ControlError::new(
            ErrorCode::NotFound,
            format!("{reader} received no message with id {id}"),
        )
        .with_hint(format!(
            "`flotilla inbox --as {as_peer} --peek` shows message ids"
        ))),
        _ => {
            let from: Vec<String> = received.iter().map(|r| r.from.to_string()).collect();
            Err(ControlError::new(
                ErrorCode::Conflict,
                format!(
                    "{reader} received messages with id {id} from {}; a reply cannot tell which it answers",
                    from.join(", ")
                ),
            )
            .with_hint(format!("send to the sender instead: flotilla send --as {as_peer} --to PEER")))
        }
    }
}

/// The recipients of the message `id` when `sender` has stored it already:
/// a retry is then admitted as it was the first time, and the store
/// answers it as the duplicate it is. Read only once the directory has
/// refused a target, so the path of a first send is unchanged.
fn stored_before(
    ctx: &HostContext,
    sender: &PeerRecord,
    id: Option<&MessageId>,
) -> Option<Vec<PeerId>> {
    let seen = ctx.store.seen(id?).ok()??;
    (seen.from == sender.id).then_some(seen.to)
}
