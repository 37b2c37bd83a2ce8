//! Where a claim's gate stands against its branch's head now: a verdict
//! counts only for the commit it was given on, so a new commit voids it.
//!
//! Owns that rule and its words. Must not read git: the head comes in.

use serde::{Deserialize, Serialize};

use super::board::GateState;
use super::record::GateOutcome;

/// Where a gate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// Never reviewed.
    None,
    /// The head passed review.
    Passed,
    /// The head failed review.
    Failed,
    /// The head's review came back malformed.
    Bounced,
    /// The last review was of another commit.
    Void,
}

/// A gate's standing, with why in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateStanding {
    /// Where it stands.
    pub status: GateStatus,
    /// Why, with what to do next when it did not pass.
    pub why: String,
}

/// The standing of `gate` (the claim's last review) for `head`, the
/// commit its branch is at now.
pub fn standing(claim: &str, gate: Option<&GateState>, head: &str) -> GateStanding {
    let again = format!("run `flotilla review {claim}`");
    let Some(gate) = gate else {
        return GateStanding {
            status: GateStatus::None,
            why: format!("never reviewed: {again}"),
        };
    };
    let g = &gate.record;
    let (reviewer, round) = (
        format!("{} ({})", g.reviewer, g.reviewer_family),
        gate.round,
    );
    if g.commit != head {
        return GateStanding {
            status: GateStatus::Void,
            why: format!(
                "R{round} reviewed {}, but the branch is now at {}: a new commit voids the gate; {again}",
                short(&g.commit),
                short(head)
            ),
        };
    }
    let (status, why) = match g.outcome {
        GateOutcome::Pass => (
            GateStatus::Passed,
            format!(
                "R{round}: {reviewer} passed {} at tier {}",
                short(head),
                g.tier
            ),
        ),
        GateOutcome::Fail => (
            GateStatus::Failed,
            format!(
                "R{round}: {reviewer} failed {} at tier {} with {} blocking finding(s); fix them, commit, and {again}",
                short(head),
                g.tier,
                g.blocking.len()
            ),
        ),
        GateOutcome::Bounced => (
            GateStatus::Bounced,
            format!(
                "R{round}: {reviewer} returned no well-formed verdict ({}); {again}",
                g.bounced.as_deref().unwrap_or("malformed")
            ),
        ),
    };
    GateStanding { status, why }
}

/// A commit's first 12 characters.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::record::GateRecord;
    use crate::model::Timestamp;

    fn gate(commit: &str, outcome: GateOutcome) -> GateState {
        GateState {
            round: 2,
            at: Timestamp(1),
            record: GateRecord {
                commit: commit.into(),
                base: "b".into(),
                diff_sha256: "sha256:x".into(),
                tier: "high".into(),
                requested_tier: None,
                author: "claude".into(),
                author_family: Some("anthropic".into()),
                reviewer: "codex".into(),
                reviewer_family: "openai".into(),
                lane: "h/review".into(),
                outcome,
                blocking: Vec::new(),
                notes: Vec::new(),
                bounced: None,
            },
        }
    }

    #[test]
    fn a_verdict_counts_only_for_the_commit_it_was_given_on() {
        let passed = gate("aaaa", GateOutcome::Pass);
        let s = standing("fix", Some(&passed), "aaaa");
        assert_eq!(s.status, GateStatus::Passed);
        assert!(
            s.why
                .contains("R2: codex (openai) passed aaaa at tier high"),
            "{}",
            s.why
        );
        let s = standing("fix", Some(&passed), "bbbb");
        assert_eq!(s.status, GateStatus::Void);
        assert!(
            s.why.contains("a new commit voids the gate") && s.why.contains("flotilla review fix")
        );
        assert_eq!(standing("fix", None, "aaaa").status, GateStatus::None);
        assert_eq!(
            standing("fix", Some(&gate("aaaa", GateOutcome::Fail)), "aaaa").status,
            GateStatus::Failed
        );
        assert_eq!(
            standing("fix", Some(&gate("aaaa", GateOutcome::Bounced)), "aaaa").status,
            GateStatus::Bounced
        );
    }
}
