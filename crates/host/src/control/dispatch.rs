//! Turns one parsed request into calls on the daemon's actors.
//!
//! Calls go to whichever registry or router is current; while one is
//! restarting, a call waits for it (bounded), and a call whose actor died
//! mid-way is retried. That is safe because every write is idempotent: a
//! message id is fixed here, before the first try, so a retry is recognised
//! by the store.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_actors::names::{MessageId, PeerId};
use flotilla_actors::protocol::{
    ControlError, Empty, ErrorCode, InboxFetchArgs, InboxReply, OUTBOX_SCHEMA, OutboxArgs,
    OutboxReply, Request, StoreCheckReply, reply_value,
};
use flotilla_actors::store::OUTBOX_KEEP;
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use serde::Serialize;
use serde_json::Value;

use super::lanes;
use crate::context::HostContext;
use crate::fleet::runner::FleetsMsg;
use crate::registry::RegistryMsg;
use crate::router::RouterMsg;
use crate::status;

tokio::task_local! {
    /// Set while a pipelined request runs: a call whose actor died is
    /// answered `unavailable` instead of being posted again, which could
    /// put it behind later requests of its connection.
    pub(super) static PIPELINED: bool;
}

/// How long a request waits for a restarting actor.
const RESTART_PATIENCE: Duration = Duration::from_secs(10);
/// Default and largest number of messages one inbox read returns.
const DEFAULT_FETCH: u32 = 100;
const MAX_FETCH: u32 = 10_000;
/// Longest `inbox --wait`.
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// Like [`dispatch`], but a `lane.wait` result is only marked collected
/// when the caller confirms the returned handout (once its reply is
/// written), so a client that dies first does not lose it.
pub(super) async fn dispatch_held(
    ctx: &Arc<HostContext>,
    request: Request,
) -> (Result<Value, ControlError>, Option<lanes::Handout>) {
    match request {
        Request::LaneWait(a) => match lanes::wait(ctx, a).await {
            Ok((event, handout)) => (Ok(reply_value(&event)), Some(handout)),
            Err(e) => (Err(e), None),
        },
        other => (dispatch(ctx, other).await, None),
    }
}

