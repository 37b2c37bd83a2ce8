//! A person stepping into a lane (`lane.attach`, `lane.release`), as the
//! lane actor carries it out: takes the hold (waiting for or interrupting
//! the running turn), answers with the interactive session to run, keeps
//! turns from starting while held (the first one asked waits with its
//! number), and ends the hold at the release or when the holding process
//! is gone, then starts the waiting turn. The rules are
//! `flotilla_actors::lane::hold`; the command line is [`super::attach_plan`].
//!
//! The hold lives in the lane's directory (`hold.json`, owner-only), not in
//! the store: a daemon restart keeps it while its holder lives.

use std::path::PathBuf;

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::hold::{HoldError, Holder, LaneHold, steps_in};
use flotilla_actors::lane::{LanePhase, TurnStatus};
use flotilla_actors::model::Timestamp;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneAttachArgs, LaneAttachReply, LaneReleaseArgs, LaneView,
};
use ractor::RpcReplyPort;

use super::lane::{LaneRef, LaneState};
use super::process::is_same_process;
use super::turn;

type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// An attach waiting for the running turn to end.
#[derive(Debug)]
pub(super) struct PendingAttach {
    reply: Reply<LaneAttachReply>,
    waited_for: Option<u32>,
    interrupted: bool,
}

fn file(state: &LaneState) -> PathBuf {
    let name = state.record.spec.name.as_str();
    state
        .ctx
        .home
        .state_dir
        .join("lanes")
        .join(name)
        .join("hold.json")
}

/// The hold kept on disk, if any (a damaged file counts as none).
pub(super) fn load(state: &LaneState) -> Option<LaneHold> {
    let text = std::fs::read_to_string(file(state)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes (or removes) the hold before anyone is told of it.
async fn save(state: &LaneState) {
    let path = file(state);
    let done = match &state.hold {
        Some(hold) => serde_json::to_vec(hold)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                let dir = path.parent().map(PathBuf::from).unwrap_or_default();
                crate::home::create_private(&dir).map_err(std::io::Error::other)?;
                flotilla_actors::private_file::write(&path, &bytes)
            }),
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    };
    if let Err(e) = done {
        tracing::error!(lane = %state.record.spec.name, error = %e, "could not save the lane's hold");
    }
}

fn refused(e: HoldError) -> ControlError {
    let code = match e {
        HoldError::NoResume { .. } => ErrorCode::BadRequest,
        _ => ErrorCode::Conflict,
    };
    ControlError::new(code, e.to_string())
}

async fn note(state: &LaneState, text: String) {
    state
        .log(state.record.turns, vec![EventKind::Note { text }])
        .await;
}

/// `lane.attach`: answered at once, or once the running turn has ended.
pub(super) async fn attach(
    state: &mut LaneState,
    args: LaneAttachArgs,
    reply: Reply<LaneAttachReply>,
) {
    if args.print {
        let cli = state.record.spec.cli;
        let r = if !steps_in(cli) {
            Err(refused(HoldError::NoResume {
                lane: state.record.spec.name.to_string(),
                cli: cli.to_string(),
            }))
        } else {
            match LaneHold::session_of(&state.record) {
                Ok(session) => super::attach_plan::reply(state, session, false, 0),
                Err(e) => Err(refused(e)),
            }
        };
        let _ = reply.send(r);
        return;
    }
    let Some(pid) = args.pid else {
        let e = ControlError::new(
            ErrorCode::BadRequest,
            "lane.attach needs the holding process's pid (or print)",
        );
        let _ = reply.send(Err(e));
        return;
    };
    let holder = Holder {
        name: args.holder.unwrap_or_else(|| format!("pid {pid}")),
        pid,
        pid_start: args.pid_start,
    };
    let now = Timestamp::now();
    let hold = match LaneHold::claim(state.hold.as_ref(), &state.record, holder, now) {
        Ok(hold) => hold,
        Err(e) => {
            let _ = reply.send(Err(refused(e)));
            return;
        }
    };
    let who = hold.holder.name.clone();
    state.hold = Some(hold);
    save(state).await;
    note(
        state,
        format!("held by {who} (lane attach): no turn starts until it ends"),
    )
    .await;
    let running = state.record.running.as_ref().map(|t| t.turn);
    let mut interrupted = false;
    if running.is_some() && args.now {
        interrupted = state
            .interrupt(TurnStatus::Interrupted, "interrupted for lane attach")
            .await
            .is_ok();
    }
    state.attach = Some(PendingAttach {
        reply,
        waited_for: running,
        interrupted,
    });
    answer(state).await;
}

