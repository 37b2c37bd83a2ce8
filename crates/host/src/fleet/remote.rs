//! Fleet members on other hosts (`fleet start --host`): their lanes are
//! remote lanes, driven with `remote.call` through the hub like `lane ...
//! --host`, owned by the fleet's own peer. A remote worker's step is
//! judged on the facts its own host reports (`lane.files`: what is at each
//! artifact's path in the lane's directory there), and the artifacts of an
//! accepted step are brought home into the fleet's directory, where the
//! task's final judgement and checks see them. Decides nothing about the
//! fleet; [`super::members`] calls in here for a member with a host.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::fleet::record::RemoteSeen;
use flotilla_actors::fleet::{
    ArtifactSeen, FleetRecord, FleetSpec, MemberSpec, Shortfall, Task, TurnEnd, Verdict, judge,
};
use flotilla_actors::lane::LanePhase;
use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneEventsReply, LaneFile, LaneFileState, LaneFilesReply,
    LaneStartReply, LaneView, RemoteCallArgs,
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
async fn call<T: DeserializeOwned>(
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
pub(super) async fn begin(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    member: &MemberSpec,
    host: &HostName,
    turn: (String, bool, Option<String>),
) -> Result<u32, String> {
    let (prompt, fresh, model) = turn;
    let exists = status(ctx, spec, role, host).await.map_err(|e| e.message)?;
    let reply: LaneStartReply = if exists.is_some() {
        let args =
            json!({"name": spec.lane_of(role), "prompt": prompt, "fresh": fresh, "model": model});
        call(ctx, spec, host, "lane.resume", args).await
    } else {
        let mut member = member.clone();
        if model.is_some() {
            member.model = model;
        }
        let mut args = super::members::start_json(spec, role, &member, prompt);
        args["cwd"] = Value::Null;
        call(ctx, spec, host, "lane.start", args).await
    }
    .map_err(|e| format!("{host}: {}", e.message))?;
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

/// Judges a remote worker's step on what its host has at each artifact's
/// path, and brings the artifacts of an accepted step home.
pub(super) async fn judge_step(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
    task: &Task,
) -> Verdict {
    let paths: Vec<&str> = task.artifacts.iter().map(|a| a.path.as_str()).collect();
    let args = json!({"name": spec.lane_of(role), "paths": paths});
    let reply: LaneFilesReply = match call(ctx, spec, host, "lane.files", args).await {
        Ok(reply) => reply,
        Err(e) => {
            let why = format!("{host} could not be asked for it: {}", e.message);
            return unreadable(task, &why);
        }
    };
    let seen: Vec<ArtifactSeen> = task
        .artifacts
        .iter()
        .map(|a| match reply.files.iter().find(|f| f.path == a.path) {
            Some(file) => seen_of(file),
            None => ArtifactSeen::Unreadable(format!("{host} did not answer for it")),
        })
        .collect();
    let verdict = judge(task, &seen, &[]);
    if matches!(verdict, Verdict::Accepted(_)) {
        let dir = PathBuf::from(&spec.dir);
        for (artifact, seen) in task.artifacts.iter().zip(&seen) {
            if let ArtifactSeen::Text(text) = seen
                && let Err(why) = bring_home(&dir, &artifact.path, text)
            {
                return Verdict::Bounced(vec![Shortfall::Unreadable {
                    path: artifact.path.clone(),
                    why: format!("it could not be brought home into the fleet's directory: {why}"),
                }]);
            }
        }
    }
    verdict
}

fn unreadable(task: &Task, why: &str) -> Verdict {
    Verdict::Bounced(
        task.artifacts
            .iter()
            .map(|a| Shortfall::Unreadable {
                path: a.path.clone(),
                why: why.to_owned(),
            })
            .collect(),
    )
}

/// What a `lane.files` answer says is at one path.
fn seen_of(file: &LaneFile) -> ArtifactSeen {
    match (file.state, &file.text) {
        (LaneFileState::Text, Some(text)) => ArtifactSeen::Text(text.clone()),
        (LaneFileState::Missing, _) => ArtifactSeen::Missing,
        _ => ArtifactSeen::Unreadable(
            file.why
                .clone()
                .unwrap_or_else(|| "its host could not read it".to_owned()),
        ),
    }
}

/// Writes `text` at `rel` in `dir` (a new file, then renamed over the
/// old), never outside `dir`: a parent that leads out of it is refused.
fn bring_home(dir: &Path, rel: &str, text: &str) -> Result<(), String> {
    let root = dir.canonicalize().map_err(|e| e.to_string())?;
    let target = root.join(rel);
    let parent = target.parent().ok_or("it names no file")?;
    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    let real_parent = parent.canonicalize().map_err(|e| e.to_string())?;
    if !real_parent.starts_with(&root) {
        return Err(format!(
            "its folder leads out of it (to {})",
            real_parent.display()
        ));
    }
    let file = target.file_name().ok_or("it names no file")?;
    let fresh = real_parent.join(format!(".{}.from-host", file.to_string_lossy()));
    std::fs::write(&fresh, text).map_err(|e| e.to_string())?;
    std::fs::rename(&fresh, real_parent.join(file)).map_err(|e| {
        let _ = std::fs::remove_file(&fresh);
        e.to_string()
    })
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

#[cfg(test)]
mod tests {
    use super::bring_home;

    #[test]
    fn an_artifact_comes_home_but_never_through_a_folder_that_leads_out() {
        let home = tempfile::tempdir().expect("dir");
        let outside = tempfile::tempdir().expect("dir");
        bring_home(home.path(), "worker-1/report.md", "hello").expect("written");
        let text = std::fs::read_to_string(home.path().join("worker-1/report.md")).expect("read");
        assert_eq!(text, "hello");
        bring_home(home.path(), "worker-1/report.md", "again").expect("replaced");
        let text = std::fs::read_to_string(home.path().join("worker-1/report.md")).expect("read");
        assert_eq!(text, "again");
        std::os::unix::fs::symlink(outside.path(), home.path().join("out")).expect("link");
        let why = bring_home(home.path(), "out/x.md", "escape").expect_err("refused");
        assert!(why.contains("leads out"), "{why}");
        assert!(
            !outside.path().join("x.md").exists(),
            "nothing written outside"
        );
    }
}
