//! The `ready` op's arguments and reply: a repository's profile, the
//! readiness checks and a plan's review. The rules they carry live in
//! [`crate::governance::readiness`] and [`crate::governance::plan_review`].

use serde::{Deserialize, Serialize};

use crate::governance::{PlanReview, Profile, ProfileSource, ReadyCheck};
use crate::lane::CliKind;

/// Arguments of `ready`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadyArgs {
    /// A directory in the repository (absolute).
    pub repo: String,
    /// Write the detected profile to `.flotilla/profile.toml` (never over
    /// an existing file).
    #[serde(default)]
    pub write_profile: bool,
    /// A plan's text, to be reviewed against the profile by a lane.
    #[serde(default)]
    pub plan: Option<String>,
    /// The plan reviewer's CLI (default: the policy's first reviewer that
    /// is installed); another installed one stands in when it is missing.
    #[serde(default)]
    pub reviewer: Option<CliKind>,
    /// The reviewer's model (dropped when another CLI stands in).
    #[serde(default)]
    pub model: Option<String>,
}

/// Reply of `ready`: `flotilla.ready.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadyReply {
    /// Schema id: `flotilla.ready.v1`.
    pub schema: String,
    /// The repository's top-level directory.
    pub repo: String,
    /// The profile the checks used.
    pub profile: Profile,
    /// `file` (read from `.flotilla/profile.toml`) or `detected`.
    pub profile_source: ProfileSource,
    /// Whether this call wrote the detected profile to the file.
    pub profile_written: bool,
    /// Everything checked, in order: git, the policy, the profile, each
    /// profile command, the agent CLIs.
    pub checks: Vec<ReadyCheck>,
    /// The plan's review, when a plan was given.
    pub plan_review: Option<PlanReview>,
    /// Every required check passed or was routed around, and the plan
    /// (if any) passed review.
    pub ready: bool,
    /// What to do next, in plain words.
    pub next: Vec<String>,
}
