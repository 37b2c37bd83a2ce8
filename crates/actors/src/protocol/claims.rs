//! The claim ops' arguments and replies (`claim.*`, `board`). The rules
//! they carry live in [`crate::governance`].

use serde::{Deserialize, Serialize};

use crate::governance::{ClaimId, ClaimState, GateStanding, GateState};
use crate::lane::{CliKind, LanePhase};
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
    /// Where its review gate stands for its branch's head now.
    pub gate_standing: GateStanding,
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

/// Arguments of `review`: a reviewer lane of another model family judges
/// a claim's branch at one commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReviewArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// A claim's id, or a commit on one claim's branch.
    pub target: String,
    /// The reviewer's CLI (default: the policy's first of another family).
    #[serde(default)]
    pub reviewer: Option<CliKind>,
    /// The tier asked for; never below a posture path's.
    #[serde(default)]
    pub tier: Option<String>,
    /// The reviewer's model.
    #[serde(default)]
    pub model: Option<String>,
    /// The reviewer's per-turn deadline, seconds.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// Arguments of `gate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// The claim.
    pub id: ClaimId,
}

/// Reply of `review` and `gate`: `flotilla.gate.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateReply {
    /// Schema id: `flotilla.gate.v1`.
    pub schema: String,
    /// The repository's top-level directory.
    pub repo: String,
    /// The claim.
    pub claim: ClaimId,
    /// The commit its branch is at now.
    pub head: String,
    /// Where the gate stands for that commit, and why.
    #[serde(flatten)]
    pub standing: GateStanding,
    /// The last review, if any.
    pub gate: Option<GateState>,
}

/// Arguments of `policy`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PolicyArgs {
    /// A directory in a repository (absolute); none: the user's file alone.
    #[serde(default)]
    pub repo: Option<String>,
}

/// Reply of `policy`: `flotilla.policy.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyReply {
    /// Schema id: `flotilla.policy.v1`.
    pub schema: String,
    /// The repository's top-level directory, when REPO is in one.
    pub repo: Option<String>,
    /// The files read, the user's first (it wins on every key both set).
    pub sources: Vec<PolicySource>,
    /// Whether the layers make a valid policy.
    pub valid: bool,
    /// What is wrong, naming the file, when not valid.
    pub error: Option<String>,
    /// The effective policy, every default filled in, when valid.
    pub policy: Option<crate::governance::Policy>,
}

/// One file of policy.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicySource {
    /// Its path.
    pub path: String,
    /// `user` or `repository`.
    pub role: String,
    /// Whether it exists.
    pub present: bool,
}

/// Arguments of `merge`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergeArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// The claim.
    pub id: ClaimId,
    /// Who asks: a person, or the coordinator.
    pub by: crate::governance::merge::MergeBy,
    /// A person merges a head that did not pass review, saying so.
    #[serde(default)]
    pub without_gate: bool,
    /// Keep the claim's worktree on disk.
    #[serde(default)]
    pub keep: bool,
    /// The peer the caller acts as (`FLOTILLA_PEER`): a lane never merges
    /// as a person.
    #[serde(rename = "as", default)]
    pub as_peer: Option<String>,
}

/// Arguments of `change.open`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangeOpenArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// The claim.
    pub id: ClaimId,
    /// The request's title (default: the claim's).
    #[serde(default)]
    pub title: Option<String>,
    /// Open it as a draft (on a forge).
    #[serde(default)]
    pub draft: bool,
}