pub(crate) async fn dispatch(
    ctx: &Arc<HostContext>,
    request: Request,
) -> Result<Value, ControlError> {
    match request {
        Request::HostStatus(_) => ok(status::host_status(ctx)),
        Request::Shutdown(_) => {
            ctx.shutdown.notify_one();
            ok(Empty {})
        }
        Request::PeerJoin(a) => registry(ctx, move |r| RegistryMsg::Join(a.clone(), r)).await,
        Request::PeerLeave(a) => registry(ctx, move |r| RegistryMsg::Leave(a.clone(), r)).await,
        Request::PeerRename(a) => registry(ctx, move |r| RegistryMsg::Rename(a.clone(), r)).await,
        Request::Peers(a) => registry(ctx, move |r| RegistryMsg::Peers(a.clone(), r)).await,
        Request::Roster(a) => {
            let msg = move |r| RegistryMsg::Roster(a.all, r);
            let mut reply = call(|| ctx.children.registry(), "the registry", &msg).await?;
            reply.lanes = lanes::roster_lanes(ctx)?;
            ok(reply)
        }
        Request::Outbox(a) => outbox(ctx, &a).map(|r| reply_value(&r)),
        Request::Send(mut a) => {
            a.id.get_or_insert_with(MessageId::generate);
            router(ctx, move |r| RouterMsg::Send(a.clone(), r)).await
        }
        Request::Broadcast(mut a) => {
            a.id.get_or_insert_with(MessageId::generate);
            router(ctx, move |r| RouterMsg::Broadcast(a.clone(), r)).await
        }
        Request::Reply(mut a) => {
            a.id.get_or_insert_with(MessageId::generate);
            router(ctx, move |r| RouterMsg::Reply(a.clone(), r)).await
        }
        Request::InboxFetch(a) => inbox_fetch(ctx, a).await.map(|r| reply_value(&r)),
        Request::InboxAck(a) => router(ctx, move |r| RouterMsg::Ack(a.clone(), r)).await,
        Request::StoreCheck(_) => store_check(ctx).await.map(|r| reply_value(&r)),
        Request::DebugFail(a) => debug_fail(ctx, &a.actor),
        Request::RemoteCall(a) => crate::remote_lanes::client::call(ctx, a).await,
        Request::LaneStart(a) => ok(crate::governance::lanes::start(ctx, a).await?),
        Request::LaneRemove(a) => {
            let sup = lanes::supervisor(ctx)?;
            ok(crate::lanes::call(&sup, |r| crate::lanes::LaneSupervisorMsg::Remove(a, r)).await?)
        }
        Request::LanePrune(a) => {
            let sup = lanes::supervisor(ctx)?;
            ok(crate::lanes::call(&sup, |r| crate::lanes::LaneSupervisorMsg::Prune(a, r)).await?)
        }
        Request::LaneResume(a) => {
            let lane = lanes::lane(ctx, &a.name).await?;
            if let Some(model) = a.model {
                let _ = lane.cast(crate::lanes::LaneMsg::SetModel(model));
            }
            let turn = crate::lanes::call(&lane, |reply| crate::lanes::LaneMsg::BeginTurn {
                prompt: a.prompt,
                resume: !a.fresh,
                reply,
            })
            .await?;
            let notes = match lanes::status(&lane).await.ok().and_then(|v| v.held_by) {
                Some(who) => vec![format!(
                    "the lane is held by {who} (flotilla lane attach): turn {turn} starts when that ends"
                )],
                None => Vec::new(),
            };
            let id = flotilla_actors::names::PeerId::new(ctx.host.clone(), a.name);
            ok(flotilla_actors::protocol::LaneStartReply {
                lane: id,
                turn,
                cwd: None,
                notes,
            })
        }
        Request::LaneWait(a) => lanes::wait(ctx, a).await.map(|(event, handout)| {
            handout.confirm();
            reply_value(&event)
        }),
        Request::LaneStatus(a) => ok(lanes::status(&lanes::lane(ctx, &a.name).await?).await?),
        Request::LaneInterrupt(a) => {
            let lane = lanes::lane(ctx, &a.name).await?;
            ok(crate::lanes::call(&lane, crate::lanes::LaneMsg::Interrupt).await?)
        }
        Request::LaneFiles(a) => ok(super::lane_files::files(ctx, a).await?),
        Request::LaneAttach(a) => {
            let lane = lanes::lane(ctx, &a.name).await?;
            let msg = |r| crate::lanes::LaneMsg::Attach(Box::new(a), r);
            ok(crate::lanes::call(&lane, msg).await?)
        }
        Request::LaneRelease(a) => {
            let lane = lanes::lane(ctx, &a.name).await?;
            let msg = |reply| crate::lanes::LaneMsg::Release(a, reply);
            ok(crate::lanes::call(&lane, msg).await?)
        }
        Request::LaneArchive(a) => {
            let lane = lanes::lane(ctx, &a.name).await?;
            ok(crate::lanes::call(&lane, crate::lanes::LaneMsg::Archive).await?)
        }
        Request::LaneList(a) => ok(lanes::list(ctx, a.all).await?),
        Request::LaneEvents(a) => lanes::events(ctx, a).await.map(|r| reply_value(&r)),
        Request::LaneDoctor(a) => ok(crate::lanes::doctor::run(&ctx.config, a.cli).await),
        Request::FleetCheck(a) => ok(crate::fleet::acceptance::check(a).await?),
        Request::FleetStart(a) => fleet(ctx, |r| FleetsMsg::Start(Box::new(a), r)).await,
        Request::FleetTask(a) => fleet(ctx, |r| FleetsMsg::Task(Box::new(a), r)).await,
        Request::FleetStatus(a) => fleet(ctx, |r| FleetsMsg::Status(a.name, r)).await,
        Request::FleetList(_) => fleet(ctx, FleetsMsg::List).await,
        Request::FleetPause(a) => fleet(ctx, |r| FleetsMsg::Pause(a.name, r)).await,
        Request::FleetResume(a) => fleet(ctx, |r| FleetsMsg::Resume(Box::new(a), r)).await,
        Request::FleetStop(a) => fleet(ctx, |r| FleetsMsg::Stop(a.name, r)).await,
        Request::FleetHistory(a) => fleet(ctx, |r| FleetsMsg::History(a.name, r)).await,
        Request::FleetRequest(a) => fleet(ctx, |r| FleetsMsg::Request(Box::new(a), r)).await,
        Request::FleetRemove(a) => fleet(ctx, |r| FleetsMsg::Remove(a.name, r)).await,
        Request::ClaimAdd(a) => ok(crate::governance::claims::add(ctx, a).await?),
        Request::ClaimShow(a) => ok(crate::governance::claims::show(ctx, a).await?),
        Request::ClaimDrop(a) => ok(crate::governance::claims::drop(ctx, a).await?),
        Request::Review(a) => ok(crate::governance::review::review(ctx, a).await?),
        Request::Gate(a) => ok(crate::governance::review::gate(ctx, a).await?),
        Request::ChangeOpen(a) => ok(crate::governance::change::open(ctx, a).await?),
        Request::Merge(a) => ok(crate::governance::merge::merge(ctx, a).await?),
        Request::Policy(a) => ok(crate::governance::policy_file::show(ctx, a).await?),
        Request::Board(a) => ok(crate::governance::claims::board(ctx, a).await?),
        Request::Ready(a) => ok(crate::governance::ready::ready(ctx, a).await?),
        _ => Err(ControlError::new(
            ErrorCode::BadRequest,
            "this daemon does not serve that op yet",
        )),
    }
}

