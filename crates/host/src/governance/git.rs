//! The one place the daemon runs git.
//!
//! Chosen on purpose: the `git` command, not a library. Worktrees, hooks
//! and pushes with the user's own credentials and config are what the
//! command does and what users already trust, on Linux and macOS alike;
//! gitoxide does not add worktrees or push yet. Every call runs with no
//! terminal prompt, no inherited `GIT_DIR`, stdin closed and a deadline.
//!
//! Owns the commands and reading their output. Must not decide anything
//! about claims (`flotilla_actors::governance` does).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use flotilla_actors::governance::record::{RECORDS_REF, Record, RecordError};

mod remote;

/// Deadline of one local git command.
const LOCAL: Duration = Duration::from_secs(60);
/// Deadline of a push or fetch.
const NETWORK: Duration = Duration::from_secs(120);

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// `git` is not on the daemon's PATH.
    #[error("git is not installed (not on the daemon's PATH): install git, then try again")]
    Missing,
    /// The directory is not in a git repository.
    #[error("{0} is not inside a git repository: pass the repository's directory")]
    NotARepo(PathBuf),
    /// A command exited with an error.
    #[error("git {args} failed: {stderr}")]
    Failed {
        /// Its arguments.
        args: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A command ran past its deadline.
    #[error("git {0} did not finish in time")]
    TimedOut(String),
    /// The records' ref moved while a record was written.
    #[error("another record was written at the same moment")]
    Moved,
    /// The command could not be run.
    #[error("cannot run git: {0}")]
    Io(#[from] std::io::Error),
}

/// One repository (its top-level directory), or one of its worktrees.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    /// The repository `dir` is in, at its top level.
    pub async fn open(dir: &Path) -> Result<Self, GitError> {
        let probe = Self {
            dir: dir.to_path_buf(),
        };
        match probe.run(&["rev-parse", "--show-toplevel"]).await {
            Ok(top) => Ok(Self {
                dir: PathBuf::from(top),
            }),
            Err(GitError::Failed { .. }) => Err(GitError::NotARepo(dir.to_path_buf())),
            Err(e) => Err(e),
        }
    }

    /// A worktree at `dir`, known to be one.
    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// The top-level directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The repository's common git directory (shared by its worktrees).
    pub async fn common_dir(&self) -> Result<PathBuf, GitError> {
        let dir = PathBuf::from(self.run(&["rev-parse", "--git-common-dir"]).await?);
        Ok(if dir.is_absolute() {
            dir
        } else {
            self.dir.join(dir)
        })
    }

    /// The branch checked out, if any.
    pub async fn current_branch(&self) -> Result<Option<String>, GitError> {
        Ok(self
            .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .await
            .ok())
    }

    /// The commit a revision names, if it names one.
    pub async fn commit_of(&self, rev: &str) -> Result<Option<String>, GitError> {
        let spec = format!("{rev}^{{commit}}");
        Ok(self
            .run(&["rev-parse", "--verify", "--quiet", &spec])
            .await
            .ok())
    }

    /// Creates `branch` at `base` unless it exists.
    pub async fn ensure_branch(&self, branch: &str, base: &str) -> Result<(), GitError> {
        let full = format!("refs/heads/{branch}");
        if self
            .run(&["rev-parse", "--verify", "--quiet", &full])
            .await
            .is_ok()
        {
            return Ok(());
        }
        self.run(&["branch", "--no-track", branch, base])
            .await
            .map(drop)
    }

    /// Adds a worktree at `path` with `branch` checked out.
    pub async fn add_worktree(&self, path: &Path, branch: &str) -> Result<(), GitError> {
        let path = path.to_string_lossy();
        self.run(&["worktree", "add", "--quiet", &path, branch])
            .await
            .map(drop)
    }

    /// Removes the worktree at `path`, changes and all, and forgets it.
    pub async fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        let text = path.to_string_lossy();
        if path.exists() {
            self.run(&["worktree", "remove", "--force", "--force", &text])
                .await?;
        }
        self.run(&["worktree", "prune"]).await.map(drop)
    }

    /// Points the worktree at `dir`'s hooks, for it alone.
    pub async fn use_hooks(&self, worktree: &Path, hooks: &Path) -> Result<(), GitError> {
        self.run(&["config", "extensions.worktreeConfig", "true"])
            .await?;
        let tree = Self::at(worktree);
        let hooks = hooks.to_string_lossy();
        tree.run(&["config", "--worktree", "core.hooksPath", &hooks])
            .await
            .map(drop)
    }

    /// The repository's own hooks directory.
    pub async fn hooks_dir(&self) -> Result<PathBuf, GitError> {
        match self.run(&["config", "--get", "core.hooksPath"]).await {
            Ok(dir) if Path::new(&dir).is_absolute() => Ok(PathBuf::from(dir)),
            Ok(dir) => Ok(self.dir.join(dir)),
            Err(_) => Ok(self.common_dir().await?.join("hooks")),
        }
    }

    /// Every run record, oldest first, each read or why not.
    pub async fn records(&self) -> Result<Vec<Result<Record, RecordError>>, GitError> {
        if self.commit_of(RECORDS_REF).await?.is_none() {
            return Ok(Vec::new());
        }
        let log = self
            .run(&["log", "--reverse", "--format=%B%x1e", RECORDS_REF])
            .await?;
        Ok(log
            .split('\u{1e}')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(Record::from_message)
            .collect())
    }

    /// Appends `record` as one commit on the records' ref; [`GitError::Moved`]
    /// when another record landed first (read again and retry).
    pub async fn append(&self, record: &Record, host: &str) -> Result<String, GitError> {
        let tip = self.commit_of(RECORDS_REF).await?;
        let tree = self
            .run(&["hash-object", "-t", "tree", "-w", "/dev/null"])
            .await?;
        let message = record.to_message();
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
        if let Some(tip) = &tip {
            args.extend(["-p", tip.as_str()]);
        }
        let email = format!("flotilla@{host}");
        let env = identity_env("Flotilla", &email);
        let commit = self.run_env(&args, &env, LOCAL).await?.trim().to_owned();
        let old = tip.unwrap_or_default();
        match self.run(&["update-ref", RECORDS_REF, &commit, &old]).await {
            Ok(_) => Ok(commit),
            Err(GitError::Failed { .. }) => Err(GitError::Moved),
            Err(e) => Err(e),
        }
    }

    /// The best common ancestor of two commits.
    pub async fn merge_base(&self, a: &str, b: &str) -> Result<String, GitError> {
        self.run(&["merge-base", a, b]).await
    }

    /// Whether `commit` is `tip` or one of its ancestors.
    pub async fn is_ancestor(&self, commit: &str, tip: &str) -> Result<bool, GitError> {
        Ok(self
            .run(&["merge-base", "--is-ancestor", commit, tip])
            .await
            .is_ok())
    }

    /// `git diff base head`, whole, with no colour, external tool or renames.
    pub async fn diff(&self, base: &str, head: &str) -> Result<String, GitError> {
        let args = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            base,
            head,
        ];
        self.run_env(&args, &[], LOCAL).await
    }

    /// The paths `git diff base head` touches.
    pub async fn touched(&self, base: &str, head: &str) -> Result<Vec<String>, GitError> {
        let out = self
            .run(&["diff", "--name-only", "--no-renames", "-z", base, head])
            .await?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Adds a worktree at `path` with `commit` checked out, detached.
    pub async fn add_detached_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError> {
        let path = path.to_string_lossy();
        self.run(&["worktree", "add", "--quiet", "--detach", &path, commit])
            .await
            .map(drop)
    }

    /// Every tracked path of the checkout.
    pub async fn tracked(&self) -> Result<Vec<String>, GitError> {
        let out = self.run(&["ls-files", "-z"]).await?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Whether the checkout has no change to tracked files.
    pub async fn is_clean(&self) -> Result<bool, GitError> {
        Ok(self
            .run(&["status", "--porcelain", "--untracked-files=no"])
            .await?
            .is_empty())
    }

    /// Commits everything the checkout has that is not committed (new
    /// files too, `.gitignore` kept) as `identity`, through the hooks;
    /// `None` when there was nothing. A refused commit is unstaged again,
    /// leaving the files as they were.
    pub async fn commit_all(
        &self,
        message: &str,
        identity: (&str, &str),
    ) -> Result<Option<String>, GitError> {
        if self.run(&["status", "--porcelain"]).await?.is_empty() {
            return Ok(None);
        }
        self.run(&["add", "-A"]).await?;
        let env = identity_env(identity.0, identity.1);
        if let Err(e) = self
            .run_env(&["commit", "-q", "-m", message], &env, LOCAL)
            .await
        {
            let _ = self.run(&["reset", "-q"]).await;
            return Err(e);
        }
        self.commit_of("HEAD").await
    }

    /// Merges `branch` into what is checked out with a merge commit, as
    /// `identity` (name, email) when given, else the user's own; a merge
    /// that does not go through cleanly is aborted.
    pub async fn merge_no_ff(
        &self,
        branch: &str,
        message: &str,
        identity: Option<(&str, &str)>,
    ) -> Result<(), GitError> {
        let args = ["merge", "--no-ff", "--no-edit", "-m", message, branch];
        let merged = match identity {
            Some((name, email)) => self.run_env(&args, &identity_env(name, email), LOCAL).await,
            None => self.run(&args).await,
        };
        if merged.is_err() {
            let _ = self.run(&["merge", "--abort"]).await;
        }
        merged.map(drop)
    }

    /// Moves `branch` to `new` if it is still at `old`.
    pub async fn move_branch(&self, branch: &str, new: &str, old: &str) -> Result<(), GitError> {
        let full = format!("refs/heads/{branch}");
        self.run(&["update-ref", &full, new, old]).await.map(drop)
    }

    /// The commits in `base..head`, oldest first.
    pub async fn commits(&self, base: &str, head: &str) -> Result<Vec<String>, GitError> {
        let range = format!("{base}..{head}");
        let out = self.run(&["rev-list", "--reverse", &range]).await?;
        Ok(out.lines().map(str::to_owned).collect())
    }

    async fn run(&self, args: &[&str]) -> Result<String, GitError> {
        Ok(self.run_env(args, &[], LOCAL).await?.trim_end().to_owned())
    }

    async fn run_env(
        &self,
        args: &[&str],
        env: &[(String, &str)],
        deadline: Duration,
    ) -> Result<String, GitError> {
        let mut command = tokio::process::Command::new("git");
        command
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .envs(env.iter().map(|(k, v)| (k.as_str(), *v)))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let output = match tokio::time::timeout(deadline, command.output()).await {
            Err(_) => return Err(GitError::TimedOut(args.join(" "))),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(GitError::Missing);
            }
            Ok(result) => result?,
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(GitError::Failed {
                args: args.join(" "),
                stderr,
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// The environment that makes git author and commit as `name <email>`,
/// whatever the user's config or environment says.
fn identity_env<'a>(name: &'a str, email: &'a str) -> Vec<(String, &'a str)> {
    let who = [("NAME", name), ("EMAIL", email)];
    ["AUTHOR", "COMMITTER"]
        .iter()
        .flat_map(|role| {
            who.iter()
                .map(move |(k, v)| (format!("GIT_{role}_{k}"), *v))
        })
        .collect()
}
