//! `flotilla claim ...` and `flotilla board`: resolve the repository, ask
//! the daemon, print what it says. Git runs in the daemon; this module
//! never touches the repository itself.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use flotilla_actors::governance::gate::short;
use flotilla_actors::governance::merge::MergeBy;
use flotilla_actors::governance::{ClaimId, ClaimStatus, GateStatus};
use flotilla_actors::protocol::{
    BoardArgs, BoardReply, ChangeOpenArgs, ClaimAddArgs, ClaimDropArgs, ClaimReply, ClaimShowArgs,
    ClaimView, GateArgs, GateReply, MergeArgs, PolicyArgs, ReviewArgs,
};

use super::Env;
use crate::args::{
    BoardCli, ChangeCommand, ClaimCommand, ClaimIdCli, MergeCli, PolicyCommand, ReviewCli,
};
use crate::exit::{CliError, FAILED, OK};
use crate::output::{self, out, outln};
use crate::table;

/// Longest brief read from a file or stdin.
const MAX_BRIEF: u64 = 64 * 1024;

pub(crate) async fn run(env: &Env, command: ClaimCommand) -> Result<u8> {
    match command {
        ClaimCommand::Add(a) => {
            let brief = a.brief.as_deref().map(read_brief).transpose()?;
            let op = ClaimAddArgs {
                repo: repo_path(Some(&a.repo))?,
                title: a.title,
                brief,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
        ClaimCommand::List(a) => board(env, a).await,
        ClaimCommand::Show(a) => {
            let (repo, id) = claim_of(&a)?;
            show(
                env,
                &env.client()
                    .await?
                    .call(&ClaimShowArgs { repo, id })
                    .await?,
            )
        }
        ClaimCommand::Drop(a) => {
            let (repo, id) = claim_of(&a.claim)?;
            let op = ClaimDropArgs {
                repo,
                id,
                keep: a.keep,
            };
            show(env, &env.client().await?.call(&op).await?)
        }
    }
}

/// `flotilla board` and `claim list`.
pub(crate) async fn board(env: &Env, a: BoardCli) -> Result<u8> {
    let op = BoardArgs {
        repo: repo_path(a.repo.as_deref())?,
        rebuild: a.rebuild,
    };
    let reply = env.client().await?.call(&op).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        print_board(&reply)?;
    }
    Ok(OK)
}

fn print_board(reply: &BoardReply) -> Result<()> {
    if let Some(remote) = &reply.fetched_from {
        outln!("fetched the run records from {remote}")?;
    }
    if reply.claims.is_empty() {
        outln!(
            "no claims in {}: flotilla claim add {} TITLE",
            reply.repo,
            reply.repo
        )?;
    } else {
        let mut t = table::new(&["LANE", "CLAIM", "BRANCH", "GATE", "STATUS"]);
        for c in &reply.claims {
            t.add_row(vec![
                lane_of(c),
                c.state.id.to_string(),
                c.state.branch.clone(),
                gate_cell(c),
                status(c),
            ]);
        }
        out!("{}", table::render(&t))?;
    }
    for note in &reply.notes {
        outln!("note: {note}")?;
    }
    Ok(())
}

/// `flotilla review`.
pub(crate) async fn review(env: &Env, a: ReviewCli) -> Result<u8> {
    let op = ReviewArgs {
        repo: repo_path(a.repo.as_deref())?,
        target: a.target,
        reviewer: a.reviewer,
        tier: a.tier,
        model: a.model,
        timeout_secs: a.timeout,
    };
    let progress = crate::progress::Waiting::start("the reviewer reads the change");
    let reply = env.client().await?.call(&op).await;
    drop(progress);
    print_gate(env, &reply?)
}

/// `flotilla policy show|check`.
pub(crate) async fn policy(env: &Env, command: PolicyCommand) -> Result<u8> {
    let (a, check) = match command {
        PolicyCommand::Show(a) => (a, false),
        PolicyCommand::Check(a) => (a, true),
    };
    let repo = match a.repo {
        Some(dir) => Some(repo_path(Some(&dir))?),
        None => std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
    };
    let reply = env.client().await?.call(&PolicyArgs { repo }).await?;
    let code = if reply.valid { OK } else { FAILED };
    if env.json {
        output::json(&reply)?;
        return Ok(code);
    }
    for s in &reply.sources {
        let state = if s.present { "" } else { " (absent)" };
        outln!("# {}: {}{state}", s.role, s.path)?;
    }
    match (&reply.policy, &reply.error) {
        (Some(policy), _) if check => outln!("valid: {}", summary(policy))?,
        (Some(policy), _) => out!("{}", toml::to_string_pretty(policy)?)?,
        (None, Some(error)) => outln!("not valid: {error}")?,
        (None, None) => {}
    }
    Ok(code)
}

fn summary(p: &flotilla_actors::governance::Policy) -> String {
    let merge = serde_json::to_value(p.merge.authority).ok();
    format!(
        "{} claim(s) in flight at once, merges by {}, {} tier rule(s)",
        p.concurrency,
        merge.as_ref().and_then(|m| m.as_str()).unwrap_or("?"),
        p.tiers.paths.len()
    )
}

/// `flotilla change open`.
pub(crate) async fn change(env: &Env, command: ChangeCommand) -> Result<u8> {
    let ChangeCommand::Open(a) = command;
    let (repo, id) = claim_of(&a.claim)?;
    let op = ChangeOpenArgs {
        repo,
        id,
        title: a.title,
        draft: a.draft,
    };
    show(env, &env.client().await?.call(&op).await?)
}

/// `flotilla merge`.
pub(crate) async fn merge(env: &Env, a: MergeCli) -> Result<u8> {
    let (repo, id) = claim_of(&a.claim)?;
    let by = if a.by == "coordinator" {
        MergeBy::Coordinator
    } else {
        MergeBy::Human
    };
    let op = MergeArgs {
        repo,
        id,
        by,
        without_gate: a.without_gate,
        keep: a.keep,
        as_peer: a.as_peer,
    };
    show(env, &env.client().await?.call(&op).await?)
}

/// `flotilla gate`.
pub(crate) async fn gate(env: &Env, a: ClaimIdCli) -> Result<u8> {
    let (repo, id) = claim_of(&a)?;
    print_gate(
        env,
        &env.client().await?.call(&GateArgs { repo, id }).await?,
    )
}

fn print_gate(env: &Env, reply: &GateReply) -> Result<u8> {
    let code = if reply.standing.status == GateStatus::Passed {
        OK
    } else {
        FAILED
    };
    if env.json {
        output::json(reply)?;
        return Ok(code);
    }
    outln!("gate {}: {}", reply.claim, reply.standing.why)?;
    if let Some(gate) = &reply.gate {
        let g = &gate.record;
        outln!(
            "  reviewed {} by {} at {} (diff {})",
            short(&g.commit),
            g.lane,
            gate.at,
            g.diff_sha256
        )?;
        for f in &g.blocking {
            outln!("  blocking  {}:{}  {}", f.file, f.line, f.finding)?;
        }
        for note in &g.notes {
            outln!("  note      {note}")?;
        }
    }
    Ok(code)
}

fn gate_cell(c: &ClaimView) -> String {
    let Some(gate) = &c.state.gate else {
        return "-".into();
    };
    let status = serde_json::to_value(c.gate_standing.status).ok();
    let status = status
        .as_ref()
        .and_then(|s| s.as_str())
        .unwrap_or("?")
        .to_owned();
    format!("gate {status} · R{}", gate.round)
}

fn show(env: &Env, reply: &ClaimReply) -> Result<u8> {
    if env.json {
        output::json(reply)?;
        return Ok(OK);
    }
    let c = &reply.claim;
    outln!("claim {}: {}", c.state.id, c.state.title)?;
    outln!("  branch   {} (from {})", c.state.branch, c.state.base)?;
    outln!("  status   {}", status(c))?;
    outln!("  lane     {}", lane_of(c))?;
    if let Some(change) = &c.state.change {
        let at = change
            .url
            .clone()
            .unwrap_or_else(|| "a local change record".into());
        outln!("  change   {at} (at {})", short(&change.head))?;
    }
    if let Some(dir) = &c.state.worktree {
        let here = if c.worktree_here {
            ""
        } else {
            " (not on this host)"
        };
        outln!("  worktree {dir}{here}")?;
    }
    for line in &reply.history {
        outln!("  {}  {}  {}", line.at, line.host, line.summary)?;
    }
    if c.state.status == ClaimStatus::Open {
        outln!(
            "next: flotilla lane run --cli CLI -C {} --claim {} --prompt ...",
            reply.repo,
            c.state.id
        )?;
    }
    Ok(OK)
}

fn lane_of(c: &ClaimView) -> String {
    let Some(lane) = &c.state.lane else {
        return "-".into();
    };
    lane.split_once('/')
        .map_or(lane.clone(), |(_, name)| name.to_owned())
}

fn status(c: &ClaimView) -> String {
    match (c.state.status, c.lane_phase) {
        (ClaimStatus::Open, _) => "open".into(),
        (ClaimStatus::Dropped, _) => "dropped".into(),
        (ClaimStatus::Merged, _) => "merged".into(),
        (ClaimStatus::InFlight, Some(phase)) => {
            let phase = serde_json::to_value(phase).ok();
            format!(
                "in flight · {}",
                phase.as_ref().and_then(|p| p.as_str()).unwrap_or("?")
            )
        }
        (ClaimStatus::InFlight, None) => match &c.state.lane {
            Some(lane) => format!("in flight · {lane}"),
            None => "in flight".into(),
        },
    }
}

fn claim_of(a: &ClaimIdCli) -> Result<(String, ClaimId)> {
    let id = ClaimId::parse(&a.id)
        .map_err(|e| CliError::usage(e.to_string(), "flotilla claim list shows the ids"))?;
    Ok((repo_path(a.repo.as_deref())?, id))
}

/// The repository as an absolute path (default: the current directory).
pub(super) fn repo_path(repo: Option<&Path>) -> Result<String> {
    let dir: PathBuf = match repo {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let dir = std::path::absolute(&dir)
        .with_context(|| format!("cannot resolve the directory {}", dir.display()))?;
    if !dir.is_dir() {
        return Err(CliError::usage(
            format!("{} is not a directory", dir.display()),
            "give a directory in the git repository",
        ));
    }
    Ok(dir.display().to_string())
}

fn read_brief(source: &str) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    let read = if source == "-" {
        std::io::stdin()
            .take(MAX_BRIEF + 1)
            .read_to_string(&mut text)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(MAX_BRIEF + 1).read_to_string(&mut text))
    };
    read.map_err(|e| {
        CliError::usage(
            format!("cannot read the brief from {source}: {e}"),
            "give a UTF-8 text file, or - for stdin",
        )
    })?;
    if text.len() as u64 > MAX_BRIEF {
        return Err(CliError::usage(
            format!("the brief in {source} is over 64 KiB"),
            "shorten it",
        ));
    }
    Ok(text)
}
