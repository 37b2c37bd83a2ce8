//! `flotilla lane attach NAME`: a person steps into a lane. This process
//! asks the daemon to hold the lane (`lane.attach`, waiting for or
//! interrupting its running turn), runs the CLI's own interactive session
//! on the lane's native conversation as a child in this terminal, then
//! releases the hold (`lane.release`) however the child ended. Ctrl-C is
//! the child's (this process ignores it while the child runs); SIGTERM or
//! SIGHUP is passed on to the child, and the hold is released after it
//! ends. If this process dies anyway, the daemon ends the hold when it sees
//! the process gone. What the session is made of is the daemon's
//! (`lanes::attach_plan`); this module only runs it.

use std::time::{Duration, Instant};

use anyhow::Result;
use flotilla_actors::lane::LanePhase;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::ErrorCode;
use flotilla_actors::protocol::{self as p, LaneAttachReply, LaneStatusArgs};
use flotilla_host::client::ClientError;
use flotilla_host::lanes::process::start_time;
use tokio::signal::unix::{SignalKind, signal};

use super::Env;
use super::lane_client::LaneClient;
use crate::args::LaneAttachArgs;
use crate::exit::{CliError, OK};
use crate::output::{self, outln};

/// Exit code when the interactive CLI could not be started.
const CANNOT_START: u8 = 127;
/// How long the release is retried (the daemon may be restarting).
const RELEASE_PATIENCE: Duration = Duration::from_secs(15);

pub(crate) async fn attach(env: &Env, c: &mut LaneClient, a: LaneAttachArgs) -> Result<u8> {
    if c.is_remote() {
        return Err(CliError::usage(
            "lane attach works on this host's lanes only: the interactive CLI runs in this terminal",
            "run `flotilla lane attach NAME` on the lane's host",
        ));
    }
    let name = PeerName::new(&a.name)?;
    if a.print {
        let reply = c.call(&args(&name, false, true)).await?;
        if env.json {
            output::json(&reply)?;
        } else {
            outln!("{}", command_line(&reply))?;
        }
        return Ok(OK);
    }
    let status = c.call(&LaneStatusArgs { name: name.clone() }).await?;
    if status.phase == LanePhase::Running {
        let how = if a.now {
            "interrupting"
        } else {
            "waiting for the end of"
        };
        eprintln!(
            "flotilla: {how} lane {name}'s turn {}{}",
            status.turns,
            if a.now { "" } else { " (--now interrupts it)" }
        );
    }
    let reply = c.call(&args(&name, a.now, false)).await?;
    eprintln!(
        "flotilla: stepping into lane {} ({} session {}) in {}; its turns wait until you exit",
        reply.lane, reply.cli, reply.native_session_id, reply.cwd
    );
    let code = run_session(&reply).await;
    let view = release(env, &name).await;
    let code = code?;
    if let Some(view) = view {
        if env.json {
            output::json_as(super::lanes::LANE_STATUS_SCHEMA, &view)?;
        } else {
            eprintln!("flotilla: lane {name} carries on (its next turn continues this session)");
        }
    }
    Ok(code)
}

fn args(name: &PeerName, now: bool, print: bool) -> p::LaneAttachArgs {
    let pid = std::process::id();
    let tty = std::fs::read_link("/proc/self/fd/0")
        .ok()
        .map(|t| format!(" on {}", t.display()))
        .filter(|t| t.contains("/dev/"))
        .unwrap_or_default();
    p::LaneAttachArgs {
        name: name.clone(),
        now,
        print,
        pid: (!print).then_some(pid),
        pid_start: start_time(pid),
        holder: Some(format!("lane attach (pid {pid}){tty}")),
    }
}

/// The session as one shell line: `cd DIR && env ... PROGRAM ARGS`.
fn command_line(r: &LaneAttachReply) -> String {
    let mut words = vec![
        "cd".to_owned(),
        quote(&r.cwd),
        "&&".to_owned(),
        "env".into(),
    ];
    words.extend(r.env_remove.iter().map(|k| format!("-u {}", quote(k))));
    words.extend(r.env.iter().map(|(k, v)| quote(&format!("{k}={v}"))));
    words.extend(r.argv.iter().map(|w| quote(w)));
    words.join(" ")
}

fn quote(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-=:@,+".contains(c));
    if plain && !word.is_empty() {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Runs the session in this terminal; its exit code (128+n for signal n).
async fn run_session(r: &LaneAttachReply) -> Result<u8> {
    let mut command = tokio::process::Command::new(&r.argv[0]);
    command.args(&r.argv[1..]).current_dir(&r.cwd);
    command.envs(r.env.iter().map(|(k, v)| (k, v)));
    for k in &r.env_remove {
        command.env_remove(k);
    }
    // Installed before the child starts: from now on Ctrl-C is the child's.
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut child = command.spawn().map_err(|e| CliError {
        code: CANNOT_START,
        message: format!("cannot start {}: {e}", r.argv[0]),
        hint: Some(format!(
            "install {}, or name its path in the [clis] section of config.toml; `flotilla lane doctor` shows what is found",
            r.cli
        )),
    })?;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status?,
            _ = int.recv() => {}
            _ = term.recv() => pass_on(&child),
            _ = hup.recv() => pass_on(&child),
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    Ok(u8::try_from(code).unwrap_or(1))
}

fn pass_on(child: &tokio::process::Child) {
    if let Some(pid) = child
        .id()
        .and_then(|p| rustix::process::Pid::from_raw(p as i32))
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
}

/// Ends the hold, on a fresh connection (the daemon may have restarted
/// meanwhile), retrying while it is unavailable; the lane's view after, or
/// `None` with a warning (the daemon ends the hold once this process is
/// gone anyway).
async fn release(env: &Env, name: &PeerName) -> Option<p::LaneView> {
    let pid = std::process::id();
    let args = p::LaneReleaseArgs {
        name: name.clone(),
        pid,
        pid_start: start_time(pid),
    };
    let until = Instant::now() + RELEASE_PATIENCE;
    loop {
        let tried = async { Ok::<_, anyhow::Error>(env.client().await?.call(&args).await?) };
        let error = match tried.await {
            Ok(view) => return Some(view),
            Err(e) => e,
        };
        let refused = error.downcast_ref::<ClientError>().is_some_and(
            |e| matches!(e, ClientError::Refused(c) if c.code != ErrorCode::Unavailable),
        );
        if refused {
            eprintln!("warning: could not release lane {name}: {error}");
            return None;
        }
        if Instant::now() >= until {
            eprintln!(
                "warning: could not release lane {name} ({error}); the daemon releases it once this process has exited"
            );
            return None;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
