//! Putting a lane into its claim's worktree (`lane.start` with `claim`).
//!
//! The claim's branch and worktree are made on the first lane; the
//! worktree's pre-push hook refuses protected branches; one lane holds a
//! worktree at a time; the policy's concurrency and permission ceiling
//! hold. A lane started without a claim may not work inside a claim's
//! worktree. Must not create the lane itself (the lane supervisor does);
//! [`start`] is the one way a lane starts with these rules (`lane.start`
//! and a fleet's members alike).

use std::path::Path;

use flotilla_actors::fleet::MemberSpec;
use flotilla_actors::governance::{ClaimId, ClaimState, Entry, sandbox};
use flotilla_actors::lane::{CliKind, LanePhase, Permissions};
use flotilla_actors::protocol::{ControlError, ErrorCode, LaneStartArgs, LaneStartReply};
use tokio::sync::OwnedMutexGuard;

use super::claims::{append, local_lane, open_claim};
use super::{Repo, git_error, hooks};
use crate::context::HostContext;

/// Starts a lane under these rules: readied for its claim (or refused in
/// a claim's worktree without one), started by the lane supervisor, and
/// recorded in its claim's run records.
pub(crate) async fn start(
    ctx: &HostContext,
    mut args: LaneStartArgs,
) -> Result<LaneStartReply, ControlError> {
    let sup = ctx
        .children
        .lanes()
        .ok_or_else(|| ControlError::unavailable("the lane supervisor"))?;
    let claim = prepare(ctx, &mut args).await?;
    let cli = args.cli;
    let reply = crate::lanes::call(&sup, |r| {
        crate::lanes::LaneSupervisorMsg::Start(Box::new(args), r)
    })
    .await?;
    if let Some(claim) = claim {
        claim
            .started(ctx, &reply.lane.to_string(), cli.as_str())
            .await?;
    }
    Ok(reply)
}

/// Checks a fleet's claimed workers before it starts: each claim is an
/// open claim of the repository at `dir` with a free worktree, each
/// worker's mode is within the policy's ceiling and sandbox rule, and all
/// the claims may be in flight at once under the policy's concurrency.
pub(crate) async fn check_fleet_claims(
    ctx: &HostContext,
    dir: &str,
    workers: &[&MemberSpec],
) -> Result<(), ControlError> {
    let ids: Vec<ClaimId> = workers.iter().filter_map(|w| w.claim.clone()).collect();
    let repo = Repo::open(ctx, dir).await?;
    let top = repo.git.dir();
    if Path::new(dir).canonicalize().ok().as_deref() != top.canonicalize().ok().as_deref() {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!(
                "{dir} is inside the repository {}, not its top: a claim's worktree holds the whole repository",
                top.display()
            ),
        )
        .with_hint(format!("start the fleet with -C {}", top.display())));
    }
    let (board, _, _) = repo.board().await?;
    for worker in workers {
        if let Some(id) = &worker.claim {
            check_worktree_free(ctx, open_claim(&board, id)?).await?;
            check_permissions(&repo, worker.cli, worker.permissions)?;
        }
    }
    board
        .may_start_all(&ids, repo.policy.concurrency)
        .map_err(|refusal| ControlError::new(ErrorCode::Conflict, refusal.to_string()))
}

/// A lane about to start in a claim's worktree: the repository stays
/// locked until the lane's record is written.
#[derive(Debug)]
pub(crate) struct ClaimLane {
    repo: Repo,
    id: ClaimId,
    _turn: OwnedMutexGuard<()>,
}

/// Readies `args` for its claim: checks the rules, makes the branch and
/// worktree if they are not there, and points the lane's directory at the
/// worktree. Without a claim, refuses a directory inside a claim's worktree.
async fn prepare(
    ctx: &HostContext,
    args: &mut LaneStartArgs,
) -> Result<Option<ClaimLane>, ControlError> {
    let Some(id) = args.claim.clone() else {
        refuse_plain_lane_in_worktree(ctx, args.cwd.as_deref())?;
        return Ok(None);
    };
    if args.owner.is_some() {
        return Err(ControlError::new(
            ErrorCode::Forbidden,
            "a lane placed from another host cannot take a claim here",
        )
        .with_hint("start the claim's lane on the host with the repository"));
    }
    let dir = args.cwd.clone().ok_or_else(|| {
        ControlError::new(
            ErrorCode::BadRequest,
            "a lane with --claim needs its repository",
        )
        .with_hint("pass -C REPO")
    })?;
    let repo = Repo::open(ctx, &dir).await?;
    let turn = ctx.repo_locks.lock(repo.git.dir()).await;
    let (board, _, _) = repo.board().await?;
    let claim = open_claim(&board, &id)?;
    check_permissions(&repo, args.cli, args.permissions)?;
    check_worktree_free(ctx, claim).await?;
    board
        .may_start(&id, repo.policy.concurrency)
        .map_err(|refusal| ControlError::new(ErrorCode::Conflict, refusal.to_string()))?;
    let worktree = ready_worktree(&repo, claim).await?;
    args.cwd = Some(worktree.to_string_lossy().into_owned());
    Ok(Some(ClaimLane {
        repo,
        id,
        _turn: turn,
    }))
}

