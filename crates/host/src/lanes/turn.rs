//! The life of one turn, as the lane actor carries it out: begin (files,
//! command, events, connector), finish (result, events, owner), recovery
//! after a daemon restart (adopt or report lost), and the stop at shutdown.

use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::lane::{LanePhase, Permissions, TurnStatus};
use flotilla_actors::model::Timestamp;
use flotilla_actors::protocol::{ControlError, ErrorCode};
use ractor::Actor;
use rustix::process::Signal;

use super::cli::{self, Outcome, TurnContext};
use super::connector::{Connector, ConnectorArgs, Launch};
use super::lane::{INTERRUPT_GRACE, LaneRef, LaneState};
use super::launch::launch;
use super::process::{TurnFiles, group_alive, group_is_the_turns, is_same_process, signal_group};
use crate::home::create_private;

pub(super) fn write_prompt(files: &TurnFiles, prompt: &str) -> std::io::Result<()> {
    create_private(&files.dir).map_err(std::io::Error::other)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(files.prompt())?;
    std::io::Write::write_all(&mut f, prompt.as_bytes())
}

/// Starts a turn; returns its number.
pub(super) async fn begin(
    state: &mut LaneState,
    myself: &LaneRef,
    prompt: String,
    resume: bool,
) -> Result<u32, ControlError> {
    let spec = state.record.spec.clone();
    let connector = cli::connector(spec.cli).ok_or_else(|| {
        ControlError::new(
            ErrorCode::BadRequest,
            format!("no connector for {} in this build", spec.cli),
        )
        .with_hint("see `flotilla lane doctor`")
    })?;
    if resume && !connector.supports_resume() {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!("resume is not supported by this CLI ({})", spec.cli),
        )
        .with_hint("start a new lane instead"));
    }
    let files = TurnFiles::new(
        &state.ctx.home.state_dir,
        spec.name.as_str(),
        state.record.turns + 1,
    );
    let prompt = state.record.with_asides(prompt);
    write_prompt(&files, &prompt)
        .map_err(|e| ControlError::internal(format!("cannot write the prompt: {e}")))?;
    let program = state.ctx.config.cli_program(spec.cli, connector.program());
    let native = state.record.native_session.clone();
    let gone = resume && state.record.session_gone();
    let mcp = super::mcp_server_of(&state.ctx, &spec);
    let turn_ctx = TurnContext {
        spec: &spec,
        program: &program,
        resume: resume && state.record.turns > 0 && !gone,
        native_session: native.as_deref(),
        prompt: &prompt,
        prompt_file: &files.prompt(),
        flotilla: mcp.as_ref(),
    };
    let plan = connector
        .command(&turn_ctx)
        .map_err(|m| ControlError::new(ErrorCode::BadRequest, m))?;
    let turn = state
        .record
        .begin_turn(resume, Timestamp::now())
        .map_err(|e| ControlError::new(ErrorCode::Conflict, e.to_string()))?;
    state.record.asides_given();
    state.stopping = None;
    state.archive_after_turn = false;
    state.last_progress = Instant::now();
    let mut kinds = Vec::new();
    if turn.turn == 1 {
        kinds.push(EventKind::LaneStarted {
            cli: spec.cli,
            cwd: spec.cwd.clone(),
            model: spec.model.clone(),
            permissions: spec.permissions,
        });
    }
    if spec.permissions == Permissions::Bypass {
        kinds.push(EventKind::Note {
            text: "permissions: bypass: the CLI may run any command and edit any file".into(),
        });
    }
    if gone {
        kinds.push(EventKind::Note {
            text: "the CLI said the native session to resume no longer exists; this turn starts a new session".into(),
        });
    }
    kinds.extend(
        plan.notes
            .iter()
            .map(|n| EventKind::Note { text: n.clone() }),
    );
    kinds.push(EventKind::TurnStarted {
        prompt_bytes: prompt.len() as u64,
        resume: turn.resume,
        pid: None,
    });
    // The record (the turn running), its first events and its shim's pid:
    // one commit. A lane's first turn is also where its record is first
    // stored: one that cannot be stored does not run (the start is refused).
    if let Err(e) = launch(state, myself, files, plan, connector, kinds).await {
        if turn.turn == 1 {
            state
                .record
                .finish_turn(state.result(Outcome::default(), None));
            return Err(crate::registry::store_error(e));
        }
        tracing::error!(lane = %spec.name, error = %e, "could not save the lane");
    }
    Ok(turn.turn)
}

