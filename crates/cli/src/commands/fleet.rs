//! `flotilla fleet ...`: reads what the person gave (tasks, budget cards,
//! fleet files), asks the daemon, prints what it says. Running a fleet and
//! judging its work are the daemon's; this module never reads an artifact
//! or runs a check itself.

use std::io::Read;

use anyhow::{Context, Result};
use flotilla_actors::fleet::Task;
use flotilla_actors::protocol::{
    FleetCheckArgs, FleetCheckReply, FleetPauseArgs, FleetRemoveArgs, FleetResumeArgs,
    FleetStatusArgs, FleetStopArgs, FleetTaskArgs, FleetView,
};

use super::Env;
use super::fleet_start::check_name;
use crate::args::{FleetCheckArgs as CheckCli, FleetCommand};
use crate::exit::{CliError, FAILED, OK};
use crate::output::{self, outln};

pub(crate) async fn run(env: &Env, command: FleetCommand) -> Result<u8> {
    match command {
        FleetCommand::Check(a) => check(env, a).await,
        FleetCommand::Start(a) => {
            let op = super::fleet_start::request(*a)?;
            show(env, &env.client().await?.call(&op).await?)
        }
        FleetCommand::Task(a) => {
            let op = FleetTaskArgs {
                name: check_name(&a.name)?,
                task: read_task(&a.task)?,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
        FleetCommand::Status(a) => {
            let op = FleetStatusArgs {
                name: check_name(&a.name)?,
            };
            let mut client = env.client().await?;
            let view = client.call(&op).await?;
            show(env, &view)?;
            if !env.json && (view.parent.is_some() || !view.children.is_empty()) {
                let all = client.call(&flotilla_actors::protocol::Empty {}).await?;
                for line in super::fleet_tree::lines(&view, &all.fleets) {
                    outln!("{line}")?;
                }
            }
            Ok(OK)
        }
        FleetCommand::List => super::fleet_view::list(env).await,
        FleetCommand::Watch(a) => super::fleet_watch::watch(env, a).await,
        FleetCommand::Pause(a) => {
            let op = FleetPauseArgs {
                name: check_name(&a.name)?,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
        FleetCommand::Resume(a) => {
            let budget = match &a.budget {
                Some(path) => Some(super::fleet_start::read_budget(path)?),
                None => None,
            };
            let op = FleetResumeArgs {
                name: check_name(&a.name)?,
                budget,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
        FleetCommand::Stop(a) => {
            let op = FleetStopArgs {
                name: check_name(&a.name)?,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
        FleetCommand::History(a) => super::fleet_view::history(env, check_name(&a.name)?).await,
        FleetCommand::Pairs => super::fleet_view::pairs(env),
        FleetCommand::Rm(a) => {
            let op = FleetRemoveArgs {
                name: check_name(&a.name)?,
            };
            let reply = env.client().await?.call(&op).await?;
            if env.json {
                output::json(&reply)?;
            } else {
                outln!(
                    "removed fleet {} and its lanes: {}",
                    reply.name,
                    reply.lanes.join(", ")
                )?;
            }
            Ok(OK)
        }
        FleetCommand::Request(a) => super::fleet_view::request(env, a).await,
    }
}

async fn check(env: &Env, a: CheckCli) -> Result<u8> {
    let task = read_task(&a.task)?;
    let dir = match a.dir {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let dir = std::path::absolute(&dir)
        .with_context(|| format!("cannot resolve the directory {}", dir.display()))?;
    let args = FleetCheckArgs {
        task,
        dir: dir.display().to_string(),
        timeout_ms: super::millis(a.timeout),
    };
    let progress = crate::progress::Waiting::start("the daemon checks the task");
    let reply = env.client().await?.call(&args).await;
    drop(progress);
    let reply = reply?;
    if env.json {
        output::json(&reply)?;
    } else {
        print_verdict(&reply)?;
    }
    Ok(if reply.accepted { OK } else { FAILED })
}

/// The task from `source` (a file or `-`), parsed and validated here so a
/// bad one is refused before the daemon is asked.
pub(crate) fn read_task(source: &str) -> Result<Task> {
    let text = read_source(source, "the task")?;
    let name = if source == "-" {
        "the task on stdin".to_owned()
    } else {
        format!("the task in {source}")
    };
    Task::parse(&text)
        .map_err(|e| CliError::usage(format!("{name}: {e}"), "see docs/fleets.md#tasks"))
}

fn print_verdict(reply: &FleetCheckReply) -> Result<()> {
    if let Some(evidence) = &reply.evidence {
        outln!("accepted in {}", reply.dir)?;
        for a in &evidence.artifacts {
            outln!("  {}: {} characters, {} bytes", a.path, a.chars, a.bytes)?;
        }
        for c in &evidence.checks {
            outln!("  `{}` exited 0", c.run)?;
        }
        return Ok(());
    }
    outln!("not accepted in {}:", reply.dir)?;
    for shortfall in &reply.shortfalls {
        let text = shortfall.to_string();
        let mut lines = text.lines();
        outln!("  - {}", lines.next().unwrap_or_default())?;
        for line in lines {
            outln!("      {line}")?;
        }
    }
    Ok(())
}

/// Prints a fleet (JSON: `flotilla.fleet.v1`).
fn show(env: &Env, view: &FleetView) -> Result<u8> {
    if env.json {
        output::json(view)?;
    } else {
        super::fleet_view::print(view)?;
    }
    Ok(OK)
}

/// The text of `source`, a file or `-` for stdin; `what` names it in errors.
pub(crate) fn read_source(source: &str, what: &str) -> Result<String> {
    if source == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .with_context(|| format!("cannot read {what} from stdin (it must be UTF-8)"))?;
        return Ok(text);
    }
    std::fs::read_to_string(source).map_err(|e| {
        CliError::usage(
            format!("cannot read {what} from the file {source}: {e}"),
            "give a JSON file, or - to read it from stdin",
        )
    })
}
