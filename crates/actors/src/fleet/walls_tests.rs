//! Usage walls in a fleet's run: moving down a chain, pausing until the
//! wall lifts, at the reset a CLI reported.
#![allow(clippy::unwrap_used)]

use crate::fleet::run::tests::{Fixture, ONE_STEP, ok, prompt_of, task};
use crate::fleet::run::{Action, FleetRun, SUPERVISOR, TurnEnd};

fn wall(class: &str) -> TurnEnd {
    TurnEnd {
        text: "429 Too Many Requests".into(),
        class: Some(class.into()),
        ..TurnEnd::default()
    }
}

fn model_of(actions: &[Action], who: &str) -> Option<String> {
    actions.iter().find_map(|a| match a {
        Action::Run { role, model, .. } if role == who => Some(model.clone()),
        _ => None,
    })?
}

#[test]
fn a_usage_wall_moves_the_member_down_its_chain_and_runs_the_same_turn_again() {
    let mut f = Fixture::new(1);
    f.chains.insert("worker-1".into(), vec!["small".into()]);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    let first = prompt_of(&a, "worker-1");
    assert_eq!(model_of(&a, "worker-1"), None);
    let a = run.ended("worker-1", wall("rate_limited"), &f.rules());
    assert_eq!(
        prompt_of(&a, "worker-1"),
        first,
        "the same turn, not a bounce"
    );
    assert_eq!(model_of(&a, "worker-1").as_deref(), Some("small"));
    assert!(
        !run.ledger.steps.contains_key("s1"),
        "a wall is not a bounce"
    );
    assert!(
        run.log
            .iter()
            .any(|d| d.text.contains("moves to the model small"))
    );
}

#[test]
fn a_wall_with_no_model_left_pauses_the_fleet_until_it_should_have_lifted() {
    let mut f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let a = run.ended(SUPERVISOR, wall("usage_limit"), &f.rules());
    let [Action::Paused(reason), Action::WallUntil(until)] = a.as_slice() else {
        panic!("{a:?}")
    };
    assert!(
        reason.contains("usage wall: supervisor hit usage_limit"),
        "{reason}"
    );
    assert_eq!(*until, 60_001);
    assert!(run.wall_lifted(&f.rules()).is_empty(), "not yet");
    f.now_ms = 60_001;
    let a = run.wall_lifted(&f.rules());
    assert!(
        prompt_of(&a, SUPERVISOR).contains("a report"),
        "the kickoff again: {a:?}"
    );
    let a = run.ended(SUPERVISOR, wall("rate_limited"), &f.rules());
    assert!(
        matches!(a[1], Action::WallUntil(u) if u == 60_001 + 120_000),
        "doubles: {a:?}"
    );
    run.resume(&f.rules());
    let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    assert!(!a.is_empty());
    let a = run.ended("worker-1", wall("rate_limited"), &f.rules());
    assert!(
        matches!(a[1], Action::WallUntil(u) if u == 60_001 + 60_000),
        "a turn that completed resets the doubling: {a:?}"
    );
}

#[test]
fn a_wall_whose_cli_reported_its_reset_resumes_at_that_reset_not_the_wall_wait() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let mut end = wall("usage_limit");
    end.resets_at_ms = Some(5_001);
    let a = run.ended(SUPERVISOR, end, &f.rules());
    let [Action::Paused(reason), Action::WallUntil(until)] = a.as_slice() else {
        panic!("{a:?}")
    };
    assert_eq!(*until, 5_001 + super::RESET_MARGIN_MS);
    assert!(
        reason.contains("in 7 s, at the reset its CLI reported"),
        "{reason}"
    );
    let mut end = wall("rate_limited");
    end.resets_at_ms = Some(0);
    run.resume(&f.rules());
    let a = run.ended(SUPERVISOR, end, &f.rules());
    assert!(
        matches!(a[1], Action::WallUntil(u) if u == 1 + 120_000),
        "a reset already past is ignored: the wall wait, doubled: {a:?}"
    );
}

#[test]
fn a_persons_pause_outlasts_the_wall_lifting() {
    let mut f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    run.ended(SUPERVISOR, wall("usage_limit"), &f.rules());
    run.pause_by_person(&f.rules());
    f.now_ms = 60_001;
    assert!(
        run.wall_lifted(&f.rules()).is_empty(),
        "no resume by itself"
    );
    assert!(run.paused.is_some());
}
