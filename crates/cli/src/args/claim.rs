//! The arguments of claims (`claim add|list|show|drop`) and the board.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub(crate) enum ClaimCommand {
    /// Add a claim to a repository: a unit of work that gets its own branch
    /// (`flotilla/ID`) and worktree when a lane takes it (`lane run --claim ID`).
    #[command(after_help = "Examples:
  flotilla claim add . 'context meter'
  flotilla claim add ~/src/app 'fix the flaky test' --brief brief.md
  flotilla --json claim add . 'context meter'")]
    Add(ClaimAddCli),
    /// A repository's claims, from its run records.
    List(BoardCli),
    /// One claim and its run records.
    Show(ClaimIdCli),
    /// Drop a claim: its worktree is removed (the branch stays) unless --keep.
    Drop(ClaimDropCli),
}

#[derive(Debug, Args)]
pub(crate) struct ClaimAddCli {
    /// The repository (any directory in it).
    #[arg(value_name = "REPO")]
    pub(crate) repo: PathBuf,
    /// What the claim is for; its id is the title's slug.
    #[arg(value_name = "TITLE")]
    pub(crate) title: String,
    /// A file with the claim's brief (`-`: stdin).
    #[arg(long, value_name = "FILE")]
    pub(crate) brief: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ClaimIdCli {
    /// The claim's id (`flotilla claim list` shows them).
    #[arg(value_name = "ID")]
    pub(crate) id: String,
    /// The repository (default: the current directory's).
    #[arg(short = 'C', long = "repo", value_name = "REPO")]
    pub(crate) repo: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ClaimDropCli {
    #[command(flatten)]
    pub(crate) claim: ClaimIdCli,
    /// Keep the claim's worktree on disk.
    #[arg(long)]
    pub(crate) keep: bool,
}

#[derive(Debug, Args)]
pub(crate) struct BoardCli {
    /// The repository (default: the current directory's).
    #[arg(value_name = "REPO")]
    pub(crate) repo: Option<PathBuf>,
    /// Fetch the run records from the policy's remote first (a fresh host
    /// with only a clone rebuilds the board from them).
    #[arg(long)]
    pub(crate) rebuild: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReviewCli {
    /// A claim's id, or a commit on one claim's branch.
    #[arg(value_name = "CLAIM|COMMIT")]
    pub(crate) target: String,
    /// The repository (default: the current directory's).
    #[arg(short = 'C', long = "repo", value_name = "REPO")]
    pub(crate) repo: Option<PathBuf>,
    /// The reviewer's CLI (default: policy.toml's first reviewer of another model family).
    #[arg(long, value_name = "CLI", value_parser = super::choices::any_cli())]
    pub(crate) reviewer: Option<flotilla_actors::lane::CliKind>,
    /// The risk tier to review at; never below a security, permissions or merge-boundary path's.
    #[arg(long, value_name = "TIER")]
    pub(crate) tier: Option<String>,
    /// The reviewer's model.
    #[arg(short = 'm', long)]
    pub(crate) model: Option<String>,
    /// The reviewer's per-turn deadline in whole seconds (`90`, `5m`).
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse_whole_seconds)]
    pub(crate) timeout: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// The effective policy (the user's policy.toml over the repository's
    /// .flotilla/policy.toml), every default filled in, and its files.
    Show(PolicyCli),
    /// Whether the policy is valid (exit 0) or not (exit 1, naming the file and the key).
    Check(PolicyCli),
}

#[derive(Debug, Args)]
pub(crate) struct PolicyCli {
    /// The repository (default: the current directory's, if it is in one).
    #[arg(value_name = "REPO")]
    pub(crate) repo: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct MergeCli {
    #[command(flatten)]
    pub(crate) claim: ClaimIdCli,
    /// Who merges: `human` (a person) or `coordinator` (an agent or script,
    /// allowed only by policy.toml's [merge] authority, a passed gate at a
    /// tier up to [merge] max_tier, and green [merge] checks).
    #[arg(long, value_name = "WHO", default_value = "human", value_parser = ["human", "coordinator"])]
    pub(crate) by: String,
    /// A person merges a head that did not pass review (recorded as such).
    #[arg(long)]
    pub(crate) without_gate: bool,
    /// Keep the claim's worktree on disk.
    #[arg(long)]
    pub(crate) keep: bool,
    /// The peer you act as (a lane's own processes have FLOTILLA_PEER set,
    /// and a lane never merges as a person).
    #[arg(long = "as", value_name = "PEER", env = "FLOTILLA_PEER")]
    pub(crate) as_peer: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ChangeCommand {
    /// Open the claim's change request: its branch is pushed, then a pull
    /// request (gh) or merge request (glab) is opened where the remote is on
    /// a forge, else a local change record is written to the run records.
    Open(ChangeOpenCli),
}

#[derive(Debug, Args)]
pub(crate) struct ChangeOpenCli {
    #[command(flatten)]
    pub(crate) claim: ClaimIdCli,
    /// The request's title (default: the claim's).
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// Open it as a draft (on a forge).
    #[arg(long)]
    pub(crate) draft: bool,
}
