//! A plan reviewed against a profile (`flotilla ready --plan FILE`): which
//! CLI reviews it when the one asked for is missing ([`route_cli`]), the
//! prompt it is given ([`plan_prompt`]), how the review ended
//! ([`PlanReview`]), and whether everything adds up to ready
//! ([`is_ready`]) with what to do next ([`next_steps`]).
//!
//! Owns these decisions and texts. Must not start a lane or read a file:
//! the host does, and hands in what it found.

use serde::{Deserialize, Serialize};

use super::packet::longest_backtick_run;
use super::profile::{PROFILE_PATH, Profile, ProfileSource};
use super::readiness::ReadyCheck;
use super::verdict::{VERDICT_SHAPE, Verdict};
use crate::lane::CliKind;

/// The name of the plan in the reviewer's directory and in its findings.
pub const PLAN_FILE: &str = "plan.md";

/// The name of the profile in the reviewer's directory and in its findings.
pub const PROFILE_FILE: &str = "profile.toml";

/// The largest plan, in bytes.
pub const MAX_PLAN_BYTES: usize = 256 * 1024;

/// Which CLI reviews a plan, and whether it was routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliRoute {
    /// The reviewer; `None` when no candidate is installed.
    pub cli: Option<CliKind>,
    /// The CLI asked for, when another stands in for it.
    pub routed_from: Option<CliKind>,
    /// What was done instead, and why.
    pub note: Option<String>,
}

/// `wanted` if installed; else the first installed of `candidates`, saying so.
pub fn route_cli(
    wanted: Option<CliKind>,
    candidates: &[CliKind],
    installed: &[CliKind],
) -> CliRoute {
    if let Some(w) = wanted.filter(|w| installed.contains(w)) {
        return CliRoute {
            cli: Some(w),
            routed_from: None,
            note: None,
        };
    }
    let first = candidates
        .iter()
        .copied()
        .find(|c| Some(*c) != wanted && installed.contains(c));
    let note = match (wanted, first) {
        (Some(w), Some(c)) => Some(format!(
            "{w} is not installed here, so {c} reviewed the plan instead, with its default model"
        )),
        (_, None) => Some(format!(
            "no agent CLI that can review is installed here (tried {}); install one (`flotilla lane doctor` lists them) or name one with --reviewer",
            candidates
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (None, Some(_)) => None,
    };
    CliRoute {
        cli: first,
        routed_from: wanted.filter(|_| first.is_some()),
        note,
    }
}

/// How a plan's review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanOutcome {
    /// Nothing blocks the plan.
    Pass,
    /// At least one finding blocks it.
    Fail,
    /// The reviewer's verdict was malformed twice.
    Bounced,
    /// No reviewer could run, or its turn did not finish.
    NotRun,
}

/// A plan's review by a lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanReview {
    /// The CLI that reviewed it; `None` when none could.
    pub reviewer: Option<CliKind>,
    /// The CLI asked for, when another reviewed instead.
    pub routed_from: Option<CliKind>,
    /// What was done instead of what was asked, and why.
    pub note: Option<String>,
    /// The reviewer's lane (`HOST/NAME`), when one ran.
    pub lane: Option<String>,
    /// How it ended.
    pub outcome: PlanOutcome,
    /// The verdict, on a pass or a fail.
    pub verdict: Option<Verdict>,
    /// Why there is no verdict: the last reason it was bounced, or why
    /// the review did not run.
    pub why: Option<String>,
}

/// Ready: no check blocks, and the plan (if any) passed.
pub fn is_ready(checks: &[ReadyCheck], plan: Option<&PlanReview>) -> bool {
    !checks.iter().any(ReadyCheck::blocks) && plan.is_none_or(|p| p.outcome == PlanOutcome::Pass)
}

/// What the reviewer is asked: judge `plan` against `profile`, and answer
/// with the verdict's JSON shape.
pub fn plan_prompt(profile: &Profile, plan: &str) -> String {
    let toml = profile.to_toml();
    let fence = "`".repeat(3.max(longest_backtick_run(plan) + 1));
    let mut constraints = String::new();
    for c in &profile.constraints {
        constraints.push_str(&format!("- {c}\n"));
    }
    if constraints.is_empty() {
        constraints.push_str("- (none beyond the commands)\n");
    }
    format!(
        "You review a plan for work in a repository before any of it is done. Judge whether \
the plan can be carried out within the repository's project profile: its languages, the \
build, test and lint commands that must keep passing, and its constraints. Block only on \
what would break a constraint, leave one of the commands failing, or make the plan \
impossible to carry out as written; anything else is a note. Change no file.\n\n\
## The profile ({PROFILE_PATH}; {PROFILE_FILE} in your working directory)\n\n\
```toml\n{toml}```\n\n\
Constraints:\n{constraints}\n\
## The plan ({PLAN_FILE} in your working directory)\n\n\
{fence}markdown\n{plan}\n{fence}\n\n\
## Your answer\n\n\
A finding about the plan gives \"file\": \"{PLAN_FILE}\" and the line of the plan it is \
about; one about the profile gives \"file\": \"{PROFILE_FILE}\".\n\n\
{VERDICT_SHAPE}\n\n\
Return only that JSON object as your final message.\n"
    )
}

/// What to do next, in order: about the profile, each check that blocks,
/// and the plan.
pub fn next_steps(
    source: ProfileSource,
    written: bool,
    checks: &[ReadyCheck],
    plan: Option<&PlanReview>,
) -> Vec<String> {
    let mut next = Vec::new();
    let profile_failed = checks.iter().any(|c| c.name == "profile" && !c.ok);
    match (source, written) {
        (ProfileSource::Detected, true) => next.push(format!(
            "wrote {PROFILE_PATH}: check it, edit it to suit, and commit it"
        )),
        (ProfileSource::Detected, false) if !profile_failed => next.push(format!(
            "this profile was detected, not read: if it is right, write it with `flotilla ready --write`, then edit {PROFILE_PATH} to suit"
        )),
        _ => {}
    }
    for check in checks.iter().filter(|c| c.blocks()) {
        let why = check.why.as_deref().unwrap_or(&check.detail);
        next.push(format!("{}: {why}", check.name));
    }
    match plan.map(|p| (p.outcome, p)) {
        Some((PlanOutcome::Fail, _)) => next.push(
            "revise the plan for its blocking findings, then run `flotilla ready --plan FILE` again".into(),
        ),
        Some((PlanOutcome::Bounced, _)) => next.push(
            "the reviewer gave no well-formed verdict twice: run again, or pick another with --reviewer".into(),
        ),
        Some((PlanOutcome::NotRun, p)) => next.push(format!(
            "the plan was not reviewed: {}",
            p.why.as_deref().or(p.note.as_deref()).unwrap_or("no reviewer ran")
        )),
        _ => {}
    }
    next
}

#[cfg(test)]
#[path = "plan_review_tests.rs"]
mod tests;
