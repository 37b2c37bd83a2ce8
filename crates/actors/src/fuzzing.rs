//! The fuzzing harness every decoder of outside bytes runs through (issue
//! 13): property-based, on the stable toolchain, with proptest.
//!
//! Owns the inputs (arbitrary bytes, arbitrary text, and seeds taken from
//! real traffic, mutated by bit flips, inserts, deletes, truncation,
//! splices and dictionary tokens: see [`mutate`]), the budget (a few
//! hundred cases by default, so CI runs every target as an ordinary test;
//! `FLOTILLA_FUZZ_SECS=600` runs a target for ten minutes) and the report.
//! A target is a `check` that must not panic and fails with a
//! [`TestCaseError`] when a property does not hold. Test-only: built with
//! `cfg(test)` or the `test-support` feature.

mod mutate;

use std::time::{Duration, Instant};

use proptest::prelude::*;
pub use proptest::test_runner::TestCaseError;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

pub use mutate::{Edit, mutate};

/// Cases per target when `FLOTILLA_FUZZ_SECS` is not set.
pub const DEFAULT_CASES: u64 = 256;
/// Time per target when `FLOTILLA_FUZZ_SECS` is not set: a slow machine
/// stops early rather than holding CI.
pub const DEFAULT_SECS: u64 = 20;
/// Cases per round: each round has its own seed, so a long run keeps
/// finding new inputs.
const ROUND: u64 = 1_000;

/// How long and how many cases a target runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Most cases.
    pub cases: u64,
    /// Most time.
    pub time: Duration,
    /// The first round's seed; `FLOTILLA_FUZZ_SEED` to vary a run.
    pub seed: u64,
}

impl Budget {
    /// From `FLOTILLA_FUZZ_SECS` (a long run: cases unbounded but for
    /// `FLOTILLA_FUZZ_CASES`), else [`DEFAULT_CASES`] within
    /// [`DEFAULT_SECS`].
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse().ok());
        let cases: Option<u64> = var("FLOTILLA_FUZZ_CASES");
        let seed = var("FLOTILLA_FUZZ_SEED").unwrap_or(0);
        match var("FLOTILLA_FUZZ_SECS") {
            Some(secs) => Self {
                cases: cases.unwrap_or(u64::MAX),
                time: Duration::from_secs(secs),
                seed,
            },
            None => Self {
                cases: cases.unwrap_or(DEFAULT_CASES),
                time: Duration::from_secs(DEFAULT_SECS),
                seed,
            },
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The target's name.
    pub target: String,
    /// Cases run.
    pub cases: u64,
    /// Time taken.
    pub elapsed: Duration,
    /// The first round's seed.
    pub seed: u64,
}

/// A target: its name, seeds from real traffic and a dictionary of tokens
/// its format gives meaning to.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Named in reports and failures.
    pub name: &'a str,
    /// Valid inputs, as real peers send them.
    pub seeds: &'a [Vec<u8>],
    /// Tokens worth inserting (`{`, `\"`, a keyword...).
    pub dictionary: &'a [&'a [u8]],
}

/// The inputs of a target: arbitrary bytes and text now and then, mostly
/// mutated seeds.
pub fn inputs(target: &Target<'_>) -> impl Strategy<Value = Vec<u8>> + use<> {
    let seeds = target.seeds.to_vec();
    let dictionary: Vec<Vec<u8>> = target.dictionary.iter().map(|t| t.to_vec()).collect();
    let count = seeds.len().max(1);
    let edits = proptest::collection::vec(mutate::edit(), 1..8);
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..256),
        1 => any::<String>().prop_map(String::into_bytes),
        1 => (0..count).prop_map({
            let seeds = seeds.clone();
            move |i| seeds.get(i).cloned().unwrap_or_default()
        }),
        7 => (0..count, edits).prop_map(move |(i, edits)| mutate(&seeds, i, &edits, &dictionary)),
    ]
}

