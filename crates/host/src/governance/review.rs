//! `review` and `gate`: a reviewer lane of another model family judges a
//! claim's branch at one commit, in a detached worktree of exactly that
//! commit; its verdict (a fixed JSON shape, bounced once with what was
//! wrong, then recorded as bounced) becomes a run record bound to the
//! commit and the hash of the diff it was shown.
//!
//! Owns gathering the packet's facts and driving the reviewer's lane. The
//! rules (families, tiers, the verdict's shape, the gate's standing) are
//! `flotilla_actors::governance`'s. Must not write to the claim's worktree.

use std::sync::Arc;

use flotilla_actors::governance::gate::short;
use flotilla_actors::governance::{
    Board, ClaimState, Entry, GateOutcome, GateRecord, ReviewPacket, decide, diff_sha256, sandbox,
    standing,
};
use flotilla_actors::lane::{CliKind, Permissions};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, GateArgs, GateReply, LaneStartArgs, ReviewArgs,
};

use super::claims::{append, open_claim};
use super::{Repo, git_error, reviewer_lane};
use crate::context::HostContext;

/// `review`.
pub(crate) async fn review(
    ctx: &Arc<HostContext>,
    args: ReviewArgs,
) -> Result<GateReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    let (board, _, _) = repo.board().await?;
    let (claim, head) = target(&repo, &board, &args.target).await?;
    let base = repo
        .git
        .merge_base(&claim.base, &head)
        .await
        .map_err(git_error)?;
    if base == head {
        return Err(conflict(format!(
            "nothing to review: {} has no commit past {}",
            claim.branch, claim.base
        )));
    }
    let author = claim
        .cli
        .clone()
        .ok_or_else(|| conflict(format!("no lane has worked on claim {}", claim.id)))?;
    let policy = &repo.policy;
    let named = args.reviewer.map(|c| c.as_str());
    let reviewer = policy
        .review
        .reviewer_for(&author, named)
        .map_err(|e| ControlError::new(ErrorCode::Forbidden, e))?;
    let reviewer_cli: CliKind = reviewer
        .parse()
        .map_err(|e: String| ControlError::new(ErrorCode::BadRequest, e))?;
    let rule = policy.sandbox_for(&reviewer);
    sandbox::check(reviewer_cli, Permissions::Default, rule).map_err(|refusal| {
        ControlError::new(ErrorCode::Forbidden, format!("the reviewer: {refusal}")).with_hint(
            format!(
                "pick another reviewer (--reviewer CLI), or set [cli.{reviewer}] sandbox = \"off\" in your own policy.toml"
            ),
        )
    })?;
    let touched = repo.git.touched(&base, &head).await.map_err(git_error)?;
    let paths: Vec<&str> = touched.iter().map(String::as_str).collect();
    let tier = decide(&policy.tiers, &paths, args.tier.as_deref())
        .map_err(|e| ControlError::new(ErrorCode::BadRequest, e.to_string()))?;
    let diff = repo.git.diff(&base, &head).await.map_err(git_error)?;
    let family = |cli: &str| policy.review.family(cli).map(str::to_owned);
    let packet = ReviewPacket {
        claim: claim.id.to_string(),
        title: claim.title.clone(),
        brief: claim.brief.clone(),
        base: base.clone(),
        head: head.clone(),
        checklist: policy.tiers.checklist_for(&tier.tier).to_vec(),
        tier: tier.clone(),
        diff_sha256: diff_sha256(&diff),
        diff,
        author_family: family(&author).unwrap_or_else(|| format!("none ({author})")),
        reviewer_family: family(&reviewer).unwrap_or_default(),
    };
    let round = claim.gate.as_ref().map_or(1, |g| g.round + 1);
    let start = start_args(&repo, claim, round, reviewer_cli, &args, &packet).await?;
    let judged = reviewer_lane::judge(ctx, start).await;
    let _ = repo
        .git
        .remove_worktree(&review_dir(&repo, claim, round))
        .await;
    let (lane, said) = judged?;
    let record = GateRecord {
        commit: head.clone(),
        base,
        diff_sha256: packet.diff_sha256,
        tier: tier.tier,
        requested_tier: args.tier,
        author_family: family(&author),
        author,
        reviewer_family: packet.reviewer_family,
        reviewer,
        lane,
        outcome: match &said {
            Ok(v) if v.blocking.is_empty() => GateOutcome::Pass,
            Ok(_) => GateOutcome::Fail,
            Err(_) => GateOutcome::Bounced,
        },
        bounced: said.as_ref().err().cloned(),
        blocking: said
            .as_ref()
            .map(|v| v.blocking.clone())
            .unwrap_or_default(),
        notes: said.map(|v| v.notes).unwrap_or_default(),
    };
    {
        let _turn = ctx.repo_locks.lock(repo.git.dir()).await;
        append(ctx, &repo, &claim.id, Entry::Gate(Box::new(record))).await?;
    }
    gate_of(&repo, &claim.id).await
}

