//! `flotilla lane ...`: run, start, resume, wait, status, interrupt,
//! archive, list, events, doctor (`rm` and `prune` in `lane_removal`,
//! `attach` in `lane_step_in`). `run` and `wait` exit with the turn's
//! status: 0 completed, 1 failed (or lost), 124 timed out, 130 interrupted.

use std::time::Duration;

use super::Env;
use super::lane_args::{read_prompt, start_args};
use super::lane_client::LaneClient;
use crate::args::{LaneCli, LaneCommand, LaneResumeArgs, LaneStartArgs};
use crate::exit::{CliError, OK};
use crate::output::{self, outln};
use anyhow::Result;
use flotilla_actors::lane::CliKind;
use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::names::{HostName, PeerName};
use flotilla_actors::protocol::{
    self as p, LaneArchiveArgs, LaneDoctorArgs, LaneEventsArgs, LaneInterruptArgs, LaneListArgs,
    LaneStatusArgs, LaneView,
};

pub(crate) async fn run(env: &Env, cli: LaneCli) -> Result<u8> {
    let host = cli.host.as_deref().map(HostName::new).transpose()?;
    let as_peer = match &cli.command {
        LaneCommand::Run(a) | LaneCommand::Start(a) => {
            a.as_peer.as_deref().map(PeerName::new).transpose()?
        }
        _ => None,
    };
    let mut c = LaneClient::connect(env, host, as_peer).await?;
    match cli.command {
        LaneCommand::Run(a) => start(env, &mut c, a, true).await,
        LaneCommand::Start(a) => start(env, &mut c, a, false).await,
        LaneCommand::Resume(a) => resume(env, &mut c, a).await,
        LaneCommand::Wait(a) => {
            let timeout_ms = a.timeout.map(super::millis);
            wait(env, &mut c, &PeerName::new(&a.name)?, timeout_ms).await
        }
        LaneCommand::Status(a) => {
            let name = PeerName::new(&a.name)?;
            view(env, c.call(&LaneStatusArgs { name }).await?)
        }
        LaneCommand::Interrupt(a) => {
            let name = PeerName::new(&a.name)?;
            view(env, c.call(&LaneInterruptArgs { name }).await?)
        }
        LaneCommand::Archive(a) => {
            let name = PeerName::new(&a.name)?;
            view(env, c.call(&LaneArchiveArgs { name }).await?)
        }
        LaneCommand::Rm { name, force } => {
            super::lane_removal::remove(env, &mut c, &name, force).await
        }
        LaneCommand::Prune { older_than } => {
            super::lane_removal::prune(env, &mut c, older_than).await
        }
        LaneCommand::List { all } => list(env, &mut c, all).await,
        LaneCommand::Events { name, follow } => {
            events(env, &mut c, &PeerName::new(&name)?, follow).await
        }
        LaneCommand::Doctor { cli } => doctor(env, &mut c, cli).await,
        LaneCommand::Attach(a) => super::lane_step_in::attach(env, &mut c, a).await,
    }
}

/// Schema id of `lane start|resume --json` without `--wait`.
pub(crate) const LANE_START_SCHEMA: &str = "flotilla.lane-start.v1";
/// Schema id of `lane status|interrupt|archive --json` (a [`LaneView`]).
pub(crate) const LANE_STATUS_SCHEMA: &str = "flotilla.lane-status.v1";
/// Schema id of each lane event printed (`lane events --json` lines, the
/// `turn.completed` of `lane run|wait --json`).
pub(crate) const LANE_EVENT_SCHEMA: &str = flotilla_actors::lane::events::SCHEMA;

async fn start(env: &Env, c: &mut LaneClient, a: LaneStartArgs, wait_for_it: bool) -> Result<u8> {
    let args = start_args(a, c.is_remote())?;
    let reply = c.call(&args).await?;
    let wait = c.command_for("wait", &reply.lane.name);
    for note in &reply.notes {
        crate::verbosity::note!("note: {note}");
    }
    // A remote lane's directory is the destination's choice: say where.
    let place = match (&reply.cwd, c.is_remote()) {
        (Some(dir), true) => format!(" in {dir} on {}", reply.lane.host),
        _ => String::new(),
    };
    if !wait_for_it {
        if env.json {
            output::json_as(LANE_START_SCHEMA, &reply)?;
        } else {
            outln!(
                "started lane {} (turn {}){place}; collect with: {wait}",
                reply.lane,
                reply.turn,
            )?;
        }
        return Ok(OK);
    }
    if !place.is_empty() {
        crate::verbosity::note!("lane {} runs{place}", reply.lane);
    }
    super::lane_attach::attached(env, c, &reply.lane.name).await
}

async fn resume(env: &Env, c: &mut LaneClient, a: LaneResumeArgs) -> Result<u8> {
    let name = PeerName::new(&a.name)?;
    let prompt = read_prompt(&a.prompt)?;
    let reply = c
        .call(&p::LaneResumeArgs {
            name: name.clone(),
            prompt,
            fresh: false,
            model: None,
        })
        .await?;
    for note in &reply.notes {
        crate::verbosity::note!("note: {note}");
    }
    if a.wait {
        return super::lane_attach::attached(env, c, &name).await;
    }
    if env.json {
        output::json_as(LANE_START_SCHEMA, &reply)?;
    } else {
        outln!(
            "lane {} turn {} {}; collect with: {}",
            reply.lane,
            reply.turn,
            if reply.notes.is_empty() {
                "started"
            } else {
                "waits"
            },
            c.command_for("wait", &name)
        )?;
    }
    Ok(OK)
}

