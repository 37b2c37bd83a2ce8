//! A fleet's members are ordinary lanes: this module starts a member's
//! turn (creating its lane at its first turn), waits for the turn's result
//! and hands it out, and interrupts running turns when a fleet stops. It
//! talks to the lane supervisor and lane actors only; it never decides
//! anything about the fleet.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::fleet::{FleetSpec, MemberSpec, SUPERVISOR, TurnEnd};
use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::resets::resets_at;
use flotilla_actors::lane::{CliKind, TurnStatus};
use flotilla_actors::names::PeerName;
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::lanes::{Collected, LaneMsg, LaneRef, LaneSupervisorMsg};

use super::remote;

/// How long one wait for a lane's news lasts before it looks again.
const LOOK_AGAIN: Duration = Duration::from_secs(2);

/// The lane of `role`, if it exists.
pub async fn lane_of(ctx: &HostContext, spec: &FleetSpec, role: &str) -> Option<LaneRef> {
    let name = PeerName::new(&spec.lane_of(role)).ok()?;
    let lanes = ctx.children.lanes()?;
    match lanes.call(|r| LaneSupervisorMsg::Get(name, r), None).await {
        Ok(CallResult::Success(lane)) => lane,
        _ => None,
    }
}

/// Starts a turn of `role` with `prompt`: the lane's first turn creates
/// it, later ones continue its native session unless `fresh` (a rotated
/// member's successor). A result the fleet no longer waits for (left by a
/// crash) is handed out first.
pub async fn begin(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    member: &MemberSpec,
    prompt: String,
    fresh: bool,
    model: Option<String>,
) -> Result<u32, String> {
    let prompt = with_claim(member, prompt);
    if let Some(host) = &member.host {
        return super::remote::begin(ctx, spec, role, member, host, (prompt, fresh, model)).await;
    }
    if let Some(lane) = lane_of(ctx, spec, role).await {
        drain(&lane).await;
        if let Some(model) = model {
            let _ = lane.cast(LaneMsg::SetModel(model));
        }
        return match lane
            .call(
                |reply| LaneMsg::BeginTurn {
                    prompt,
                    resume: !fresh,
                    reply,
                },
                None,
            )
            .await
        {
            Ok(CallResult::Success(r)) => r.map_err(|e| e.message),
            _ => Err("the member's lane is not answering".into()),
        };
    }
    let mut member = member.clone();
    if model.is_some() {
        member.model = model;
    }
    let mut json = start_json(spec, role, &member, prompt);
    json["as"] = serde_json::json!(owner_of(ctx, spec, role).await);
    let args = serde_json::from_value(json).map_err(|e| e.to_string())?;
    crate::governance::lanes::start(ctx, args)
        .await
        .map(|s| s.turn)
        .map_err(|e| match e.hint {
            Some(hint) => format!("{} ({hint})", e.message),
            None => e.message,
        })
}

/// A claim's worker is told where it works and what it must not do; the
/// daemon enforces both (docs/governance.md).
fn with_claim(member: &MemberSpec, prompt: String) -> String {
    match &member.claim {
        Some(id) => format!(
            "You work on claim {id}: in its own git worktree, on branch {}. \
             Commit your work on that branch; never push to a protected branch.\n\n{prompt}",
            id.branch()
        ),
        None => prompt,
    }
}

/// The owner of `role`'s new lane on this host: a worker's is the
/// supervisor's lane (which may then drive it, and whose inbox its results
/// reach); the supervisor's, and a worker's started before the supervisor
/// ever ran (a service request straight to it), is the fleet's `--as`.
async fn owner_of(ctx: &HostContext, spec: &FleetSpec, role: &str) -> Option<PeerName> {
    if role != SUPERVISOR && lane_of(ctx, spec, SUPERVISOR).await.is_some() {
        return PeerName::new(&spec.lane_of(SUPERVISOR)).ok();
    }
    spec.as_peer.clone()
}

/// The `lane.start` arguments of `role`'s lane (names and groups are
/// checked when the lane starts).
pub(super) fn start_json(
    spec: &FleetSpec,
    role: &str,
    member: &MemberSpec,
    prompt: String,
) -> serde_json::Value {
    let args: Vec<String> = match (&member.cli, &member.command) {
        (CliKind::Exec, Some(cmd)) => vec!["sh".into(), "-c".into(), cmd.clone()],
        _ => Vec::new(),
    };
    serde_json::json!({
        "name": spec.lane_of(role),
        "cli": member.cli,
        "cwd": spec.dir,
        "model": member.model,
        "timeout_secs": spec.turn_timeout_secs,
        "persistent": false,
        "auto_archive_secs": null,
        "groups": [spec.group()],
        "as": spec.as_peer,
        "args": args,
        "prompt": prompt,
        "claim": member.claim,
        "permissions": member.permissions,
    })
}

/// The turn of `role` its lane runs, or whose result it holds, when that
/// turn is newer than `seen` (the last the fleet was fed).
pub async fn adopt(ctx: &Arc<HostContext>, spec: &FleetSpec, role: &str, seen: u32) -> Option<u32> {
    if let Some(host) = remote::host_of(spec, role) {
        return remote::adopt(ctx, spec, role, &host, seen).await;
    }
    let lane = lane_of(ctx, spec, role).await?;
    let turn = match lane.call(LaneMsg::Collect, None).await {
        Ok(CallResult::Success(Collected::Result(event))) => event.turn,
        Ok(CallResult::Success(Collected::Running)) => match lane.call(LaneMsg::Status, None).await
        {
            Ok(CallResult::Success(view)) => view.turns,
            _ => return None,
        },
        _ => return None,
    };
    (turn > seen).then_some(turn)
}

