//! The claim ops: `claim.add`, `claim.show`, `claim.drop` and `board`.
//!
//! Every change is a run record appended to the repository (retried when
//! another lands first) and then pushed to the policy's remote, when the
//! repository has it, in the background. Must not start lanes ([`super::lanes`]
//! puts a lane in a claim's worktree).

use flotilla_actors::governance::{Board, ClaimId, ClaimState, Entry, Record, standing};
use flotilla_actors::lane::LanePhase;
use flotilla_actors::model::Timestamp;
use flotilla_actors::protocol::{
    BoardArgs, BoardReply, ClaimAddArgs, ClaimDropArgs, ClaimReply, ClaimShowArgs, ClaimView,
    ControlError, ErrorCode, HistoryLine, LaneView,
};

use super::git::GitError;
use super::{Repo, git_error};
use crate::context::HostContext;

/// Tries of one record against records landing at the same moment.
const APPEND_TRIES: u32 = 5;
/// Longest title and brief.
const MAX_TITLE: usize = 200;
const MAX_BRIEF: usize = 64 * 1024;

/// `claim.add`.
pub(crate) async fn add(ctx: &HostContext, args: ClaimAddArgs) -> Result<ClaimReply, ControlError> {
    let title = args.title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE || title.contains('\n') {
        return Err(bad("a claim's title is one line of 1 to 200 characters"));
    }
    if args.brief.as_ref().is_some_and(|b| b.len() > MAX_BRIEF) {
        return Err(bad("the brief is over 64 KiB; shorten it"));
    }
    let repo = Repo::open(ctx, &args.repo).await?;
    let _turn = ctx.repo_locks.lock(repo.git.dir()).await;
    let base = base_of(&repo).await?;
    for _ in 0..APPEND_TRIES {
        let (board, _, _) = repo.board().await?;
        let id = ClaimId::for_title(title, |id| board.has(id));
        let entry = Entry::Claim {
            title: title.to_owned(),
            branch: id.branch(),
            base: base.clone(),
            brief: args.brief.clone(),
        };
        match repo
            .git
            .append(
                &Record::new(id.clone(), entry, ctx.host.as_str(), Timestamp::now()),
                ctx.host.as_str(),
            )
            .await
        {
            Ok(_) => {
                push_later(&repo);
                return show_in(ctx, &repo, &id).await;
            }
            Err(GitError::Moved) => continue,
            Err(e) => return Err(git_error(e)),
        }
    }
    Err(git_error(GitError::Moved).with_hint("try again"))
}

/// Appends one record about a claim that exists, retrying when another
/// lands first, then pushes it later.
pub(crate) async fn append(
    ctx: &HostContext,
    repo: &Repo,
    id: &ClaimId,
    entry: Entry,
) -> Result<(), ControlError> {
    let record = Record::new(id.clone(), entry, ctx.host.as_str(), Timestamp::now());
    for _ in 0..APPEND_TRIES {
        match repo.git.append(&record, ctx.host.as_str()).await {
            Ok(_) => {
                push_later(repo);
                return Ok(());
            }
            Err(GitError::Moved) => continue,
            Err(e) => return Err(git_error(e)),
        }
    }
    Err(git_error(GitError::Moved).with_hint("try again"))
}

/// `claim.show`.
pub(crate) async fn show(
    ctx: &HostContext,
    args: ClaimShowArgs,
) -> Result<ClaimReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    show_in(ctx, &repo, &args.id).await
}

/// `claim.drop`: refused while its lane runs; the worktree goes unless kept.
pub(crate) async fn drop(
    ctx: &HostContext,
    args: ClaimDropArgs,
) -> Result<ClaimReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    let _turn = ctx.repo_locks.lock(repo.git.dir()).await;
    let (board, _, _) = repo.board().await?;
    let claim = open_claim(&board, &args.id)?;
    if let Some(view) = local_lane(ctx, claim).await
        && view.phase == LanePhase::Running
    {
        return Err(ControlError::new(
            ErrorCode::Conflict,
            format!(
                "lane {} is running in claim {}'s worktree",
                view.lane, args.id
            ),
        )
        .with_hint(format!(
            "interrupt it first: flotilla lane interrupt {}",
            view.lane.name
        )));
    }
    if !args.keep {
        repo.git
            .remove_worktree(&repo.worktree(&args.id))
            .await
            .map_err(git_error)?;
        let _ = std::fs::remove_dir_all(repo.hooks(&args.id));
    }
    append(ctx, &repo, &args.id, Entry::Drop { kept: args.keep }).await?;
    show_in(ctx, &repo, &args.id).await
}

