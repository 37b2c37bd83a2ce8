//! Stalled turns. The watchdog asks each lane to check its turn: one that
//! made no progress (no output and no CPU time of its process tree) for
//! `lane_stall_secs` (a process that was stopped, a CLI stuck on a dead
//! connection) is killed and started again in place, through the CLI's
//! native resume when the killed attempt named a session (else with the
//! turn's prompt again, as it began), in a fresh directory, and the lane's
//! events say so. After `lane_stall_restarts` restarts the turn fails with
//! the reason. An exec lane's command runs again only with
//! `--restart-on-stall`, and an agent CLI whose model endpoint is
//! unreachable waits for the network rather than spend a restart.

use flotilla_actors::lane::TurnStatus;
use flotilla_actors::lane::events::EventKind;
use flotilla_actors::protocol::ControlError;
use rustix::process::Signal;

use super::cli::{self, Outcome, TurnContext};
use super::connector::ConnectorMsg;
use super::lane::{LaneRef, LaneState};
use super::launch::launch;
use super::process::TurnFiles;
use super::turn::{finish, write_prompt};

/// The prompt of a turn restarted through the CLI's resume.
const CONTINUE: &str = "Continue the task you were working on from where you stopped.";

/// Checks the running turn for a stall; kills it for a restart, or gives up.
pub(super) async fn check(state: &mut LaneState) {
    let Some(running) = state.record.running.clone() else {
        return;
    };
    let limit = state.ctx.config.lane_stall();
    if state.stopping.is_some() || state.restarting || state.last_progress.elapsed() < limit {
        return;
    }
    let max = state.ctx.config.lane_stall_restarts;
    let secs = limit.as_secs_f64();
    if let Some(wait) = hold_off(state, secs).await {
        // Noted, not restarted: look again after another full period.
        state.last_progress = std::time::Instant::now();
        state
            .log(running.turn, vec![EventKind::Note { text: wait }])
            .await;
        return;
    }
    let text = if running.restarts >= max {
        let why = format!(
            "no output and no CPU time for {secs:.0}s; {max} restart(s) did not help, gave up"
        );
        state.stopping = Some((TurnStatus::Failed, format!("watchdog: {why}")));
        let _ = state.record.mark_interrupted();
        format!("watchdog: {why}")
    } else {
        state.restarting = true;
        format!(
            "watchdog: no output and no CPU time for {secs:.0}s; restarting the turn in place ({} of {max})",
            running.restarts + 1
        )
    };
    state
        .log(running.turn, vec![EventKind::Note { text }])
        .await;
    state.save().await;
    if let Some(c) = &state.connector {
        let _ = c.cast(ConnectorMsg::Escalate(
            Signal::KILL,
            super::lane::INTERRUPT_GRACE,
        ));
    }
}

/// Why a stalled turn is left as it is for now, if it is: an exec lane's
/// command is never run again unless its lane was started with
/// `--restart-on-stall` (a quiet `sleep` is not a stall), and an agent CLI
/// whose model endpoint is unreachable waits for the network instead of
/// spending a restart that would stall again.
async fn hold_off(state: &LaneState, secs: f64) -> Option<String> {
    let spec = &state.record.spec;
    if spec.cli == flotilla_actors::lane::CliKind::Exec && !spec.restart_on_stall {
        return Some(format!(
            "watchdog: no output and no CPU time for {secs:.0}s; an exec lane's command is not \
             run again unless the lane was started with --restart-on-stall (its --timeout bounds it)"
        ));
    }
    let endpoint = super::endpoint::of(spec, |k| std::env::var(k).ok())?;
    if super::endpoint::reachable(&endpoint).await {
        return None;
    }
    Some(format!(
        "watchdog: no progress for {secs:.0}s, but the model endpoint {endpoint} is unreachable; \
         waiting for the network before restarting (no restart spent)"
    ))
}

/// How a stalled turn starts again.
#[derive(Debug, PartialEq, Eq)]
struct Restart {
    /// The native session to resume, if any.
    session: Option<String>,
    /// Ask it to continue, rather than giving the turn's prompt again.
    continue_prompt: bool,
}