impl ClaimLane {
    /// Records that `lane` started in the claim's worktree.
    pub(crate) async fn started(
        self,
        ctx: &HostContext,
        lane: &str,
        cli: &str,
    ) -> Result<(), ControlError> {
        let worktree = self.repo.worktree(&self.id).to_string_lossy().into_owned();
        let entry = Entry::Lane {
            lane: lane.to_owned(),
            cli: cli.to_owned(),
            worktree,
        };
        append(ctx, &self.repo, &self.id, entry).await
    }
}

fn check_permissions(repo: &Repo, kind: CliKind, mode: Permissions) -> Result<(), ControlError> {
    let cli = kind.as_str();
    let ceiling = repo.policy.permissions_for(cli);
    let rank = |p: Permissions| {
        Permissions::ALL
            .iter()
            .position(|q| *q == p)
            .unwrap_or(usize::MAX)
    };
    if rank(mode) > rank(ceiling) {
        return Err(ControlError::new(
            ErrorCode::Forbidden,
            format!(
                "the policy allows a {cli} lane in a claim at most --permissions {}, not {}",
                ceiling.as_str(),
                mode.as_str()
            ),
        )
        .with_hint(format!(
            "set [cli.{cli}] permissions in policy.toml to allow more"
        )));
    }
    let rule = repo.policy.sandbox_for(cli);
    sandbox::check(kind, mode, rule).map_err(|refusal| {
        let off = format!("or set [cli.{cli}] sandbox = \"off\" in your own policy.toml");
        let hint = match refusal.confined {
            Some(mode) if rank(mode) > rank(ceiling) => format!(
                "pass --permissions {0} and allow it with [cli.{cli}] permissions = \"{0}\", {off}",
                mode.as_str()
            ),
            Some(mode) => format!("pass --permissions {}, {off}", mode.as_str()),
            None => format!("use another CLI, {off}"),
        };
        ControlError::new(ErrorCode::Forbidden, refusal.to_string()).with_hint(hint)
    })
}

/// One lane per worktree: the claim's last lane must be gone or archived.
async fn check_worktree_free(ctx: &HostContext, claim: &ClaimState) -> Result<(), ControlError> {
    match local_lane(ctx, claim).await {
        Some(view) if view.phase != LanePhase::Archived => Err(ControlError::new(
            ErrorCode::Conflict,
            format!("claim {}'s worktree is lane {}'s", claim.id, view.lane),
        )
        .with_hint(format!(
            "give that lane the next turn (flotilla lane resume {}), or remove it first (flotilla lane rm {})",
            view.lane.name, view.lane.name
        ))),
        _ => Ok(()),
    }
}

/// The claim's worktree, made with its branch and hooks when missing.
async fn ready_worktree(
    repo: &Repo,
    claim: &ClaimState,
) -> Result<std::path::PathBuf, ControlError> {
    let worktree = repo.worktree(&claim.id);
    if worktree.join(".git").exists() {
        return Ok(worktree);
    }
    crate::home::create_private(&repo.worktrees)
        .map_err(|e| ControlError::internal(e.to_string()))?;
    repo.git
        .ensure_branch(&claim.branch, &claim.base)
        .await
        .map_err(git_error)?;
    repo.git
        .remove_worktree(&worktree)
        .await
        .map_err(git_error)?;
    repo.git
        .add_worktree(&worktree, &claim.branch)
        .await
        .map_err(git_error)?;
    let own = repo.git.hooks_dir().await.map_err(git_error)?;
    let id = claim.id.as_str();
    let policy = &repo.policy;
    let scripts = [
        (
            "pre-push",
            hooks::pre_push(id, &claim.base, &policy.protected, &own.join("pre-push")),
        ),
        (
            "pre-commit",
            hooks::pre_commit(id, &policy.sensitive, &own.join("pre-commit")),
        ),
    ];
    let dir = repo.hooks(&claim.id);
    hooks::write(&dir, &scripts, &own).map_err(|e| {
        ControlError::internal(format!("cannot write the hooks of {}: {e}", dir.display()))
    })?;
    repo.git
        .use_hooks(&worktree, &dir)
        .await
        .map_err(git_error)?;
    protect_sensitive(repo, &worktree).await?;
    Ok(worktree)
}

/// Makes every tracked sensitive file of a new worktree read-only, so a
/// lane's write there fails before any commit is tried.
async fn protect_sensitive(repo: &Repo, worktree: &Path) -> Result<(), ControlError> {
    use std::os::unix::fs::PermissionsExt;
    let tracked = super::git::Git::at(worktree)
        .tracked()
        .await
        .map_err(git_error)?;
    for path in tracked.iter().filter(|p| repo.policy.is_sensitive(p)) {
        let file = worktree.join(path);
        if let Ok(meta) = std::fs::symlink_metadata(&file)
            && meta.is_file()
        {
            let mode = meta.permissions().mode() & !0o222;
            let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode));
        }
    }
    Ok(())
}

fn refuse_plain_lane_in_worktree(ctx: &HostContext, cwd: Option<&str>) -> Result<(), ControlError> {
    let root = ctx.home.worktrees_dir();
    let Some(cwd) = cwd.map(Path::new) else {
        return Ok(());
    };
    let Ok(inside) = cwd.strip_prefix(&root) else {
        return Ok(());
    };
    let claim = inside
        .components()
        .nth(1)
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    Err(ControlError::new(
        ErrorCode::Conflict,
        format!(
            "{} is a claim's worktree; a lane there must take the claim",
            cwd.display()
        ),
    )
    .with_hint(match claim {
        Some(id) => format!("pass --claim {id} -C REPO"),
        None => "pass --claim ID -C REPO".to_owned(),
    }))
}