pub(super) async fn wait(
    env: &Env,
    c: &mut LaneClient,
    name: &PeerName,
    timeout_ms: Option<u64>,
) -> Result<u8> {
    let waiting = crate::progress::Waiting::start(format!("waiting for lane {name}'s result"));
    let event = c
        .call(&p::LaneWaitArgs {
            name: name.clone(),
            timeout_ms,
        })
        .await?;
    drop(waiting);
    let EventKind::TurnCompleted(result) = &event.kind else {
        return Err(CliError::failed(
            "the daemon answered with an event that is not turn.completed",
            None,
        ));
    };
    if env.json {
        output::json_as(LANE_EVENT_SCHEMA, &event)?;
    } else {
        if let Some(text) = result.result.as_deref().filter(|t| !t.is_empty()) {
            outln!("{text}")?;
        }
        crate::verbosity::note!("{}", result.summary_line(event.turn));
    }
    Ok(result.status.exit_code())
}

/// Shows progress on stderr while a turn runs (human mode only).
pub(super) async fn follow(
    env: &Env,
    c: &mut LaneClient,
    name: &PeerName,
    mut after: u64,
) -> Result<()> {
    let waiting = match env.json {
        true => None,
        false => Some(crate::progress::Waiting::start(format!(
            "lane {name}: turn running"
        ))),
    };
    loop {
        let reply = c
            .call(&LaneEventsArgs {
                name: name.clone(),
                after,
                wait_ms: 30_000,
                limit: None,
            })
            .await?;
        for e in &reply.events {
            after = e.seq;
            if let Some(w) = &waiting
                && !crate::verbosity::quiet()
                && let Some(line) = progress(e)
            {
                w.println(&line);
            }
        }
        if reply.idle && reply.events.is_empty() {
            return Ok(());
        }
    }
}

/// The progress line of an event, if it has one.
fn progress(e: &LaneEvent) -> Option<String> {
    match &e.kind {
        EventKind::Message { text } => Some(format!("│ {text}")),
        EventKind::ToolCall { name, .. } => Some(format!("│ [tool] {name}")),
        EventKind::Error { message } => Some(format!("│ [error] {message}")),
        EventKind::Note { text } => Some(format!("│ ({text})")),
        _ => None,
    }
}

fn view(env: &Env, v: LaneView) -> Result<u8> {
    if env.json {
        output::json_as(LANE_STATUS_SCHEMA, &v)?;
    } else {
        outln!("{}", output::lane_line(&v))?;
    }
    Ok(OK)
}

async fn list(env: &Env, c: &mut LaneClient, all: bool) -> Result<u8> {
    let reply = c.call(&LaneListArgs { all }).await?;
    if env.json {
        output::json(&reply)?;
    } else if reply.lanes.is_empty() {
        outln!(
            "no lanes{}",
            if all {
                ""
            } else {
                " (--all shows archived ones)"
            }
        )?;
    } else {
        output::out!("{}", output::lanes_table(&reply.lanes))?;
    }
    Ok(OK)
}

/// Prints a lane's events; with `follow_on`, until the lane is idle, then
/// exits with the exit code of the last turn it printed the end of.
async fn events(env: &Env, c: &mut LaneClient, name: &PeerName, follow_on: bool) -> Result<u8> {
    let mut after = 0;
    let mut last_status = None;
    loop {
        let wait_ms = if follow_on && after > 0 { 30_000 } else { 0 };
        let reply = c
            .call(&LaneEventsArgs {
                name: name.clone(),
                after,
                wait_ms,
                limit: None,
            })
            .await?;
        for e in &reply.events {
            after = e.seq;
            if let EventKind::TurnCompleted(result) = &e.kind {
                last_status = Some(result.status);
            }
            if env.json {
                output::json_line_as(LANE_EVENT_SCHEMA, e)?;
            } else {
                outln!("{}", output::event_line(e))?;
            }
        }
        if !follow_on {
            return Ok(OK);
        }
        if reply.idle && reply.events.is_empty() {
            return Ok(last_status.map_or(OK, |s| s.exit_code()));
        }
        if reply.events.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn doctor(env: &Env, c: &mut LaneClient, cli: Option<CliKind>) -> Result<u8> {
    let reply = c.call(&LaneDoctorArgs { cli }).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        for c in &reply.clis {
            let headless = match c.headless {
                Some(true) => "headless ok",
                Some(false) => "headless flags missing",
                None => "",
            };
            outln!(
                "{:<8} {:<8} {:<40} {:<24} {}",
                c.cli.to_string(),
                c.status,
                c.path.as_deref().unwrap_or("-"),
                c.version.as_deref().unwrap_or(""),
                headless
            )?;
            if let Some(h) = &c.hint {
                outln!("         hint: {h}")?;
            }
            if c.prompt_via.as_deref() == Some("argument") {
                outln!(
                    "         prompt: passed as an argument ({} reads it from no file or stdin), so it shows in the process list",
                    c.cli
                )?;
            }
        }
    }
    Ok(OK)
}