/// `board`: the claims folded from the records, fetched first with `rebuild`.
pub(crate) async fn board(ctx: &HostContext, args: BoardArgs) -> Result<BoardReply, ControlError> {
    let repo = Repo::open(ctx, &args.repo).await?;
    let mut fetched_from = None;
    if args.rebuild
        && repo
            .git
            .has_remote(&repo.policy.remote)
            .await
            .map_err(git_error)?
    {
        repo.git.fetch_records(&repo.policy.remote).await.map_err(|e| {
            ControlError::new(ErrorCode::Unavailable, format!("cannot fetch the run records: {e}"))
                .with_hint("check the remote, or run `flotilla board` without --rebuild for the records here")
        })?;
        fetched_from = Some(repo.policy.remote.clone());
    }
    let (board, notes, records) = repo.board().await?;
    let mut claims = Vec::new();
    for state in board.claims {
        claims.push(view(ctx, &repo, state).await);
    }
    Ok(BoardReply {
        schema: "flotilla.board.v1".into(),
        repo: repo.git.dir().to_string_lossy().into_owned(),
        records,
        fetched_from,
        claims,
        notes,
    })
}

/// A claim that exists and was not dropped.
pub(crate) fn open_claim<'b>(
    board: &'b Board,
    id: &ClaimId,
) -> Result<&'b ClaimState, ControlError> {
    let claim = board.get(id).ok_or_else(|| {
        ControlError::new(
            ErrorCode::NotFound,
            format!("no claim {id} in this repository"),
        )
        .with_hint("`flotilla claim list` lists its claims")
    })?;
    if claim.status == flotilla_actors::governance::ClaimStatus::Merged {
        return Err(
            ControlError::new(ErrorCode::Conflict, format!("claim {id} was merged"))
                .with_hint("add a new claim for more work: flotilla claim add REPO TITLE"),
        );
    }
    if claim.status == flotilla_actors::governance::ClaimStatus::Dropped {
        return Err(
            ControlError::new(ErrorCode::Conflict, format!("claim {id} was dropped"))
                .with_hint("add it again: flotilla claim add REPO TITLE"),
        );
    }
    Ok(claim)
}

/// The claim's last lane, when it is a lane of this host that still exists.
pub(crate) async fn local_lane(ctx: &HostContext, claim: &ClaimState) -> Option<LaneView> {
    let id: flotilla_actors::names::PeerId = claim.lane.as_deref()?.parse().ok()?;
    if id.host != ctx.host {
        return None;
    }
    let lane = crate::control::lane_ref(ctx, &id.name).await.ok()?;
    crate::control::lane_view(&lane).await.ok()
}

pub(crate) async fn show_in(
    ctx: &HostContext,
    repo: &Repo,
    id: &ClaimId,
) -> Result<ClaimReply, ControlError> {
    let read = repo.git.records().await.map_err(git_error)?;
    let records: Vec<Record> = read.into_iter().flatten().collect();
    let (board, _) = Board::fold(&records);
    let state = board.get(id).cloned().ok_or_else(|| {
        ControlError::new(
            ErrorCode::NotFound,
            format!("no claim {id} in this repository"),
        )
        .with_hint("`flotilla claim list` lists its claims")
    })?;
    let history = records
        .iter()
        .filter(|r| &r.claim == id)
        .map(history_line)
        .collect();
    Ok(ClaimReply {
        schema: "flotilla.claim.v1".into(),
        repo: repo.git.dir().to_string_lossy().into_owned(),
        claim: view(ctx, repo, state).await,
        history,
    })
}