/// Hands out every result left on `lane` (a crash can leave one the
/// fleet already counted).
async fn drain(lane: &LaneRef) {
    for _ in 0..8 {
        match lane.call(LaneMsg::Collect, None).await {
            Ok(CallResult::Success(Collected::Result(event))) => {
                let _ = lane.cast(LaneMsg::HandedOut(event.turn));
            }
            _ => return,
        }
    }
}

/// Waits for turn `turn` of `role` to end; earlier results are handed
/// out on the way. The result itself is handed out by [`handed_out`]
/// once the fleet has saved what it did with it. Each higher context
/// figure the turn reports while it runs goes to `on_context`.
pub async fn wait(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    turn: u32,
    on_context: &(dyn Fn(f64) + Send + Sync),
) -> TurnEnd {
    if let Some(host) = remote::host_of(spec, role) {
        return remote::wait(ctx, spec, role, &host, turn, on_context).await;
    }
    let mut epoch = ctx.mail_epoch.clone();
    let mut context = ContextWatch::default();
    loop {
        epoch.borrow_and_update();
        context.look(ctx, &spec.lane_of(role), turn, on_context);
        let Some(lane) = lane_of(ctx, spec, role).await else {
            return failed(format!("the lane {} is gone", spec.lane_of(role)));
        };
        match lane.call(LaneMsg::Collect, None).await {
            Ok(CallResult::Success(Collected::Result(event))) if event.turn < turn => {
                let _ = lane.cast(LaneMsg::HandedOut(event.turn));
                continue;
            }
            Ok(CallResult::Success(Collected::Result(event))) => return end_of(event.kind),
            Ok(CallResult::Success(Collected::Nothing)) => {
                return failed(format!(
                    "turn {turn} of {} left no result",
                    spec.lane_of(role)
                ));
            }
            _ => {}
        }
        let _ = tokio::time::timeout(LOOK_AGAIN, epoch.changed()).await;
    }
}

/// The context figures of a running turn, read from its lane's event log.
#[derive(Default)]
struct ContextWatch {
    /// The last event read.
    after: u64,
    /// The highest figure told.
    told: f64,
}

impl ContextWatch {
    /// Tells `on_context` of a figure of turn `turn` higher than any told.
    fn look(
        &mut self,
        ctx: &HostContext,
        lane: &str,
        turn: u32,
        on_context: &(dyn Fn(f64) + Send + Sync),
    ) {
        let Ok(events) = ctx.store.lane_events(lane, self.after, 10_000) else {
            return;
        };
        let mut highest = None;
        for event in &events {
            self.after = self.after.max(event.seq);
            if let EventKind::Usage {
                context_used_pct: Some(pct),
                ..
            } = event.kind
                && event.turn == turn
                && pct.is_finite()
                && pct > self.told
            {
                self.told = pct;
                highest = Some(pct);
            }
        }
        if let Some(pct) = highest {
            on_context(pct);
        }
    }
}

/// Interrupts `role`'s running turn, on whichever host it runs.
pub async fn interrupt(ctx: &Arc<HostContext>, spec: &FleetSpec, role: &str) {
    if let Some(host) = remote::host_of(spec, role) {
        return remote::interrupt(ctx, spec, role, &host).await;
    }
    if let Some(lane) = lane_of(ctx, spec, role).await {
        let _ = lane.call(LaneMsg::Interrupt, None).await;
    }
}

/// The fleet saved what it did with turn `turn` of `role`: hand it out.
pub async fn handed_out(ctx: &Arc<HostContext>, spec: &FleetSpec, role: &str, turn: u32) {
    if let Some(host) = remote::host_of(spec, role) {
        // A call through the hub: never in the fleets' actor's way.
        let (ctx, spec, role) = (ctx.clone(), spec.clone(), role.to_owned());
        tokio::spawn(async move { remote::collect(&ctx, &spec, &role, &host, turn).await });
        return;
    }
    if let Some(lane) = lane_of(ctx, spec, role).await {
        let _ = lane.cast(LaneMsg::HandedOut(turn));
    }
}

/// Interrupts every member's running turn.
pub async fn interrupt_all(ctx: &Arc<HostContext>, spec: &FleetSpec) {
    for (role, _) in spec.members() {
        interrupt(ctx, spec, &role).await;
    }
}

/// A lane's `turn.completed` event as the fleet's run needs it.
pub(super) fn end_of(kind: EventKind) -> TurnEnd {
    let EventKind::TurnCompleted(r) = kind else {
        return failed("the lane reported no turn result".into());
    };
    let ok = r.status == TurnStatus::Completed;
    let said = [r.error.as_deref(), r.result.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n");
    let resets_at_ms = (!ok)
        .then(|| resets_at(&said, r.finished_at.millis()))
        .flatten();
    let text = if ok {
        r.result.unwrap_or_default()
    } else {
        r.error.or(r.result).unwrap_or_default()
    };
    TurnEnd {
        ok,
        text,
        class: r.error_class.and_then(|c| {
            serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
        }),
        tokens: r.usage.input.saturating_add(r.usage.output),
        cost: r.cost_usd,
        context_used_pct: r.context_used_pct,
        lost: r.status == TurnStatus::Lost,
        resets_at_ms,
        offline: None,
    }
}

fn failed(text: String) -> TurnEnd {
    TurnEnd {
        ok: false,
        text,
        ..TurnEnd::default()
    }
}
