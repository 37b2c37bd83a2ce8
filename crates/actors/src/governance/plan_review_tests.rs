use super::*;
use crate::governance::readiness::SKIP;

const ALL: [CliKind; 3] = [CliKind::Codex, CliKind::Claude, CliKind::Gemini];

fn check(name: &str, ok: bool, routed_to: Option<&str>) -> ReadyCheck {
    ReadyCheck {
        name: name.into(),
        ok,
        required: true,
        detail: format!("{name} said so"),
        routed_to: routed_to.map(str::to_owned),
        why: (!ok).then(|| format!("install {name}")),
    }
}

fn review(outcome: PlanOutcome) -> PlanReview {
    PlanReview {
        reviewer: Some(CliKind::Claude),
        routed_from: None,
        note: None,
        lane: None,
        outcome,
        verdict: None,
        why: Some("the lane failed".into()),
    }
}

#[test]
fn the_cli_asked_for_reviews_when_it_is_installed() {
    let r = route_cli(
        Some(CliKind::Gemini),
        &ALL,
        &[CliKind::Gemini, CliKind::Codex],
    );
    assert_eq!(
        r,
        CliRoute {
            cli: Some(CliKind::Gemini),
            routed_from: None,
            note: None
        }
    );
}

#[test]
fn a_missing_reviewer_routes_to_the_first_installed_candidate_and_says_so() {
    let r = route_cli(Some(CliKind::Gemini), &ALL, &[CliKind::Claude, CliKind::Pi]);
    assert_eq!(r.cli, Some(CliKind::Claude));
    assert_eq!(r.routed_from, Some(CliKind::Gemini));
    let note = r.note.expect("a note");
    assert!(
        note.contains("gemini is not installed") && note.contains("claude reviewed"),
        "{note}"
    );
}

#[test]
fn with_none_asked_the_first_installed_candidate_reviews_quietly() {
    let r = route_cli(None, &ALL, &[CliKind::Gemini, CliKind::Claude]);
    assert_eq!(
        (r.cli, r.routed_from, r.note),
        (Some(CliKind::Claude), None, None)
    );
}

#[test]
fn with_nothing_installed_nobody_reviews_and_the_note_says_what_to_do() {
    let r = route_cli(Some(CliKind::Gemini), &ALL, &[CliKind::Pi]);
    assert_eq!((r.cli, r.routed_from), (None, None));
    let note = r.note.expect("a note");
    assert!(
        note.contains("tried codex, claude, gemini") && note.contains("flotilla lane doctor"),
        "{note}"
    );
}

#[test]
fn the_prompt_holds_the_profile_the_constraints_the_plan_and_the_shape() {
    let profile = Profile {
        languages: vec!["rust".into()],
        test: vec!["cargo test".into()],
        constraints: vec!["no new dependencies".into()],
        ..Profile::default()
    };
    let prompt = plan_prompt(&profile, "1. add a cache\n2. add tokio\n");
    for needle in [
        "before any of it is done",
        "test = [\"cargo test\"]",
        "- no new dependencies\n",
        "```markdown\n1. add a cache\n2. add tokio\n\n```",
        "\"file\": \"plan.md\"",
        "\"file\": \"profile.toml\"",
        VERDICT_SHAPE,
    ] {
        assert!(prompt.contains(needle), "{needle:?} not in:\n{prompt}");
    }
    assert!(prompt.ends_with("Return only that JSON object as your final message.\n"));
    let bare = plan_prompt(&Profile::default(), "x");
    assert!(bare.contains("- (none beyond the commands)"), "{bare}");
}

#[test]
fn a_plan_holding_a_fence_gets_a_longer_one() {
    let prompt = plan_prompt(&Profile::default(), "```sh\nmake\n```");
    assert!(prompt.contains("````markdown\n```sh"), "{prompt}");
}

#[test]
fn ready_needs_every_required_check_to_pass_or_be_routed_and_the_plan_to_pass() {
    let ok = check("git", true, None);
    let routed = check(
        "lint: cargo clippy",
        false,
        Some("cargo check --all-targets"),
    );
    let skipped = check("lint: cargo fmt", false, Some(SKIP));
    let mut optional = check("cli gemini", false, None);
    optional.required = false;
    let checks = [ok, routed, skipped, optional];
    assert!(is_ready(&checks, None));
    assert!(is_ready(&checks, Some(&review(PlanOutcome::Pass))));
    for outcome in [PlanOutcome::Fail, PlanOutcome::Bounced, PlanOutcome::NotRun] {
        assert!(!is_ready(&checks, Some(&review(outcome))), "{outcome:?}");
    }
    let failed = check("lint: nosuchlinter", false, None);
    assert!(!is_ready(&[failed], None));
}

#[test]
fn next_steps_say_how_to_write_the_profile_and_mend_what_blocks() {
    let failed = check("lint: nosuchlinter", false, None);
    let next = next_steps(ProfileSource::Detected, false, &[failed], None);
    assert_eq!(next.len(), 2, "{next:?}");
    assert!(next[0].contains("flotilla ready --write"), "{next:?}");
    assert_eq!(next[1], "lint: nosuchlinter: install lint: nosuchlinter");
    let next = next_steps(ProfileSource::Detected, true, &[], None);
    assert!(
        next[0].starts_with("wrote .flotilla/profile.toml"),
        "{next:?}"
    );
    assert!(next_steps(ProfileSource::File, false, &[], None).is_empty());
    let bad = check("profile", false, None);
    let next = next_steps(ProfileSource::Detected, false, &[bad], None);
    assert_eq!(
        next,
        ["profile: install profile"],
        "no --write over a bad file"
    );
    let next = next_steps(
        ProfileSource::File,
        false,
        &[],
        Some(&review(PlanOutcome::Fail)),
    );
    assert!(next[0].contains("revise the plan"), "{next:?}");
    let next = next_steps(
        ProfileSource::File,
        false,
        &[],
        Some(&review(PlanOutcome::NotRun)),
    );
    assert_eq!(next, ["the plan was not reviewed: the lane failed"]);
}
