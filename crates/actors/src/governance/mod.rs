//! The code-review gate's rules, as plain data and functions with no IO,
//! no clock and no processes: the risk tier a change gets from the paths
//! it touches ([`tier`]), the reviewer's verdict and its parser
//! ([`verdict`]), and the packet and prompt the reviewer is given
//! ([`packet`]).
//!
//! The host lists the touched paths, runs git, starts the reviewer and
//! records what happened; it hands the facts to these functions and does
//! what they decide. Nothing here may read a file, start a process or look
//! at the time.

pub mod packet;
pub mod tier;
pub mod verdict;

pub use packet::{ReviewPacket, diff_sha256};
pub use tier::{PathRule, Posture, TierDecision, TierError, TierReason, TierRules, decide};
pub use verdict::{Finding, Outcome, VERDICT_SHAPE, Verdict, VerdictError, parse_verdict};
