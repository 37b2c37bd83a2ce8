//! The pair table: which supervisor CLI may lead which worker CLI in
//! which lifecycle, as Flotilla's own test runs showed. `fleet start`
//! refuses a pair the table does not list, before anything starts. A row
//! is added only with the test that proves it (named in `evidence`).

use serde::Serialize;

use super::Lifecycle;
use crate::lane::CliKind;

/// What the project's runs showed for a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairStatus {
    /// A full task ran to completion in the project's tests.
    Verified,
    /// Only the smoke round was shown to work.
    SmokeOnly,
    /// Shown not to work.
    Refused,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Pair {
    /// The supervisor's CLI.
    pub supervisor: CliKind,
    /// The workers' CLI.
    pub worker: CliKind,
    /// The lifecycle.
    pub lifecycle: Lifecycle,
    /// What the runs showed.
    pub status: PairStatus,
    /// The test that shows it.
    pub evidence: &'static str,
}

const fn row(
    supervisor: CliKind,
    worker: CliKind,
    lifecycle: Lifecycle,
    status: PairStatus,
    evidence: &'static str,
) -> Pair {
    Pair {
        supervisor,
        worker,
        lifecycle,
        status,
        evidence,
    }
}

/// The table shipped with this build.
pub const PAIRS: &[Pair] = &[
    row(
        CliKind::Exec,
        CliKind::Exec,
        Lifecycle::Task,
        PairStatus::Verified,
        "tests/e2e/fleet_run.rs",
    ),
    row(
        CliKind::Exec,
        CliKind::Exec,
        Lifecycle::Smoke,
        PairStatus::Verified,
        "tests/e2e/fleet_run.rs",
    ),
    row(
        CliKind::Exec,
        CliKind::Exec,
        Lifecycle::Service,
        PairStatus::Verified,
        "tests/e2e/fleet_run.rs",
    ),
    row(
        CliKind::Claude,
        CliKind::Exec,
        Lifecycle::Task,
        PairStatus::Verified,
        "tests/e2e/vendor_fleet.rs",
    ),
    row(
        CliKind::Exec,
        CliKind::Claude,
        Lifecycle::Task,
        PairStatus::Verified,
        "tests/e2e/vendor_fleet.rs",
    ),
];

/// May `supervisor` lead `worker` in `lifecycle`? The reason when not.
pub fn check_pair(
    supervisor: CliKind,
    worker: CliKind,
    lifecycle: Lifecycle,
) -> Result<&'static Pair, String> {
    let found = PAIRS
        .iter()
        .find(|p| p.supervisor == supervisor && p.worker == worker && p.lifecycle == lifecycle);
    let lc = serde_json::to_value(lifecycle)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    match found {
        Some(p) if p.status == PairStatus::Refused => Err(format!(
            "a {supervisor} supervisor with {worker} workers was shown not to work ({}); pick another pair from `flotilla fleet pairs`",
            p.evidence
        )),
        Some(p) if p.status == PairStatus::SmokeOnly && lifecycle != Lifecycle::Smoke => {
            Err(format!(
                "a {supervisor} supervisor with {worker} workers is proven for --lifecycle smoke only"
            ))
        }
        Some(p) => Ok(p),
        None => Err(format!(
            "the pair table does not list a {supervisor} supervisor with {worker} workers for --lifecycle {lc}: no test of Flotilla's has run it; `flotilla fleet pairs` lists the pairs that ran"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_pair_passes_and_an_unlisted_one_is_refused_with_the_reason() {
        assert!(check_pair(CliKind::Exec, CliKind::Exec, Lifecycle::Task).is_ok());
        let why = check_pair(CliKind::Gemini, CliKind::Pi, Lifecycle::Service).unwrap_err();
        assert!(why.contains("gemini supervisor with pi workers"), "{why}");
        assert!(why.contains("--lifecycle service"), "{why}");
    }

    #[test]
    fn every_row_names_a_test_file_that_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for p in PAIRS {
            assert!(root.join(p.evidence).is_file(), "{}", p.evidence);
        }
    }
}