/// Asks the fleets' actor.
async fn fleet<T: Serialize + Send + 'static>(
    ctx: &HostContext,
    msg: impl FnOnce(ractor::RpcReplyPort<Result<T, ControlError>>) -> FleetsMsg,
) -> Result<Value, ControlError> {
    let fleets = ctx
        .children
        .fleets()
        .ok_or_else(|| ControlError::unavailable("the fleets' actor"))?;
    ok(crate::lanes::call(&fleets, msg).await?)
}

fn ok<T: Serialize>(value: T) -> Result<Value, ControlError> {
    Ok(reply_value(&value))
}

async fn registry<T, F>(ctx: &HostContext, msg: F) -> Result<Value, ControlError>
where
    T: Serialize + Send + 'static,
    F: Fn(RpcReplyPort<Result<T, ControlError>>) -> RegistryMsg,
{
    call(|| ctx.children.registry(), "the registry", &msg)
        .await
        .map(|r| reply_value(&r))
}

async fn router<T, F>(ctx: &HostContext, msg: F) -> Result<Value, ControlError>
where
    T: Serialize + Send + 'static,
    F: Fn(RpcReplyPort<Result<T, ControlError>>) -> RouterMsg,
{
    call(|| ctx.children.router(), "the router", &msg)
        .await
        .map(|r| reply_value(&r))
}

