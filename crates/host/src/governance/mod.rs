//! Governed delivery on this host: claims of git repositories, each worked
//! on in its own branch and worktree, with run records in the repository.
//!
//! Owns opening a repository with its policy ([`Repo`]), one writer per
//! repository at a time ([`RepoLocks`]), the claim ops ([`claims`]) and
//! putting a lane into its claim's worktree ([`lanes`]), and a repository's
//! readiness ([`ready`]). The rules live in
//! `flotilla_actors::governance`; git runs only through [`git`].

pub(crate) mod change;
pub(crate) mod claims;
pub mod git;
mod hooks;
pub(crate) mod lanes;
pub(crate) mod merge;
pub(crate) mod policy_file;
pub(crate) mod ready;
mod ready_plan;
mod ready_probe;
pub(crate) mod review;
mod reviewer_lane;
pub(crate) mod turns;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use flotilla_actors::governance::policy::Policy;
use flotilla_actors::governance::{Board, ClaimId};
use flotilla_actors::protocol::{ControlError, ErrorCode};

use crate::context::HostContext;
use git::{Git, GitError};

/// One lock per repository: claims and their records are written by one
/// request at a time.
#[derive(Debug, Default)]
pub struct RepoLocks(Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>);

impl RepoLocks {
    /// Waits for `repo`'s turn.
    pub(crate) async fn lock(&self, repo: &Path) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = match self.0.lock() {
            Ok(mut map) => map.entry(repo.to_path_buf()).or_default().clone(),
            Err(poisoned) => poisoned
                .into_inner()
                .entry(repo.to_path_buf())
                .or_default()
                .clone(),
        };
        lock.lock_owned().await
    }
}

/// A repository opened for claims, with its policy.
#[derive(Debug)]
pub(crate) struct Repo {
    pub(crate) git: Git,
    pub(crate) policy: Policy,
    /// Where its claims' worktrees go on this host.
    pub(crate) worktrees: PathBuf,
}

impl Repo {
    /// Opens the repository `dir` is in (an absolute path), reading the
    /// user's policy over the repository's.
    pub(crate) async fn open(ctx: &HostContext, dir: &str) -> Result<Self, ControlError> {
        let dir = Path::new(dir);
        if !dir.is_absolute() {
            return Err(ControlError::new(
                ErrorCode::BadRequest,
                format!("the repository path {} is not absolute", dir.display()),
            ));
        }
        let git = Git::open(dir).await.map_err(git_error)?;
        let (_, policy) = policy_file::load(&ctx.home.policy_file(), Some(git.dir()));
        let policy = policy.map_err(|e| {
            ControlError::new(ErrorCode::BadRequest, e).with_hint(
                "`flotilla policy check REPO` shows the policy and what is wrong with it",
            )
        })?;
        let common = git.common_dir().await.map_err(git_error)?;
        let worktrees = ctx.home.worktrees_dir().join(repo_key(git.dir(), &common));
        Ok(Self {
            git,
            policy,
            worktrees,
        })
    }

    /// Its board and the notes of records skipped.
    pub(crate) async fn board(&self) -> Result<(Board, Vec<String>, u32), ControlError> {
        let read = self.git.records().await.map_err(git_error)?;
        let mut notes = Vec::new();
        let records: Vec<_> = read
            .iter()
            .filter_map(|r| r.as_ref().map_err(|e| notes.push(e.to_string())).ok())
            .collect();
        let (board, skipped) = Board::fold(records.iter().copied());
        notes.extend(skipped);
        Ok((board, notes, read.len() as u32))
    }

    /// The worktree of `id` on this host.
    pub(crate) fn worktree(&self, id: &ClaimId) -> PathBuf {
        self.worktrees.join(id.as_str())
    }

    /// The hooks directory of `id`'s worktree.
    pub(crate) fn hooks(&self, id: &ClaimId) -> PathBuf {
        self.worktrees.join(".hooks").join(id.as_str())
    }
}

/// A directory name for a repository's worktrees: its name and a hash of
/// its git directory, so two repositories of one name stay apart.
fn repo_key(top: &Path, common: &Path) -> String {
    let common = common
        .canonicalize()
        .unwrap_or_else(|_| common.to_path_buf());
    let digest = ring::digest::digest(&ring::digest::SHA256, common.as_os_str().as_encoded_bytes());
    let hex: String = digest.as_ref()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name: String = top
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect()
        })
        .unwrap_or_default();
    format!("{name}-{hex}")
}

/// A git failure as the client sees it.
pub(crate) fn git_error(e: GitError) -> ControlError {
    let code = match e {
        GitError::NotARepo(_) => ErrorCode::NotFound,
        GitError::Missing => ErrorCode::Unavailable,
        GitError::Moved => ErrorCode::Conflict,
        GitError::TimedOut(_) => ErrorCode::TimedOut,
        _ => ErrorCode::Internal,
    };
    ControlError::new(code, e.to_string())
}