/// Answers a waiting attach once no turn runs; an attach that cannot go
/// on (no session left) gives the hold back.
pub(super) async fn answer(state: &mut LaneState) {
    if state.record.phase == LanePhase::Running {
        return;
    }
    let Some(pending) = state.attach.take() else {
        return;
    };
    let Some(pid) = state.hold.as_ref().map(|h| h.holder.pid) else {
        let e = ControlError::new(ErrorCode::Conflict, "the hold ended before the turn did");
        let _ = pending.reply.send(Err(e));
        return;
    };
    let r = match LaneHold::session_of(&state.record) {
        Ok(session) => super::attach_plan::reply(state, session, true, pid),
        Err(e) => Err(refused(e)),
    };
    let r = r.map(|mut r| {
        r.waited_for = pending.waited_for;
        r.interrupted = pending.interrupted;
        r
    });
    if r.is_err() {
        end(state, "the attach could not go on").await;
    }
    let _ = pending.reply.send(r);
}

/// `lane.release` from the holding process: the hold ends. Idempotent: a
/// lane held by no one is simply shown.
pub(super) async fn release(
    state: &mut LaneState,
    myself: &LaneRef,
    args: &LaneReleaseArgs,
) -> Result<LaneView, ControlError> {
    if let Some(hold) = &state.hold {
        if !hold.held_by(args.pid, args.pid_start) {
            let e = HoldError::NotHolder(state.record.spec.name.to_string());
            return Err(refused(e));
        }
        end(state, "the attach ended").await;
        start_waiting(state, myself).await;
    }
    Ok(state.view())
}

/// Each tick: a hold whose process is gone (killed, or never released)
/// ends, and its waiting turn starts.
pub(super) async fn check_holder(state: &mut LaneState, myself: &LaneRef) {
    let Some(holder) = state.hold.as_ref().map(|h| h.holder.clone()) else {
        return;
    };
    if is_same_process(holder.pid, holder.pid_start) {
        return;
    }
    let why = format!("its holder (pid {}) is gone", holder.pid);
    end(state, &why).await;
    start_waiting(state, myself).await;
}

/// Ends the hold; the waiting turn stays in `state.released` for
/// [`start_waiting`]. The end counts as activity for auto-archive.
async fn end(state: &mut LaneState, why: &str) {
    let Some(hold) = state.hold.take() else {
        return;
    };
    state.released = hold.waiting;
    save(state).await;
    if state.record.phase == LanePhase::Idle {
        state.record.finished_at = Some(Timestamp::now());
        state.save().await;
    }
    note(state, format!("hold by {} ended: {why}", hold.holder.name)).await;
}

async fn start_waiting(state: &mut LaneState, myself: &LaneRef) {
    let Some(waiting) = state.released.take() else {
        return;
    };
    match turn::begin(state, myself, waiting.prompt, waiting.resume).await {
        Ok(t) if t == waiting.turn => {}
        Ok(t) => {
            let text = format!(
                "the turn that waited for the release as turn {} ran as turn {t}",
                waiting.turn
            );
            note(state, text).await;
        }
        Err(e) => {
            let text = format!(
                "the turn that waited for the release could not start: {}",
                e.message
            );
            note(state, text).await;
        }
    }
}

/// A turn asked for: it begins, or, while the lane is held, waits for the
/// release with its number.
pub(super) async fn begin_or_wait(
    state: &mut LaneState,
    myself: &LaneRef,
    prompt: String,
    resume: bool,
) -> Result<u32, ControlError> {
    let Some(hold) = state.hold.as_mut() else {
        return turn::begin(state, myself, prompt, resume).await;
    };
    let turn = hold
        .ask_turn(&state.record, prompt, resume)
        .map_err(|e| ControlError::new(ErrorCode::Conflict, e.to_string()))?;
    save(state).await;
    note(
        state,
        format!("turn {turn} waits for the lane's hold to end"),
    )
    .await;
    Ok(turn)
}
