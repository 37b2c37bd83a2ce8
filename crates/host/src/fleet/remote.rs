//! Fleet members on other hosts (`fleet start --host`): their lanes are
//! remote lanes, driven with `remote.call` through the hub like `lane ...
//! --host`, owned by the fleet's own peer: started (never twice, and
//! waiting for a host out of reach without spending an attempt), followed
//! through its events, collected, interrupted, removed. Its steps are
//! judged in [`super::remote_judge`]. Decides nothing about the fleet;
//! [`super::members`] calls in here for a member with a host.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::fleet::record::RemoteSeen;
use flotilla_actors::fleet::{FleetRecord, FleetSpec, MemberSpec, TurnEnd};
use flotilla_actors::lane::LanePhase;
use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneEventsReply, LaneStartReply, LaneView, RemoteCallArgs,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::context::HostContext;

/// How long one relayed wait for a remote member's result lasts.
const WAIT_SLICE_MS: u64 = 25_000;

/// How long a wait goes on while the hub link or the member's host is
/// down (its lane keeps running there) before the turn counts as lost.
const UNREACHABLE_FOR: Duration = Duration::from_secs(24 * 3600);

/// Looks at an idle remote lane with no end of the turn in its log before
/// the turn counts as lost.
const IDLE_LOOKS: u32 = 3;

/// The pause between asks while the member's host cannot be reached.
const ASK_AGAIN: Duration = Duration::from_secs(3);

/// The host of `role`, when it is not this one.
pub(super) fn host_of(spec: &FleetSpec, role: &str) -> Option<HostName> {
    spec.members()
        .into_iter()
        .find(|(r, _)| r == role)
        .and_then(|(_, m)| m.host.clone())
}

/// Calls `op` with `args` on `host`, as the fleet's own peer.
pub(super) async fn call<T: DeserializeOwned>(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    host: &HostName,
    op: &str,
    args: Value,
) -> Result<T, ControlError> {
    let args = RemoteCallArgs {
        host: host.clone(),
        as_peer: spec.as_peer.clone(),
        op: op.to_owned(),
        args,
    };
    let value = crate::remote_lanes::client::call(ctx, args).await?;
    serde_json::from_value(value)
        .map_err(|e| ControlError::internal(format!("{host} answered {op} unreadably: {e}")))
}

/// The remote lane of `role`, if it exists there.
pub(super) async fn status(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
) -> Result<Option<LaneView>, ControlError> {
    let name = json!({"name": spec.lane_of(role)});
    match call::<LaneView>(ctx, spec, host, "lane.status", name).await {
        Ok(view) => Ok(Some(view)),
        Err(e) if e.code == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Before a fleet with members on `hosts` starts: each host answers,
/// takes lanes from this one, and has no lane of a member's name yet.
pub(super) async fn check_hosts(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
) -> Result<(), ControlError> {
    for (role, member) in spec.members() {
        let Some(host) = &member.host else { continue };
        let listed: Result<Value, _> = call(ctx, spec, host, "lane.list", json!({})).await;
        listed.map_err(|e| {
            e.with_hint(format!(
                "{role} is placed on {host}: fix that host's remote lane policy or drop its --host"
            ))
        })?;
        if status(ctx, spec, &role, host).await?.is_some() {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("{host} has a lane named {}", spec.lane_of(&role)),
            )
            .with_hint(format!(
                "remove it there (flotilla lane rm {} --host {host} --force) or pick another fleet name",
                spec.lane_of(&role)
            )));
        }
    }
    Ok(())
}

/// Starts a turn of the remote member `role`: its first turn creates the
/// lane on `host` (in a fresh directory there), later ones resume it.
/// While `host` or the hub cannot be reached, no attempt is spent: it asks
/// again every [`ASK_AGAIN`] (for up to a day), and a start that went
/// through before the link dropped is adopted, never made twice.
pub(super) async fn begin(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    member: &MemberSpec,
    host: &HostName,
    turn: (String, bool, Option<String>),
) -> Result<u32, String> {
    let started = tokio::time::Instant::now();
    // Anything but "cannot be reached", or that for a day, ends it.
    let final_error =
        |e: &ControlError| e.code != ErrorCode::Unavailable || started.elapsed() >= UNREACHABLE_FOR;
    let mut known = None;
    loop {
        let view = match status(ctx, spec, role, host).await {
            Ok(view) => view,
            Err(e) if !final_error(&e) => {
                tracing::info!(fleet = %spec.name, %role, %host, error = %e.message, "a remote member's turn waits for its host");
                tokio::time::sleep(ASK_AGAIN).await;
                continue;
            }
            Err(e) => return Err(format!("{host}: {}", e.message)),
        };
        let turns = view.as_ref().map_or(0, |v| v.turns);
        match known {
            // It started before the link dropped: adopt it.
            Some(before) if turns > before => return Ok(turns),
            _ => known = Some(turns),
        }
        match start_or_resume(ctx, spec, role, member, host, view.is_some(), &turn).await {
            Ok(turn) => return Ok(turn),
            Err(e) if !final_error(&e) => {
                tracing::info!(fleet = %spec.name, %role, %host, error = %e.message, "a remote member's turn waits for its host");
                tokio::time::sleep(ASK_AGAIN).await;
            }
            Err(e) => return Err(format!("{host}: {}", e.message)),
        }
    }
}