async fn view(ctx: &HostContext, repo: &Repo, state: ClaimState) -> ClaimView {
    let lane_phase = local_lane(ctx, &state).await.map(|v| v.phase);
    let worktree_here = repo.worktree(&state.id).join(".git").exists();
    let head = match state.gate {
        Some(_) => repo.git.commit_of(&state.branch).await.ok().flatten(),
        None => None,
    };
    let head = head.unwrap_or_default();
    let gate_standing = standing(state.id.as_str(), state.gate.as_ref(), &head);
    ClaimView {
        state,
        lane_phase,
        worktree_here,
        gate_standing,
    }
}

fn history_line(record: &Record) -> HistoryLine {
    let summary = match &record.entry {
        Entry::Claim {
            title,
            branch,
            base,
            ..
        } => format!("added {title:?}: {branch} from {base}"),
        Entry::Lane { lane, cli, .. } => format!("lane {lane} ({cli}) started in its worktree"),
        Entry::Turn {
            lane, status, head, ..
        } => match head {
            Some(head) => format!("{lane}'s turn {status} at {}", &head[..head.len().min(12)]),
            None => format!("{lane}'s turn {status}"),
        },
        Entry::Handoff { lane, note } => {
            let whose = if note.from_member {
                "its own"
            } else {
                "the daemon's"
            };
            format!("{lane} handed over to a fresh session with {whose} note")
        }
        Entry::Gate(g) => format!(
            "review by {} ({}) at tier {} of {}: {}",
            g.reviewer,
            g.reviewer_family,
            g.tier,
            &g.commit[..g.commit.len().min(12)],
            serde_json::to_value(g.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
        Entry::Merge {
            by,
            commit,
            base,
            without_gate,
            ..
        } => format!(
            "merged into {base} as {} by the {}{}",
            &commit[..commit.len().min(12)],
            if *by == flotilla_actors::governance::merge::MergeBy::Human {
                "person"
            } else {
                "coordinator"
            },
            if *without_gate {
                ", without a passed gate"
            } else {
                ""
            }
        ),
        Entry::Change {
            forge,
            url,
            commits,
            ..
        } => match url {
            Some(url) => format!("change request opened: {url}"),
            None => format!("{forge:?} change record: {} commit(s)", commits.len()).to_lowercase(),
        },
        Entry::Drop { kept: true } => "dropped; worktree kept".to_owned(),
        Entry::Drop { kept: false } => "dropped; worktree removed".to_owned(),
        _ => record.entry.kind().to_owned(),
    };
    HistoryLine {
        at: record.at,
        host: record.host.clone(),
        kind: record.entry.kind().into(),
        summary,
    }
}

/// The branch a new claim starts from: the policy's, else the one checked out.
async fn base_of(repo: &Repo) -> Result<String, ControlError> {
    let base = match &repo.policy.base {
        Some(base) => base.clone(),
        None => repo
            .git
            .current_branch()
            .await
            .map_err(git_error)?
            .ok_or_else(|| {
                ControlError::new(
                    ErrorCode::Conflict,
                    "the repository's HEAD is detached, so a claim has no base branch",
                )
                .with_hint("check out a branch, or set `base` in policy.toml")
            })?,
    };
    if repo
        .git
        .commit_of(&base)
        .await
        .map_err(git_error)?
        .is_none()
    {
        return Err(ControlError::new(
            ErrorCode::Conflict,
            format!("the base branch {base} has no commit yet"),
        )
        .with_hint("commit something on it first, or set another `base` in policy.toml"));
    }
    Ok(base)
}

/// Pushes the records to the policy's remote in the background, when the
/// repository has that remote; a failure is logged, the records stay here.
fn push_later(repo: &Repo) {
    let git = repo.git.clone();
    let remote = repo.policy.remote.clone();
    tokio::spawn(async move {
        if !git.has_remote(&remote).await.unwrap_or(false) {
            return;
        }
        if let Err(e) = git.push_records(&remote).await {
            tracing::warn!(repo = %git.dir().display(), %remote, "run records not pushed: {e}");
        }
    });
}

fn bad(message: &str) -> ControlError {
    ControlError::new(ErrorCode::BadRequest, message)
}
