//! `lane start`'s and `lane resume`'s command line made into the control
//! protocol's request: the prompt (text, file or stdin), `--env` pairs,
//! the lane's name and working directory. Checks what it reads and says
//! what to write instead; sends nothing (that is `lanes`').

use std::io::Read;

use anyhow::{Context, Result};
use flotilla_actors::governance::ClaimId;
use flotilla_actors::lane::CliKind;
use flotilla_actors::names::{GroupName, PeerName};
use flotilla_actors::protocol as p;

use crate::args::{LaneStartArgs, PromptArgs};
use crate::exit::CliError;

pub(super) fn read_prompt(p: &PromptArgs) -> Result<String> {
    if let Some(text) = &p.prompt {
        return Ok(text.clone());
    }
    if let Some(file) = &p.prompt_file {
        return std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the prompt file {}", file.display()));
    }
    match p.stdin.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin (it must be UTF-8)")?;
            Ok(text)
        }
        Some(other) => Err(CliError::usage(
            format!("unexpected argument {other:?}"),
            "give the prompt with --prompt TEXT, --prompt-file F or `-` for stdin; put a command after --",
        )),
        None => Ok(String::new()),
    }
}

fn parse_env(pairs: &[String]) -> Result<Vec<(String, String)>> {
    pairs
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
            _ => Err(CliError::usage(
                format!("--env {kv:?} is not K=V"),
                "write --env NAME=value",
            )),
        })
        .collect()
}

pub(super) fn start_args(a: LaneStartArgs, remote: bool) -> Result<p::LaneStartArgs> {
    let cli = a.cli;
    let prompt = read_prompt(&a.prompt)?;
    if prompt.trim().is_empty() && cli != CliKind::Exec {
        return Err(CliError::usage(
            "no prompt given",
            "use --prompt TEXT, --prompt-file F, or `-` to read stdin",
        ));
    }
    let name = match &a.name {
        Some(n) => PeerName::new(n)?,
        None => PeerName::new(&format!("{cli}-{}", &uuid_suffix()))?,
    };
    // A remote lane's directory is a path on its host (default: a fresh
    // directory there), so it is not checked here.
    let cwd = match (a.cd, remote) {
        (Some(d), true) => Some(d),
        (None, true) => None,
        (Some(d), false) => Some(std::fs::canonicalize(&d).map_err(|e| {
            CliError::usage(
                format!(
                    "-C {}: the working directory does not exist ({e})",
                    d.display()
                ),
                "pass an existing directory with -C/--cd (create it first with mkdir -p)",
            )
        })?),
        (None, false) => Some(std::env::current_dir()?),
    };
    Ok(p::LaneStartArgs {
        name,
        cli,
        cwd: cwd.map(|d| d.display().to_string()),
        model: a.model,
        permissions: a.permissions,
        timeout_secs: a.timeout,
        persistent: a.persistent,
        auto_archive_secs: (!a.no_auto_archive).then_some(a.auto_archive_after),
        groups: a
            .groups
            .iter()
            .map(|g| GroupName::explicit(g))
            .collect::<Result<_, _>>()?,
        inherit_groups: a.inherit_groups,
        as_peer: a.as_peer.as_deref().map(PeerName::new).transpose()?,
        owner: None,
        env: parse_env(&a.env)?,
        args: a.args,
        restart_on_stall: a.restart_on_stall,
        force: a.force,
        claim: a
            .claim
            .as_deref()
            .map(ClaimId::parse)
            .transpose()
            .map_err(|e| CliError::usage(e.to_string(), "flotilla claim list shows the ids"))?,
        prompt,
    })
}

fn uuid_suffix() -> String {
    let id = flotilla_actors::names::MessageId::generate();
    id.as_str()[id.as_str().len() - 6..].to_owned()
}
