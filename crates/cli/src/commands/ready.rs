//! `flotilla ready [REPO]`: reads the plan file, asks the daemon, and
//! prints the profile for confirmation, the checks (✓ passed, → routed
//! around, ✗ failed, · an optional one missing), the plan's verdict and
//! what to do next. Exits 0 when ready, 1 when not, 2 for bad input.
//!
//! Never touches the repository itself: the daemon reads (and, with
//! `--write`, writes) the profile and runs every probe.

use anyhow::Result;
use flotilla_actors::governance::plan_review::MAX_PLAN_BYTES;
use flotilla_actors::governance::profile::PROFILE_PATH;
use flotilla_actors::governance::readiness::SKIP;
use flotilla_actors::governance::{PlanOutcome, PlanReview, ProfileSource, ReadyCheck};
use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{ReadyArgs, ReadyReply};

use super::Env;
use super::claims::repo_path;
use crate::args::ReadyCli;
use crate::exit::{CliError, FAILED, OK};
use crate::output::{self, out, outln};
use crate::table;

/// `flotilla ready`.
pub(crate) async fn run(env: &Env, a: ReadyCli) -> Result<u8> {
    if a.reviewer == Some(CliKind::Exec) {
        return Err(CliError::usage(
            "exec cannot review a plan",
            "name an agent CLI with --reviewer (claude, codex, gemini...)",
        ));
    }
    let plan = a.plan.as_deref().map(read_plan).transpose()?;
    let what = if plan.is_some() {
        "checking the repository; a lane reviews the plan"
    } else {
        "checking the repository's tools and CLIs"
    };
    let op = ReadyArgs {
        repo: repo_path(a.repo.as_deref())?,
        write_profile: a.write,
        plan,
        reviewer: a.reviewer,
        model: a.model,
    };
    let progress = crate::progress::Waiting::start(what);
    let reply = env.client().await?.call(&op).await;
    drop(progress);
    let reply = reply?;
    let code = if reply.ready { OK } else { FAILED };
    if env.json {
        output::json(&reply)?;
    } else {
        print(&reply)?;
    }
    Ok(code)
}

fn print(reply: &ReadyReply) -> Result<()> {
    let source = match (reply.profile_source, reply.profile_written) {
        (ProfileSource::File, _) => format!("read from {PROFILE_PATH}"),
        (ProfileSource::Detected, true) => format!("detected, and written to {PROFILE_PATH}"),
        (ProfileSource::Detected, false) => "detected, not written: check it".to_owned(),
    };
    outln!("profile of {} ({source}):", reply.repo)?;
    for line in reply.profile.to_toml().lines() {
        if !line.starts_with('#') && !line.trim().is_empty() {
            outln!("  {line}")?;
        }
    }
    outln!()?;
    let mut t = table::new(&["", "CHECK", "RESULT"]);
    for check in &reply.checks {
        t.add_row(vec![
            mark(check).to_owned(),
            check.name.clone(),
            result(check),
        ]);
    }
    out!("{}", table::render(&t))?;
    if let Some(review) = &reply.plan_review {
        outln!()?;
        print_review(review)?;
    }
    outln!()?;
    outln!("{}", if reply.ready { "ready" } else { "not ready" })?;
    if !reply.next.is_empty() {
        outln!("next:")?;
        for step in &reply.next {
            outln!("  - {step}")?;
        }
    }
    Ok(())
}

/// ✓ passed, → routed around, · not required, ✗ failed.
fn mark(check: &ReadyCheck) -> &'static str {
    match (check.ok, &check.routed_to, check.required) {
        (true, _, _) => "✓",
        (false, Some(_), _) => "→",
        (false, None, false) => "·",
        (false, None, true) => "✗",
    }
}

/// What was found, and what stood in.
fn result(check: &ReadyCheck) -> String {
    let why = check.why.as_deref().unwrap_or_default();
    match check.routed_to.as_deref() {
        Some(SKIP) => format!("{}; skipped: {why}", check.detail),
        Some(to) => format!("{}; `{to}` stands in: {why}", check.detail),
        None => check.detail.clone(),
    }
}

