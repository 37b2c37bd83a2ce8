//! Governed delivery's rules, as plain data and functions with no IO, no
//! clock and no processes: a claim's id ([`claim`]), run records and their
//! encoding in git commits ([`record`]), the board folded from them
//! ([`board`]), where a claim's review gate stands ([`gate`]), the user's
//! policy ([`policy`]) and who may merge ([`merge`]), the risk tier a change gets
//! from the paths it touches ([`tier`]), the reviewer's verdict and its
//! parser ([`verdict`]), the packet and prompt the reviewer is given
//! ([`packet`]), and which CLI modes run commands confined ([`sandbox`]).
//!
//! The host drives git and lanes, lists the touched paths and starts the
//! reviewer; it hands the facts to these functions and does what they
//! decide. Nothing here may run git, read a file or look at the time.
//!
//! Readiness (`flotilla ready`): the repository's project profile and its
//! detection ([`profile`]), the checks of its tools and what stands in for
//! a missing one ([`readiness`]), and a plan's review against the profile
//! ([`plan_review`]).

pub mod board;
pub mod change;
pub mod claim;
pub mod gate;
pub mod merge;
pub mod packet;
pub mod plan_review;
pub mod policy;
pub mod profile;
pub mod readiness;
pub mod record;
pub mod sandbox;
pub mod tier;
mod tier_decision;
pub mod verdict;

pub use board::{Board, ClaimState, ClaimStatus, GateState};
pub use claim::ClaimId;
pub use gate::{GateStanding, GateStatus, standing};
pub use packet::{ReviewPacket, diff_sha256};
pub use plan_review::{PlanOutcome, PlanReview};
pub use policy::Policy;
pub use profile::{Profile, ProfileSource};
pub use readiness::ReadyCheck;
pub use record::{Entry, GateOutcome, GateRecord, Record};
pub use tier::{PathRule, Posture, TierDecision, TierError, TierReason, TierRules, decide};
pub use verdict::{Finding, Outcome, VERDICT_SHAPE, Verdict, VerdictError, parse_verdict};