/// A message to a persistent lane: the prompt of its next turn, which
/// answers `from` (the messages it holds).
pub(super) async fn deliver(
    state: &mut LaneState,
    myself: &LaneRef,
    prompt: String,
    from: Vec<flotilla_actors::names::MessageId>,
) {
    if state.record.phase == LanePhase::Running || state.hold.is_some() {
        state.record.queued.push(prompt);
        state.record.queued_from.extend(from);
        state.save().await;
        return;
    }
    // The last result stays collectable: `wait` hands out the oldest first.
    if let Some(result) = state.record.collect() {
        let turn = state.record.turns;
        state.shelf.insert(turn, result.clone());
        state
            .save_with(turn, Vec::new(), |w| w.shelve = Some((turn, result)))
            .await;
    }
    if state.record.wake() {
        state
            .log(
                state.record.turns,
                vec![EventKind::Note {
                    text: "a message woke the archived lane".into(),
                }],
            )
            .await;
    }
    let resume = cli::connector(state.record.spec.cli).is_some_and(|c| c.supports_resume());
    state.record.answer(from);
    if let Err(e) = begin(state, myself, prompt, resume).await {
        state.record.answer(Vec::new());
        tracing::warn!(lane = %state.record.spec.name, error = %e, "a message could not start a turn");
    }
}

/// Starts the next turn with the messages that arrived while the lane was
/// busy, once it is idle and not held. They stay queued (on disk) until then, so a
/// daemon restart keeps them.
pub(super) async fn start_queued(state: &mut LaneState, myself: &LaneRef) {
    if state.hold.is_some() {
        return;
    }
    let Some((prompt, from)) = state.record.take_queued() else {
        return;
    };
    deliver(state, myself, prompt, from).await;
}

/// The turn's process ended: the watchdog's restart starts it again, unless
/// an interrupt or the deadline came while its kill was under way (the turn
/// then ends with that status; a relaunch would run unbounded).
pub(super) async fn exited(
    state: &mut LaneState,
    myself: &LaneRef,
    outcome: Outcome,
    exit: Option<i32>,
) {
    if std::mem::take(&mut state.restarting) && state.stopping.is_none() {
        super::stall::relaunch(state, myself, outcome).await;
    } else {
        finish(state, outcome, exit).await;
    }
}

/// Records the end of the running turn: the record, its `turn.completed`
/// event and the notice owed to the owner in one transaction, then tells
/// the owner (a crash before that leaves the notice owed, paid at restart).
pub(super) async fn finish(state: &mut LaneState, outcome: Outcome, exit: Option<i32>) {
    let Some(running) = state.record.running.clone() else {
        return;
    };
    let result = state.result(outcome, exit);
    if result.status == TurnStatus::Completed {
        commit_left_work(state, running.turn).await;
    }
    state.record.finish_turn(result.clone());
    state.connector = None;
    state.stopping = None;
    let (turn, completed) = (running.turn, EventKind::TurnCompleted(result.clone()));
    state
        .save_with(turn, vec![completed], |w| {
            w.owe_notice = Some((turn, result.clone()))
        })
        .await;
    state.owed.insert(turn, result);
    crate::crash_point::reached(&state.ctx, "lane.finish");
    state.pay_notices();
    state.pay_replies().await;
    if state.archive_after_turn {
        state.archive_after_turn = false;
        state.archive_now().await;
    }
}