fn print_review(review: &PlanReview) -> Result<()> {
    let outcome = match review.outcome {
        PlanOutcome::Pass => "passed",
        PlanOutcome::Fail => "failed",
        PlanOutcome::Bounced => "bounced (no well-formed verdict, twice)",
        PlanOutcome::NotRun => "not reviewed",
    };
    let by = match (&review.reviewer, &review.lane) {
        (Some(cli), Some(lane)) => format!(" by {cli} (lane {lane})"),
        (Some(cli), None) => format!(" by {cli}"),
        _ => String::new(),
    };
    outln!("plan: {outcome}{by}")?;
    if let Some(note) = &review.note {
        outln!("  → {note}")?;
    }
    if let Some(verdict) = &review.verdict {
        for f in &verdict.blocking {
            outln!("  blocking  {}:{}  {}", f.file, f.line, f.finding)?;
        }
        for note in &verdict.notes {
            outln!("  note      {note}")?;
        }
    }
    if let Some(why) = review
        .why
        .as_ref()
        .filter(|w| review.note.as_ref() != Some(*w))
    {
        outln!("  why       {why}")?;
    }
    Ok(())
}

/// The plan's text from a file, or stdin for `-`.
fn read_plan(source: &str) -> Result<String> {
    use std::io::Read;
    let limit = MAX_PLAN_BYTES as u64;
    let mut bytes = Vec::new();
    let read = if source == "-" {
        std::io::stdin().take(limit + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| {
        CliError::usage(
            format!("cannot read the plan from {source}: {e}"),
            "give a plan file, or - for stdin",
        )
    })?;
    if bytes.len() > MAX_PLAN_BYTES {
        return Err(CliError::usage(
            format!("the plan in {source} is over {} KiB", MAX_PLAN_BYTES / 1024),
            "shorten it",
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::usage(
            format!("the plan in {source} is not UTF-8 text"),
            "give a Markdown or text file",
        )
    })?;
    if text.trim().is_empty() {
        return Err(CliError::usage(
            format!("the plan in {source} is empty"),
            "write the plan first",
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ok: bool, required: bool, routed_to: Option<&str>) -> ReadyCheck {
        ReadyCheck {
            name: "lint: cargo clippy".into(),
            ok,
            required,
            detail: "`cargo clippy --version` failed".into(),
            routed_to: routed_to.map(str::to_owned),
            why: Some("clippy is not installed".into()),
        }
    }

    #[test]
    fn each_check_gets_its_mark() {
        assert_eq!(mark(&check(true, true, None)), "✓");
        assert_eq!(mark(&check(false, true, Some("cargo check"))), "→");
        assert_eq!(mark(&check(false, false, None)), "·");
        assert_eq!(mark(&check(false, true, None)), "✗");
    }

    #[test]
    fn a_routed_check_says_what_stands_in_and_why() {
        assert_eq!(
            result(&check(false, true, Some("cargo check --all-targets"))),
            "`cargo clippy --version` failed; `cargo check --all-targets` stands in: clippy is not installed"
        );
        assert_eq!(
            result(&check(false, true, Some(SKIP))),
            "`cargo clippy --version` failed; skipped: clippy is not installed"
        );
        assert_eq!(
            result(&check(false, true, None)),
            "`cargo clippy --version` failed"
        );
    }

    #[test]
    fn a_plan_that_is_missing_empty_or_not_text_is_bad_input() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(path("empty.md"), "  \n").expect("write");
        std::fs::write(path("binary.md"), [0xff, 0xfe, 0x00]).expect("write");
        std::fs::write(path("plan.md"), "1. do it\n").expect("write");
        for bad in ["missing.md", "empty.md", "binary.md"] {
            let err = read_plan(&path(bad)).expect_err(bad);
            let code = err.downcast_ref::<CliError>().map(|e| e.code);
            assert_eq!(code, Some(crate::exit::USAGE), "{bad}: {err}");
        }
        assert_eq!(read_plan(&path("plan.md")).expect("read"), "1. do it\n");
    }
}