/// `gate`.
pub(crate) async fn gate(ctx: &HostContext, args: GateArgs) -> Result<GateReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    gate_of(&repo, &args.id).await
}

async fn gate_of(
    repo: &Repo,
    id: &flotilla_actors::governance::ClaimId,
) -> Result<GateReply, ControlError> {
    let (board, _, _) = repo.board().await?;
    let claim = open_claim(&board, id)?;
    let head = repo
        .git
        .commit_of(&claim.branch)
        .await
        .map_err(git_error)?
        .unwrap_or_default();
    Ok(GateReply {
        schema: "flotilla.gate.v1".into(),
        repo: repo.git.dir().to_string_lossy().into_owned(),
        claim: id.clone(),
        standing: standing(id.as_str(), claim.gate.as_ref(), &head),
        head,
        gate: claim.gate.clone(),
    })
}

/// The claim and commit `target` names: a claim (at its branch's head), or
/// a commit on exactly one open claim's branch.
async fn target<'b>(
    repo: &Repo,
    board: &'b Board,
    target: &str,
) -> Result<(&'b ClaimState, String), ControlError> {
    if let Ok(id) = flotilla_actors::governance::ClaimId::parse(target)
        && board.has(&id)
    {
        let claim = open_claim(board, &id)?;
        let head = repo.git.commit_of(&claim.branch).await.map_err(git_error)?;
        let head = head.ok_or_else(|| {
            conflict(format!(
                "claim {id} has no branch yet: no lane has worked on it"
            ))
        })?;
        return Ok((claim, head));
    }
    let commit = repo
        .git
        .commit_of(target)
        .await
        .map_err(git_error)?
        .ok_or_else(|| {
            ControlError::new(
                ErrorCode::NotFound,
                format!("{target:?} is neither a claim nor a commit here"),
            )
            .with_hint("`flotilla claim list` lists the claims")
        })?;
    let mut found = Vec::new();
    for claim in board
        .claims
        .iter()
        .filter(|c| open_claim(board, &c.id).is_ok())
    {
        if repo
            .git
            .is_ancestor(&commit, &claim.branch)
            .await
            .unwrap_or(false)
        {
            found.push(claim);
        }
    }
    match found.as_slice() {
        [claim] => Ok((*claim, commit)),
        [] => Err(ControlError::new(
            ErrorCode::NotFound,
            format!("commit {} is on no claim's branch", short(&commit)),
        )),
        _ => Err(conflict(format!(
            "commit {} is on several claims' branches; name the claim",
            short(&commit)
        ))),
    }
}

fn review_dir(repo: &Repo, claim: &ClaimState, round: u32) -> std::path::PathBuf {
    repo.worktrees
        .join(".review")
        .join(format!("{}-r{round}", claim.id))
}

/// The reviewer lane's start: a detached worktree of exactly `head`.
async fn start_args(
    repo: &Repo,
    claim: &ClaimState,
    round: u32,
    cli: CliKind,
    args: &ReviewArgs,
    packet: &ReviewPacket,
) -> Result<LaneStartArgs, ControlError> {
    let dir = review_dir(repo, claim, round);
    let parent = dir.parent().unwrap_or(&repo.worktrees);
    crate::home::create_private(parent).map_err(|e| ControlError::internal(e.to_string()))?;
    repo.git.remove_worktree(&dir).await.map_err(git_error)?;
    repo.git
        .add_detached_worktree(&dir, &packet.head)
        .await
        .map_err(git_error)?;
    let json = serde_json::json!({
        "name": format!("review-{}-r{round}", claim.id),
        "cli": cli,
        "cwd": dir.to_string_lossy(),
        "model": args.model,
        "timeout_secs": args.timeout_secs,
        "persistent": true,
        "auto_archive_secs": 600,
        "prompt": packet.prompt(),
    });
    serde_json::from_value(json).map_err(|e| ControlError::internal(e.to_string()))
}

fn conflict(message: String) -> ControlError {
    ControlError::new(ErrorCode::Conflict, message)
}
