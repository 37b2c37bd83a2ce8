//! Merge authority: who may merge a claim's branch into its base, and
//! when. A person may merge a change whose head passed review (or, saying
//! so, one that did not: recorded as merged without the gate). The
//! coordinator (an agent, a script) may merge only when the policy gives
//! it the authority, the head passed review at a tier no stricter than the
//! policy's `max_tier`, and the policy's checks are green. With no policy
//! nothing merges without a person.
//!
//! Owns the rule. Must not run the checks or git (the host does).

use serde::{Deserialize, Serialize};

use super::gate::{GateStanding, GateStatus};
use super::policy::{MergeAuthority, Policy};

/// Who asks to merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeBy {
    /// A person at a shell.
    Human,
    /// An agent or automation acting for the team.
    Coordinator,
}

/// What the merge rule looks at.
#[derive(Debug, Clone)]
pub struct MergeAsk<'a> {
    /// Who asks.
    pub by: MergeBy,
    /// The gate's standing for the head to merge.
    pub standing: &'a GateStanding,
    /// The tier the head passed at, when it passed.
    pub tier: Option<&'a str>,
    /// A person's explicit "merge without a passed gate".
    pub without_gate: bool,
}

/// Whether the ask may go on to the checks (the coordinator) or to the
/// merge (a person); why not, with what to do, when refused.
pub fn may_merge(policy: &Policy, ask: &MergeAsk<'_>) -> Result<(), String> {
    let passed = ask.standing.status == GateStatus::Passed;
    match ask.by {
        MergeBy::Human if passed || ask.without_gate => Ok(()),
        MergeBy::Human => Err(format!(
            "the gate has not passed for this head ({}); merge anyway with --without-gate (recorded as such)",
            ask.standing.why
        )),
        MergeBy::Coordinator => coordinator(policy, ask, passed),
    }
}

fn coordinator(policy: &Policy, ask: &MergeAsk<'_>, passed: bool) -> Result<(), String> {
    if policy.merge.authority != MergeAuthority::Coordinator {
        return Err("policy.toml's [merge] authority is human: only a person merges (set authority = \"coordinator\" to let the coordinator)".into());
    }
    if ask.without_gate {
        return Err("the coordinator never merges without a passed gate".into());
    }
    if !passed {
        return Err(format!(
            "the gate has not passed for this head: {}",
            ask.standing.why
        ));
    }
    let tiers = &policy.tiers;
    let limit = (policy.merge.max_tier.clone())
        .or_else(|| tiers.order.first().cloned())
        .unwrap_or_default();
    let tier = ask.tier.unwrap_or_default();
    if !tiers.at_most(tier, &limit) {
        return Err(format!(
            "the head passed at tier {tier}, above [merge] max_tier {limit}: a person merges this one"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::policy::Layer;

    fn standing(status: GateStatus) -> GateStanding {
        GateStanding {
            status,
            why: "why".into(),
        }
    }

    fn ask<'a>(by: MergeBy, s: &'a GateStanding, tier: &'a str) -> MergeAsk<'a> {
        MergeAsk {
            by,
            standing: s,
            tier: Some(tier),
            without_gate: false,
        }
    }

    fn policy(text: &str) -> Policy {
        Policy::from_layers(Some(Layer { path: "p", text }), None).expect("policy")
    }

    #[test]
    fn with_no_policy_nothing_merges_without_a_person() {
        let p = Policy::default();
        let passed = standing(GateStatus::Passed);
        assert!(may_merge(&p, &ask(MergeBy::Human, &passed, "max")).is_ok());
        let err =
            may_merge(&p, &ask(MergeBy::Coordinator, &passed, "low")).expect_err("human only");
        assert!(err.contains("only a person merges"), "{err}");
        let failed = standing(GateStatus::Failed);
        let err = may_merge(&p, &ask(MergeBy::Human, &failed, "low")).expect_err("gate");
        assert!(err.contains("--without-gate"), "{err}");
        let mut anyway = ask(MergeBy::Human, &failed, "low");
        anyway.without_gate = true;
        assert!(may_merge(&p, &anyway).is_ok());
    }

    #[test]
    fn the_coordinator_merges_only_a_passed_head_at_or_under_max_tier() {
        let p = policy("[merge]\nauthority = \"coordinator\"\nmax_tier = \"medium\"\n");
        let passed = standing(GateStatus::Passed);
        assert!(may_merge(&p, &ask(MergeBy::Coordinator, &passed, "medium")).is_ok());
        let err = may_merge(&p, &ask(MergeBy::Coordinator, &passed, "max")).expect_err("tier");
        assert!(err.contains("above [merge] max_tier medium"), "{err}");
        let void = standing(GateStatus::Void);
        assert!(may_merge(&p, &ask(MergeBy::Coordinator, &void, "low")).is_err());
        let mut anyway = ask(MergeBy::Coordinator, &passed, "low");
        anyway.without_gate = true;
        assert!(may_merge(&p, &anyway).is_err());
        let low = policy("[merge]\nauthority = \"coordinator\"\n");
        assert!(
            may_merge(&low, &ask(MergeBy::Coordinator, &passed, "medium")).is_err(),
            "default max_tier is the lowest"
        );
        let bad = Policy::from_layers(
            Some(Layer {
                path: "p",
                text: "[merge]\nmax_tier = \"huge\"\n",
            }),
            None,
        );
        assert!(bad.expect_err("tier").to_string().contains("max_tier"));
    }
}