/// In a claim's worktree, commits what the completed turn left there and
/// notes it in the lane's events.
async fn commit_left_work(state: &LaneState, turn: u32) {
    let lane =
        flotilla_actors::names::PeerId::new(state.ctx.host.clone(), state.record.spec.name.clone())
            .to_string();
    let cwd = &state.record.spec.cwd;
    if let Some(text) =
        crate::governance::turns::commit_left_work(&state.ctx, cwd, &lane, turn).await
    {
        state.log(turn, vec![EventKind::Note { text }]).await;
    }
}

/// After a (re)start of the lane actor: adopt a turn whose process still
/// runs (or finished while the daemon was down), else report it lost.
pub(super) async fn recover(state: &mut LaneState, myself: &LaneRef) {
    let Some(running) = state.record.running.clone() else {
        return;
    };
    let files = TurnFiles::attempt(
        &state.ctx.home.state_dir,
        state.record.spec.name.as_str(),
        running.turn,
        running.restarts,
    );
    let exit_code = files.read_exit();
    let alive = running
        .pid
        .is_some_and(|pid| is_same_process(pid, running.pid_start));
    if let (Some(pid), true) = (running.pid, alive || exit_code.is_some()) {
        let connector = cli::connector(state.record.spec.cli);
        if let Some(connector) = connector {
            let args = ConnectorArgs {
                files: files.clone(),
                launch: Launch::Adopt {
                    pid,
                    start: running.pid_start,
                    offset: running.output_offset,
                },
                parser: connector.parser(&state.record.spec, &state.ctx.config.context_windows),
                lane: myself.clone(),
            };
            if let Ok((c, _)) = Actor::spawn_linked(None, Connector, args, myself.get_cell()).await
            {
                state.connector = Some(c);
                state.adopted = true;
                let note = format!("adopted the running turn after a daemon restart (pid {pid})");
                state
                    .log(running.turn, vec![EventKind::Note { text: note }])
                    .await;
                return;
            }
        }
    }
    let why = match running.pid {
        Some(pid) => format!("the turn's process (pid {pid}) was gone when the daemon restarted"),
        None => "the daemon stopped before the turn's process started".to_owned(),
    };
    // The shim is gone, but what it started may not be: its process group
    // outlives it while any member lives. After a reboot or a pid wrap the
    // number may lead someone else's group, which is left alone.
    if let Some(pid) = running.pid
        && group_is_the_turns(pid, running.pid_start)
    {
        signal_group(pid, Signal::KILL);
    }
    state.stopping = Some((TurnStatus::Lost, why));
    let outcome =
        super::on_disk::failed_with_usage(&state.record.spec, &state.ctx.config, &files, exit_code);
    finish(state, outcome, exit_code).await;
}

/// At daemon shutdown: no process outlives its lane.
pub(super) async fn stop_for_shutdown(state: &mut LaneState) {
    let Some(running) = state.record.running.clone() else {
        return;
    };
    if let Some(c) = state.connector.take() {
        c.stop(None);
    }
    if let Some(pid) = running.pid {
        for sig in [Signal::INT, Signal::TERM, Signal::KILL] {
            if !group_is_the_turns(pid, running.pid_start) {
                break;
            }
            signal_group(pid, sig);
            wait_gone(pid, INTERRUPT_GRACE).await;
        }
    }
    state.stopping = Some((TurnStatus::Interrupted, "the daemon stopped".into()));
    // The exit of the attempt that ran: a watchdog restart has its own files.
    let files = TurnFiles::attempt(
        &state.ctx.home.state_dir,
        state.record.spec.name.as_str(),
        running.turn,
        running.restarts,
    );
    let exit = files.read_exit();
    let outcome =
        super::on_disk::failed_with_usage(&state.record.spec, &state.ctx.config, &files, exit);
    finish(state, outcome, exit).await;
}

async fn wait_gone(pid: u32, limit: Duration) {
    let deadline = Instant::now() + limit;
    while group_alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
