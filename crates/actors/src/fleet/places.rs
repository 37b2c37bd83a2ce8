//! Where a fleet's work is judged. A worker with a claim works in its
//! claim's worktree; every other member works in the fleet's directory.
//! A step is judged where its worker works; the whole task (the step
//! `final`) is judged across every place: each artifact where it is first
//! found (the claims' worktrees in worker order, then the fleet's
//! directory), the task's checks in every place a worker works. Pure: the
//! host turns a [`Place`] into a path and gathers the facts.

use super::acceptance::{ArtifactSeen, CheckRan, Evidence, Shortfall, Verdict, judge};
use super::record::FleetSpec;
use super::task::Task;
use crate::governance::ClaimId;

/// A directory of a fleet, named by what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The fleet's directory (`-C`).
    FleetDir,
    /// The worktree of this claim.
    Claim(ClaimId),
}

impl FleetSpec {
    /// Where `role` works.
    pub fn place_of(&self, role: &str) -> Place {
        let claim = self
            .members()
            .into_iter()
            .find(|(r, _)| r == role)
            .and_then(|(_, m)| m.claim.clone());
        claim.map_or(Place::FleetDir, Place::Claim)
    }

    /// Every place an artifact is looked for: the claims' worktrees in
    /// worker order, then the fleet's directory.
    pub fn places(&self) -> Vec<Place> {
        let mut out: Vec<Place> = self
            .workers
            .iter()
            .filter_map(|w| w.claim.clone().map(Place::Claim))
            .collect();
        out.push(Place::FleetDir);
        out
    }

    /// Whether a worker works in `place` (the task's checks run there).
    pub fn worked_in(&self, place: &Place) -> bool {
        match place {
            Place::Claim(id) => self.workers.iter().any(|w| w.claim.as_ref() == Some(id)),
            Place::FleetDir => self.workers.iter().any(|w| w.claim.is_none()),
        }
    }
}

/// What the host found in one place: what is at each of the task's
/// artifact paths (in order) and what each of its checks did there.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaceFacts {
    /// The place.
    pub place: Place,
    /// What is at each artifact's path there.
    pub seen: Vec<ArtifactSeen>,
    /// What each check did there; `None` where no worker works (checks
    /// are not run there).
    pub ran: Option<Vec<CheckRan>>,
}

/// Judges the whole task across places: an artifact counts where it is
/// first found (missing only when no place has it), and every place's
/// checks must pass. A failed check names the claim it failed in.
pub fn judge_across(task: &Task, facts: &[PlaceFacts]) -> Verdict {
    let seen: Vec<ArtifactSeen> = (0..task.artifacts.len())
        .map(|i| {
            facts
                .iter()
                .filter_map(|f| f.seen.get(i))
                .find(|s| **s != ArtifactSeen::Missing)
                .cloned()
                .unwrap_or(ArtifactSeen::Missing)
        })
        .collect();
    let artifacts_only = Task {
        checks: Vec::new(),
        ..task.clone()
    };
    let checks_only = Task {
        artifacts: Vec::new(),
        ..task.clone()
    };
    let mut evidence = Evidence::default();
    let mut shortfalls = Vec::new();
    let mut take = |verdict: Verdict, place: Option<&Place>| match verdict {
        Verdict::Accepted(e) => {
            evidence.artifacts.extend(e.artifacts);
            evidence.checks.extend(e.checks);
        }
        Verdict::Bounced(s) => shortfalls.extend(s.into_iter().map(|s| named(s, place))),
    };
    take(judge(&artifacts_only, &seen, &[]), None);
    if !task.checks.is_empty() {
        for f in facts {
            if let Some(ran) = &f.ran {
                take(judge(&checks_only, &[], ran), Some(&f.place));
            }
        }
    }
    if shortfalls.is_empty() {
        Verdict::Accepted(evidence)
    } else {
        Verdict::Bounced(shortfalls)
    }
}

fn named(shortfall: Shortfall, place: Option<&Place>) -> Shortfall {
    match (shortfall, place) {
        (
            Shortfall::CheckFailed {
                run,
                exit,
                timed_out,
                tail,
            },
            Some(Place::Claim(id)),
        ) => Shortfall::CheckFailed {
            run,
            exit,
            timed_out,
            tail: format!("(in claim {id}'s worktree) {tail}"),
        },
        (s, _) => s,
    }
}

#[cfg(test)]
#[path = "places_tests.rs"]
mod tests;
