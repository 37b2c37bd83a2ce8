//! `change.open`: a claim's change request. The branch (and the run
//! records) are pushed to the policy's remote when the repository has it;
//! on a forge the request is opened with the forge's own CLI (`gh`,
//! `glab`, found on the daemon's PATH, holding the user's own login:
//! Flotilla never handles a token); otherwise, or with `forge = "none"`,
//! the change is a local change record (branch, base, commits, diff hash)
//! in the run records.
//!
//! Owns opening the request. Must not merge (`merge` does).

use std::process::Stdio;
use std::time::Duration;

use flotilla_actors::governance::change::{Forge, body};
use flotilla_actors::governance::{Entry, diff_sha256, standing};
use flotilla_actors::protocol::{ChangeOpenArgs, ClaimReply, ControlError, ErrorCode};

use super::claims::{append, open_claim, show_in};
use super::{Repo, git_error};
use crate::context::HostContext;

/// How long a forge's CLI may take.
const FORGE_DEADLINE: Duration = Duration::from_secs(120);

/// `change.open`.
pub(crate) async fn open(
    ctx: &HostContext,
    args: ChangeOpenArgs,
) -> Result<ClaimReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    let _turn = ctx.repo_locks.lock(repo.git.dir()).await;
    let (board, _, _) = repo.board().await?;
    let claim = open_claim(&board, &args.id)?.clone();
    let git = &repo.git;
    let head = git
        .commit_of(&claim.branch)
        .await
        .map_err(git_error)?
        .ok_or_else(|| {
            conflict(format!(
                "claim {} has no branch yet: no lane has worked on it",
                claim.id
            ))
        })?;
    let base = git
        .merge_base(&claim.base, &head)
        .await
        .map_err(git_error)?;
    let commits = git.commits(&base, &head).await.map_err(git_error)?;
    if commits.is_empty() {
        return Err(conflict(format!(
            "{} has no commit past {}: nothing to ask for",
            claim.branch, claim.base
        )));
    }
    let remote = repo.policy.remote.clone();
    let has_remote = git.has_remote(&remote).await.map_err(git_error)?;
    let url = if has_remote {
        git.remote_url(&remote).await.ok()
    } else {
        None
    };
    let forge = Forge::of(url.as_deref(), repo.policy.forge.as_deref())
        .map_err(|e| ControlError::new(ErrorCode::BadRequest, e))?;
    if has_remote {
        git.push_branch(&remote, &claim.branch).await.map_err(|e| {
            ControlError::new(
                ErrorCode::Unavailable,
                format!("cannot push {} to {remote}: {e}", claim.branch),
            )
            .with_hint("check the remote and your access to it, then open the change again")
        })?;
        let _ = git.push_records(&remote).await;
    }
    let gate = standing(claim.id.as_str(), claim.gate.as_ref(), &head);
    let title = args.title.clone().unwrap_or_else(|| claim.title.clone());
    let text = body(
        claim.id.as_str(),
        claim.brief.as_deref(),
        &commits,
        &gate.why,
    );
    let opened = match forge.cli() {
        Some(cli) => Some(
            forge_cli(
                &repo,
                cli,
                forge,
                &claim.branch,
                &claim.base,
                &title,
                &text,
                args.draft,
            )
            .await?,
        ),
        None => None,
    };
    let diff = git.diff(&base, &head).await.map_err(git_error)?;
    let entry = Entry::Change {
        forge,
        url: opened,
        branch: claim.branch.clone(),
        base: claim.base.clone(),
        head,
        commits,
        diff_sha256: diff_sha256(&diff),
    };
    append(ctx, &repo, &claim.id, entry).await?;
    show_in(ctx, &repo, &claim.id).await
}

/// Opens the request with the forge's CLI; the address it printed.
#[allow(clippy::too_many_arguments)]
async fn forge_cli(
    repo: &Repo,
    cli: &str,
    forge: Forge,
    branch: &str,
    base: &str,
    title: &str,
    text: &str,
    draft: bool,
) -> Result<String, ControlError> {
    let mut args: Vec<&str> = match forge {
        Forge::Gitlab => vec![
            "mr",
            "create",
            "--source-branch",
            branch,
            "--target-branch",
            base,
            "--title",
            title,
            "--description",
            text,
            "--yes",
        ],
        _ => vec![
            "pr", "create", "--head", branch, "--base", base, "--title", title, "--body", text,
        ],
    };
    if draft {
        args.push("--draft");
    }
    let mut command = tokio::process::Command::new(cli);
    command
        .args(&args)
        .current_dir(repo.git.dir())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(FORGE_DEADLINE, command.output()).await {
        Err(_) => {
            return Err(ControlError::new(
                ErrorCode::TimedOut,
                format!("{cli} did not finish in time"),
            ));
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ControlError::new(ErrorCode::Unavailable, format!("{cli} is not installed (not on the daemon's PATH)"))
                .with_hint(format!("install {cli} and log in with it, or set forge = \"none\" in policy.toml for a local change record")));
        }
        Ok(Err(e)) => return Err(ControlError::internal(format!("cannot run {cli}: {e}"))),
        Ok(Ok(output)) => output,
    };
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        return Err(ControlError::new(
            ErrorCode::Unavailable,
            format!("{cli} could not open the change: {}", err.trim()),
        )
        .with_hint(format!(
            "`{cli} auth status` says whether you are logged in"
        )));
    }
    let url = said
        .split_whitespace()
        .rev()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"));
    Ok(url.unwrap_or(said.trim()).to_owned())
}

fn conflict(message: String) -> ControlError {
    ControlError::new(ErrorCode::Conflict, message)
}
