//! The claim ops' arguments and replies (`claim.*`, `board`). The rules
//! they carry live in [`crate::governance`].

use serde::{Deserialize, Serialize};

use crate::governance::{ClaimId, ClaimState};
use crate::lane::LanePhase;
use crate::model::Timestamp;

/// Arguments of `claim.add`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimAddArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// What the claim is for; its id is the title's slug.
    pub title: String,
    /// The brief, as text.
    #[serde(default)]
    pub brief: Option<String>,
}

/// Arguments of `claim.show`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimShowArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// The claim.
    pub id: ClaimId,
}

/// Arguments of `claim.drop`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimDropArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// The claim.
    pub id: ClaimId,
    /// Keep its worktree on disk.
    #[serde(default)]
    pub keep: bool,
}

/// Arguments of `board`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BoardArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// Fetch the run records from the policy's remote first.
    #[serde(default)]
    pub rebuild: bool,
}

/// One claim as shown: what its records say, and what this host sees now.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimView {
    /// What its records say.
    #[serde(flatten)]
    pub state: ClaimState,
    /// Its lane's phase, when that lane is on this host.
    pub lane_phase: Option<LanePhase>,
    /// Whether its worktree is on this host's disk.
    pub worktree_here: bool,
}

/// Reply of `board`: `flotilla.board.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BoardReply {
    /// Schema id: `flotilla.board.v1`.
    pub schema: String,
    /// The repository's top-level directory.
    pub repo: String,
    /// Run records read.
    pub records: u32,
    /// The remote the records were fetched from (`--rebuild`), if any.
    pub fetched_from: Option<String>,
    /// Every claim, in the order they were added.
    pub claims: Vec<ClaimView>,
    /// Records skipped, and why.
    pub notes: Vec<String>,
}

/// Reply of `claim.add`, `claim.show` and `claim.drop`: `flotilla.claim.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimReply {
    /// Schema id: `flotilla.claim.v1`.
    pub schema: String,
    /// The repository's top-level directory.
    pub repo: String,
    /// The claim.
    pub claim: ClaimView,
    /// Its records, oldest first.
    pub history: Vec<HistoryLine>,
}

/// One record of a claim, in short.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryLine {
    /// When.
    pub at: Timestamp,
    /// Which host wrote it.
    pub host: String,
    /// Its kind (`claim`, `lane`, `turn`, `drop`).
    pub kind: String,
    /// What it says, in a line.
    pub summary: String,
}