/// A session the killed attempt reported itself holds the turn's prompt:
/// continue it. Without one the turn runs again as it began: its prompt,
/// resuming the lane's session only when the turn resumed it (an earlier
/// turn's session knows nothing of this turn's prompt).
fn restart_plan(
    own: Option<String>,
    supports_resume: bool,
    turn_resumes: bool,
    lane_session: Option<String>,
) -> Restart {
    match own {
        Some(id) if supports_resume => Restart {
            session: Some(id),
            continue_prompt: true,
        },
        _ => Restart {
            session: lane_session.filter(|_| supports_resume && turn_resumes),
            continue_prompt: false,
        },
    }
}

/// The killed turn's process ended: start it again in place.
pub(super) async fn relaunch(state: &mut LaneState, myself: &LaneRef, outcome: Outcome) {
    state.restarting = false;
    state.connector = None;
    let Some(connector) = cli::connector(state.record.spec.cli) else {
        return;
    };
    let Some(running) = state.record.running.as_mut() else {
        return;
    };
    let restart = restart_plan(
        outcome.native_session_id,
        connector.supports_resume(),
        running.resume,
        state.record.native_session.clone(),
    );
    let first = TurnFiles::attempt(
        &state.ctx.home.state_dir,
        state.record.spec.name.as_str(),
        running.turn,
        0,
    );
    running.restarts += 1;
    running.pid = None;
    running.pid_start = None;
    running.output_offset = 0;
    let (turn, attempt) = (running.turn, running.restarts);
    let (resume, session) = (restart.session.is_some(), restart.session);
    let prompt = if restart.continue_prompt {
        CONTINUE.to_owned()
    } else {
        std::fs::read_to_string(first.prompt()).unwrap_or_default()
    };
    let files = TurnFiles::attempt(
        &state.ctx.home.state_dir,
        state.record.spec.name.as_str(),
        turn,
        attempt,
    );
    let mcp = super::mcp_server_of(&state.ctx, &state.record.spec);
    let planned = write_prompt(&files, &prompt)
        .map_err(|e| format!("cannot write the prompt: {e}"))
        .and_then(|()| {
            let program = state
                .ctx
                .config
                .cli_program(state.record.spec.cli, connector.program());
            connector.command(&TurnContext {
                spec: &state.record.spec,
                program: &program,
                resume,
                native_session: session.as_deref(),
                prompt: &prompt,
                prompt_file: &files.prompt(),
                flotilla: mcp.as_ref(),
            })
        });
    match planned {
        Ok(plan) => {
            state.last_progress = std::time::Instant::now();
            state.save().await;
            let how = if restart.continue_prompt {
                "through the CLI's resume"
            } else {
                "with the turn's prompt again"
            };
            state
                .log(
                    turn,
                    vec![EventKind::Note {
                        text: format!("restarted the turn {how}"),
                    }],
                )
                .await;
            if let Err(e) = launch(state, myself, files, plan, connector, Vec::new()).await {
                tracing::error!(lane = %state.record.spec.name, error = %e, "could not save the lane");
            }
        }
        Err(e) => {
            let failed = Outcome {
                failed: true,
                error: Some(ControlError::internal(e).message),
                ..Outcome::default()
            };
            finish(state, failed, None).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_continues_only_a_session_that_holds_the_turns_prompt() {
        let lane = || Some("turn-1-session".to_owned());
        let own = restart_plan(Some("mine".into()), true, true, lane());
        assert_eq!(own.session.as_deref(), Some("mine"));
        assert!(own.continue_prompt);
        // Point 2.ii: turn 2 stalled before naming a session: it runs again
        // with its prompt, not "continue" in turn 1's session.
        let resumed = restart_plan(None, true, true, lane());
        assert_eq!(resumed.session.as_deref(), Some("turn-1-session"));
        assert!(!resumed.continue_prompt);
        let fresh = restart_plan(None, true, false, lane());
        assert_eq!(fresh.session, None);
        assert!(!fresh.continue_prompt);
        let no_resume = restart_plan(Some("mine".into()), false, true, lane());
        assert_eq!(
            (no_resume.session, no_resume.continue_prompt),
            (None, false)
        );
    }
}