/// Calls the current actor, waiting out restarts and retrying a call whose
/// actor died before answering.
async fn call<M, T, F>(
    current: impl Fn() -> Option<ActorRef<M>>,
    what: &str,
    msg: &F,
) -> Result<T, ControlError>
where
    M: ractor::Message,
    T: Send + 'static,
    F: Fn(RpcReplyPort<Result<T, ControlError>>) -> M,
{
    let deadline = Instant::now() + RESTART_PATIENCE;
    let mut pause = Duration::from_millis(5);
    while Instant::now() < deadline {
        if let Some(actor) = current() {
            match actor.call(msg, None).await {
                Ok(CallResult::Success(result)) => return result,
                _ if PIPELINED.try_with(|p| *p).unwrap_or(false) => {
                    return Err(ControlError::unavailable(what));
                }
                _ => {}
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
    Err(ControlError::unavailable(what))
}

async fn inbox_fetch(
    ctx: &Arc<HostContext>,
    args: InboxFetchArgs,
) -> Result<InboxReply, ControlError> {
    let limit = args.limit.unwrap_or(DEFAULT_FETCH).clamp(1, MAX_FETCH) as usize;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(args.wait_ms).min(MAX_WAIT);
    let mut epoch = ctx.mail_epoch.clone();
    loop {
        epoch.borrow_and_update();
        let reply = crate::router::read_inbox(ctx, &args.as_peer, limit)?;
        if !reply.messages.is_empty() || tokio::time::Instant::now() >= deadline {
            for m in &reply.messages {
                flotilla_actors::federation::stage::reached("fetch.answered", &m.id);
            }
            return Ok(reply);
        }
        let _waiting = WaitingGuard::enter(ctx, &reply.peer);
        match tokio::time::timeout_at(deadline, epoch.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) | Err(_) => return Ok(reply),
        }
    }
}

/// Counts a reader as waiting for as long as it is blocked (shown as the
/// peer's state `waiting`).
struct WaitingGuard<'a> {
    ctx: &'a HostContext,
    peer: flotilla_actors::names::PeerId,
}

impl<'a> WaitingGuard<'a> {
    fn enter(ctx: &'a HostContext, peer: &flotilla_actors::names::PeerId) -> Self {
        if let Ok(mut w) = ctx.waiting.lock() {
            *w.entry(peer.clone()).or_insert(0) += 1;
        }
        Self {
            ctx,
            peer: peer.clone(),
        }
    }
}

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut w) = self.ctx.waiting.lock()
            && let Some(n) = w.get_mut(&self.peer)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                w.remove(&self.peer);
            }
        }
    }
}

fn outbox(ctx: &HostContext, args: &OutboxArgs) -> Result<OutboxReply, ControlError> {
    let peer = PeerId::new(ctx.host.clone(), args.as_peer.clone());
    if ctx.directory().get(&peer).is_none() {
        return Err(crate::registry::not_registered(&peer));
    }
    let store_error = crate::registry::store_error;
    let messages = ctx
        .store
        .outbox(&peer, args.limit.clamp(1, OUTBOX_KEEP as usize))
        .map_err(store_error)?;
    Ok(OutboxReply {
        schema: OUTBOX_SCHEMA.into(),
        peer,
        waiting_for_hub: ctx.store.outbox_depth().map_err(store_error)?,
        messages,
    })
}

async fn store_check(ctx: &Arc<HostContext>) -> Result<StoreCheckReply, ControlError> {
    let store = ctx.store.clone();
    let path = store.path().display().to_string();
    let outcome = tokio::task::spawn_blocking(move || {
        let version = store.schema_version()?;
        store.verify().map(|detail| (version, detail))
    })
    .await
    .map_err(|e| ControlError::internal(e.to_string()))?;
    Ok(match outcome {
        Ok((schema_version, detail)) => {
            let repaired = *ctx.store.integrity() == flotilla_actors::store::Integrity::Repaired;
            let note = if repaired {
                "; redb repaired the file at start"
            } else {
                ""
            };
            StoreCheckReply {
                ok: true,
                path,
                schema_version,
                detail: format!("{detail}{note}"),
            }
        }
        Err(e) => StoreCheckReply {
            ok: false,
            path,
            schema_version: 0,
            detail: e.to_string(),
        },
    })
}

fn debug_fail(ctx: &HostContext, actor: &str) -> Result<Value, ControlError> {
    if !ctx.test_hooks {
        return Err(ControlError::new(
            ErrorCode::Forbidden,
            "test hooks are not enabled on this daemon",
        )
        .with_hint("start the daemon with FLOTILLA_TEST_HOOKS=1 (tests only)"));
    }
    let sent = match actor {
        "registry" => ctx
            .children
            .registry()
            .map(|a| a.cast(RegistryMsg::Fail).is_ok()),
        "router" => ctx
            .children
            .router()
            .map(|a| a.cast(RouterMsg::Fail).is_ok()),
        other => {
            return Err(
                ControlError::new(ErrorCode::BadRequest, format!("no actor {other:?}"))
                    .with_hint("use registry or router"),
            );
        }
    };
    match sent {
        Some(true) => ok(Empty {}),
        _ => Err(ControlError::unavailable(actor)),
    }
}