async fn start_or_resume(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    member: &MemberSpec,
    host: &HostName,
    exists: bool,
    turn: &(String, bool, Option<String>),
) -> Result<u32, ControlError> {
    let (prompt, fresh, model) = turn.clone();
    let reply: LaneStartReply = if exists {
        let args =
            json!({"name": spec.lane_of(role), "prompt": prompt, "fresh": fresh, "model": model});
        call(ctx, spec, host, "lane.resume", args).await?
    } else {
        let mut member = member.clone();
        if model.is_some() {
            member.model = model;
        }
        let mut args = super::members::start_json(spec, role, &member, prompt);
        args["cwd"] = Value::Null;
        call(ctx, spec, host, "lane.start", args).await?
    };
    Ok(reply.turn)
}

/// Waits for turn `turn` of the remote member `role` to end, following
/// its lane's events on its host: each higher context figure of the turn
/// goes to `on_context` while it runs. Nothing is collected here (the
/// result stays on the lane until [`collect`], once the fleet saved what
/// it did with it). While `host` cannot be reached the wait goes on (the
/// lane keeps running there).
pub(super) async fn wait(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
    turn: u32,
    on_context: &(dyn Fn(f64) + Send + Sync),
) -> TurnEnd {
    let lane = spec.lane_of(role);
    let started = tokio::time::Instant::now();
    let (mut after, mut told, mut idle) = (0u64, 0f64, 0u32);
    loop {
        let args = json!({"name": lane, "after": after, "wait_ms": WAIT_SLICE_MS, "limit": 10_000});
        let reply = match call::<LaneEventsReply>(ctx, spec, host, "lane.events", args).await {
            Ok(reply) => reply,
            Err(e) if e.code == ErrorCode::Unavailable && started.elapsed() < UNREACHABLE_FOR => {
                tracing::info!(fleet = %spec.name, %role, %host, error = %e.message, "a remote member cannot be reached; asking again");
                tokio::time::sleep(ASK_AGAIN).await;
                continue;
            }
            Err(e) => return failed(format!("{host}: {}", e.message)),
        };
        if reply.idle && reply.events.is_empty() {
            // Idle with nothing new: the turn's end is not in its log.
            idle += 1;
            if idle >= IDLE_LOOKS {
                return failed(format!("turn {turn} of {lane} on {host} left no result"));
            }
            tokio::time::sleep(ASK_AGAIN).await;
            continue;
        }
        for event in reply.events {
            after = after.max(event.seq);
            match event.kind {
                EventKind::Usage {
                    context_used_pct: Some(pct),
                    ..
                } if event.turn == turn && pct.is_finite() && pct > told => {
                    told = pct;
                    on_context(pct);
                }
                kind @ EventKind::TurnCompleted(_) if event.turn == turn => {
                    return super::members::end_of(kind);
                }
                _ => {}
            }
        }
    }
}

/// Collects the remote member's results up to turn `turn` (the fleet has
/// saved what it did with them), so none waits on its lane.
pub(super) async fn collect(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
    turn: u32,
) {
    for _ in 0..8 {
        let args = json!({"name": spec.lane_of(role), "timeout_ms": 0});
        match call::<LaneEvent>(ctx, spec, host, "lane.wait", args).await {
            Ok(event) if event.turn < turn => continue,
            _ => return,
        }
    }
}

/// The turn the remote member runs or ran, when newer than `seen`.
pub(super) async fn adopt(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
    seen: u32,
) -> Option<u32> {
    let view = status(ctx, spec, role, host).await.ok()??;
    (view.turns > seen).then_some(view.turns)
}

/// Interrupts the remote member's running turn.
pub(super) async fn interrupt(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
) {
    let args = json!({"name": spec.lane_of(role)});
    let view: Result<LaneView, _> = call(ctx, spec, host, "lane.status", args.clone()).await;
    if view.is_ok_and(|v| v.phase == LanePhase::Running) {
        let done: Result<LaneView, _> = call(ctx, spec, host, "lane.interrupt", args).await;
        if let Err(e) = done {
            tracing::warn!(fleet = %spec.name, %role, %host, error = %e.message, "a remote member's turn could not be interrupted");
        }
    }
}

/// Removes the remote member's lane (when its fleet goes). A host that
/// cannot be reached keeps it; the error says so.
pub(super) async fn remove(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
) -> Result<bool, ControlError> {
    if status(ctx, spec, role, host).await?.is_none() {
        return Ok(false);
    }
    let args = json!({"name": spec.lane_of(role), "force": true});
    let _: Value = call(ctx, spec, host, "lane.remove", args).await?;
    Ok(true)
}

/// Notes what a remote member's ended turn reported (its lane's record
/// is on its own host), for `fleet status`.
pub(super) fn saw(record: &mut FleetRecord, role: &str, turn: u32, end: &TurnEnd) {
    if host_of(&record.spec, role).is_none() {
        return;
    }
    record.remote_seen.insert(
        role.to_owned(),
        RemoteSeen {
            turn,
            context_used_pct: end.context_used_pct,
            tokens: end.tokens,
            cost_usd: end.cost,
        },
    );
}

fn failed(text: String) -> TurnEnd {
    TurnEnd {
        ok: false,
        text,
        ..TurnEnd::default()
    }
}