/// Runs `check` on inputs of `target` within [`Budget::from_env`]; panics
/// with the smallest failing input when a check fails or panics.
pub fn fuzz<F>(target: Target<'_>, check: F) -> Report
where
    F: Fn(&[u8]) -> Result<(), TestCaseError>,
{
    if let Some(dir) = std::env::var_os(SEEDS_OUT) {
        write_seeds(&target, std::path::Path::new(&dir));
    }
    run(target, Budget::from_env(), check)
}

/// With this set to a directory, every target also writes its seeds there
/// (`DIR/NAME/seed-N`, `-` in the name as `_`): the starting corpus of the
/// coverage-guided targets of the same name (`crates/fuzz`).
pub const SEEDS_OUT: &str = "FLOTILLA_FUZZ_SEEDS_OUT";

fn write_seeds(target: &Target<'_>, dir: &std::path::Path) {
    let dir = dir.join(target.name.replace('-', "_"));
    std::fs::create_dir_all(&dir).expect("the seeds directory");
    for (i, seed) in target.seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i}")), seed).expect("a seed file");
    }
}

/// [`fuzz`] with an explicit budget.
pub fn run<F>(target: Target<'_>, budget: Budget, check: F) -> Report
where
    F: Fn(&[u8]) -> Result<(), TestCaseError>,
{
    let strategy = inputs(&target);
    let start = Instant::now();
    let mut cases = 0u64;
    let mut round = 0u64;
    while cases < budget.cases && start.elapsed() < budget.time {
        let n = (budget.cases - cases).min(ROUND);
        let config = Config {
            cases: u32::try_from(n).unwrap_or(u32::MAX),
            failure_persistence: None,
            ..Config::default()
        };
        let seed = round_seed(target.name, budget.seed, round);
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let mut runner = TestRunner::new_with_rng(config, rng);
        if let Err(e) = runner.run(&strategy, |input| check(&input)) {
            panic!("{}", failure(&target, budget.seed, round, e));
        }
        cases += n;
        round += 1;
    }
    let report = Report {
        target: target.name.to_owned(),
        cases,
        elapsed: start.elapsed(),
        seed: budget.seed,
    };
    eprintln!(
        "fuzz {}: {} cases in {:.1} s (seed {}), 0 failures",
        report.target,
        report.cases,
        report.elapsed.as_secs_f64(),
        report.seed
    );
    report
}

fn failure(target: &Target<'_>, seed: u64, round: u64, e: TestError<Vec<u8>>) -> String {
    match e {
        TestError::Fail(why, input) => format!(
            "fuzz {}: {why}\ninput ({} bytes): {:?}\nas text: {:?}\nrerun with FLOTILLA_FUZZ_SEED={seed} (failed in round {round})",
            target.name,
            input.len(),
            input,
            String::from_utf8_lossy(&input),
        ),
        TestError::Abort(why) => format!("fuzz {}: aborted: {why}", target.name),
    }
}

/// A round's RNG seed from the target's name, the run's seed and the round.
fn round_seed(name: &str, seed: u64, round: u64) -> [u8; 32] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut out = [0u8; 32];
    for (i, word) in [h, seed, round, h ^ seed.rotate_left(17) ^ round]
        .iter()
        .enumerate()
    {
        out[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// The input as text, as a reader that replaces invalid UTF-8 would see it.
pub fn text(input: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target<'a>(seeds: &'a [Vec<u8>]) -> Target<'a> {
        Target {
            name: "harness",
            seeds,
            dictionary: &[b"{"],
        }
    }

    #[test]
    fn runs_the_budget_and_reports_it() {
        let seeds = [b"hello".to_vec()];
        let budget = Budget {
            cases: 50,
            time: Duration::from_secs(30),
            seed: 1,
        };
        let report = run(target(&seeds), budget, |_| Ok(()));
        assert_eq!(report.cases, 50);
        assert_eq!(report.seed, 1);
    }

    #[test]
    #[should_panic(expected = "fuzz harness")]
    fn a_panicking_decoder_fails_the_target() {
        let seeds = [b"hello".to_vec()];
        let budget = Budget {
            cases: 500,
            time: Duration::from_secs(30),
            seed: 0,
        };
        run(target(&seeds), budget, |input| {
            assert!(!input.contains(&b'{'), "a brace");
            Ok(())
        });
    }

    #[test]
    fn rounds_have_their_own_seeds() {
        assert_ne!(round_seed("a", 0, 0), round_seed("a", 0, 1));
        assert_ne!(round_seed("a", 0, 0), round_seed("b", 0, 0));
        assert_ne!(round_seed("a", 0, 0), round_seed("a", 1, 0));
    }
}
