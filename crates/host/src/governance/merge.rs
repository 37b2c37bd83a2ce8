//! `merge`: a claim's branch into its base, under the policy's merge
//! authority (`flotilla_actors::governance::merge`). The coordinator's
//! checks run first in a detached worktree of exactly the head to merge;
//! the merge itself happens in the repository's checkout when the base is
//! checked out there (and clean), else in a scratch worktree whose result
//! moves the base only if nobody moved it meanwhile.
//!
//! Owns carrying out the merge. Must not decide who may merge.

use flotilla_actors::governance::gate::short;
use flotilla_actors::governance::merge::{MergeAsk, MergeBy, may_merge};
use flotilla_actors::governance::{ClaimState, Entry, standing};
use flotilla_actors::lane::LanePhase;
use flotilla_actors::model::PeerKind;
use flotilla_actors::protocol::{ClaimReply, ControlError, ErrorCode, MergeArgs};

use super::claims::{append, local_lane, open_claim, show_in};
use super::git::Git;
use super::{Repo, git_error};
use crate::context::HostContext;

/// How long each of the coordinator's checks may run.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// `merge`.
pub(crate) async fn merge(ctx: &HostContext, args: MergeArgs) -> Result<ClaimReply, ControlError> {
    if args.by == MergeBy::Human && args.as_peer.as_deref().is_some_and(|p| is_agent(ctx, p)) {
        return Err(forbidden(format!(
            "{} is a lane: a lane merges as the coordinator",
            args.as_peer.unwrap_or_default()
        ))
        .with_hint("flotilla merge CLAIM --by coordinator"));
    }
    let repo = Repo::open(ctx, &args.repo).await?;
    let _turn = ctx.repo_locks.lock(repo.git.dir()).await;
    let (board, _, _) = repo.board().await?;
    let claim = open_claim(&board, &args.id)?.clone();
    let head = commit(
        &repo.git,
        &claim.branch,
        "has no branch yet: no lane has worked on it",
    )
    .await?;
    let base = commit(&repo.git, &claim.base, "has no base branch any more").await?;
    if repo
        .git
        .is_ancestor(&head, &base)
        .await
        .map_err(git_error)?
    {
        return Err(conflict(format!(
            "{} is already in {}: nothing to merge",
            claim.branch, claim.base
        )));
    }
    if let Some(view) = local_lane(ctx, &claim).await
        && view.phase == LanePhase::Running
    {
        return Err(conflict(format!(
            "lane {} is still running on claim {}",
            view.lane, claim.id
        )));
    }
    let standing = standing(claim.id.as_str(), claim.gate.as_ref(), &head);
    let tier = claim
        .gate
        .as_ref()
        .filter(|g| g.record.commit == head)
        .map(|g| g.record.tier.as_str());
    let ask = MergeAsk {
        by: args.by,
        standing: &standing,
        tier,
        without_gate: args.without_gate,
    };
    may_merge(&repo.policy, &ask).map_err(forbidden)?;
    let checks = match args.by {
        MergeBy::Coordinator => run_checks(&repo, &claim, &head).await?,
        MergeBy::Human => Vec::new(),
    };
    let merged = merge_into_base(ctx, &repo, &claim, args.by, &head, &base).await?;
    if !args.keep {
        let _ = repo.git.remove_worktree(&repo.worktree(&claim.id)).await;
        let _ = std::fs::remove_dir_all(repo.hooks(&claim.id));
    }
    let entry = Entry::Merge {
        by: args.by,
        commit: merged,
        head,
        base: claim.base.clone(),
        gate: standing.status,
        without_gate: args.without_gate,
        checks,
    };
    append(ctx, &repo, &claim.id, entry).await?;
    show_in(ctx, &repo, &claim.id).await
}

/// The policy's checks, each in a detached worktree of `head`; refused at
/// the first that fails.
async fn run_checks(
    repo: &Repo,
    claim: &ClaimState,
    head: &str,
) -> Result<Vec<String>, ControlError> {
    let checks = repo.policy.merge.checks.clone();
    if checks.is_empty() {
        return Ok(checks);
    }
    let dir = scratch(repo, claim, "checks").await?;
    repo.git
        .add_detached_worktree(&dir, head)
        .await
        .map_err(git_error)?;
    let mut failed = None;
    for run in &checks {
        let ran = crate::fleet::acceptance::run_check(&dir, run, ".", CHECK_TIMEOUT).await;
        if ran.exit != Some(0) {
            failed = Some((run.clone(), ran));
            break;
        }
    }
    let _ = repo.git.remove_worktree(&dir).await;
    match failed {
        None => Ok(checks),
        Some((run, ran)) => Err(forbidden(format!(
            "the check `{run}` failed on {} ({}): {}",
            short(head),
            ran.exit
                .map_or("no exit code".to_owned(), |c| format!("exit {c}")),
            ran.tail.trim()
        ))
        .with_hint("fix it on the claim's branch, review again, then merge")),
    }
}

/// Merges the claim's branch into its base; the merge commit.
async fn merge_into_base(
    ctx: &HostContext,
    repo: &Repo,
    claim: &ClaimState,
    by: MergeBy,
    head: &str,
    base: &str,
) -> Result<String, ControlError> {
    let email = format!("flotilla@{}", ctx.host);
    let who = (by == MergeBy::Coordinator).then_some(("Flotilla coordinator", email.as_str()));
    let message = format!(
        "Merge claim {}: {}\n\n{} at {}",
        claim.id,
        claim.title,
        claim.branch,
        short(head)
    );
    let unmerged = |e| {
        conflict(format!(
            "{} does not merge cleanly into {}: {e}",
            claim.branch, claim.base
        ))
        .with_hint("bring the branch up to date in its worktree, review it again, then merge")
    };
    let main = &repo.git;
    if main.current_branch().await.map_err(git_error)?.as_deref() == Some(claim.base.as_str()) {
        if !main.is_clean().await.map_err(git_error)? {
            return Err(conflict(format!(
                "{} has uncommitted changes on {}",
                main.dir().display(),
                claim.base
            ))
            .with_hint("commit or put them aside, then merge"));
        }
        main.merge_no_ff(&claim.branch, &message, who)
            .await
            .map_err(unmerged)?;
        return commit(main, "HEAD", "has no HEAD").await;
    }
    let dir = scratch(repo, claim, "merge").await?;
    main.add_detached_worktree(&dir, base)
        .await
        .map_err(git_error)?;
    let scratch_git = Git::at(&dir);
    let merged = match scratch_git.merge_no_ff(&claim.branch, &message, who).await {
        Ok(()) => commit(&scratch_git, "HEAD", "has no HEAD").await,
        Err(e) => Err(unmerged(e)),
    };
    let moved = match &merged {
        Ok(new) => main.move_branch(&claim.base, new, base).await.map_err(|_| {
            conflict(format!("{} moved while the merge was made", claim.base))
                .with_hint("merge again")
        }),
        Err(_) => Ok(()),
    };
    let _ = main.remove_worktree(&dir).await;
    moved?;
    merged
}

/// A scratch worktree's place for `claim`, free.
async fn scratch(
    repo: &Repo,
    claim: &ClaimState,
    what: &str,
) -> Result<std::path::PathBuf, ControlError> {
    let dir = repo
        .worktrees
        .join(format!(".{what}"))
        .join(claim.id.as_str());
    let parent = dir.parent().unwrap_or(&repo.worktrees);
    crate::home::create_private(parent).map_err(|e| ControlError::internal(e.to_string()))?;
    repo.git.remove_worktree(&dir).await.map_err(git_error)?;
    Ok(dir)
}

async fn commit(git: &Git, rev: &str, missing: &str) -> Result<String, ControlError> {
    git.commit_of(rev)
        .await
        .map_err(git_error)?
        .ok_or_else(|| conflict(format!("{rev} {missing}")))
}

/// Whether `peer` names an agent of this host (a lane, or an interactive
/// agent session), which never merges as a person.
fn is_agent(ctx: &HostContext, peer: &str) -> bool {
    let name = peer.rsplit('/').next().unwrap_or(peer);
    let Ok(name) = flotilla_actors::names::PeerName::new(name) else {
        return false;
    };
    let id = flotilla_actors::names::PeerId::new(ctx.host.clone(), name);
    let kind = ctx.directory().get(&id).map(|p| p.kind);
    matches!(kind, Some(PeerKind::Lane | PeerKind::Session))
}

fn conflict(message: String) -> ControlError {
    ControlError::new(ErrorCode::Conflict, message)
}

fn forbidden(message: String) -> ControlError {
    ControlError::new(ErrorCode::Forbidden, message)
}
