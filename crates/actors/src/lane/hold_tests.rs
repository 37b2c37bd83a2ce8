//! Tests of the hold rules: who may hold a lane, and the turn that waits.

use super::*;
use crate::lane::{CliKind, ErrorClass, LaneSpec, Permissions, TurnResult, TurnStatus, Usage};
use crate::names::{PeerId, PeerName};

fn lane() -> LaneRecord {
    let spec = LaneSpec {
        name: PeerName::new("w").expect("name"),
        cli: CliKind::Claude,
        cwd: "/tmp".into(),
        model: None,
        permissions: Permissions::Default,
        timeout_secs: None,
        persistent: false,
        auto_archive_secs: Some(60),
        groups: vec![],
        inherit_groups: false,
        owner: PeerId::parse("h/lead").expect("owner"),
        env: vec![],
        args: vec![],
        restart_on_stall: false,
    };
    LaneRecord::new(spec, Timestamp(0))
}

fn ended(lane: &mut LaneRecord, session: Option<&str>, class: Option<ErrorClass>) {
    lane.finish_turn(TurnResult {
        lane: PeerId::parse("h/w").expect("id"),
        status: TurnStatus::Completed,
        exit: Some(0),
        result: None,
        error: None,
        usage: Usage::default(),
        context_window: None,
        context_used_pct: None,
        cost_usd: None,
        native_session_id: session.map(str::to_owned),
        duration_ms: 1,
        finished_at: Timestamp(5),
        error_class: class,
    });
}

fn person(pid: u32) -> Holder {
    Holder {
        name: format!("pid {pid}"),
        pid,
        pid_start: Some(7),
    }
}

/// A lane whose first turn ended with session `s1`, its result collected.
fn idle_with_session() -> LaneRecord {
    let mut l = lane();
    l.begin_turn(false, Timestamp(1)).expect("turn");
    ended(&mut l, Some("s1"), None);
    l.collect();
    l
}

#[test]
fn an_idle_lane_with_a_session_is_held_and_ready() {
    let l = idle_with_session();
    let hold = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    assert_eq!((hold.since, hold.waiting.clone()), (Timestamp(9), None));
    assert_eq!(LaneHold::ready(&l), Some(Ok("s1")));
}

#[test]
fn a_second_holder_is_refused_with_the_first_named() {
    let l = idle_with_session();
    let first = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    let err = LaneHold::claim(Some(&first), &l, person(2), Timestamp(10)).expect_err("refused");
    assert_eq!(
        err,
        HoldError::Held {
            lane: "w".into(),
            holder: "pid 1".into(),
            since: 9
        }
    );
    assert!(err.to_string().contains("held by pid 1"), "{err}");
}

#[test]
fn a_cli_without_resume_or_a_lane_without_a_session_is_refused() {
    let l = idle_with_session();
    for cli in [CliKind::Exec, CliKind::Grok] {
        let mut other = l.clone();
        other.spec.cli = cli;
        let err = LaneHold::claim(None, &other, person(1), Timestamp(9)).expect_err("refused");
        assert!(matches!(err, HoldError::NoResume { .. }), "{err}");
    }
    assert!(steps_in(CliKind::Codex) && steps_in(CliKind::Opencode));
    let fresh = lane();
    let err = LaneHold::claim(None, &fresh, person(1), Timestamp(9)).expect_err("refused");
    assert_eq!(err, HoldError::NoSession("w".into()));
    // A session the CLI said is gone is no session to step into.
    let mut gone = idle_with_session();
    gone.begin_turn(true, Timestamp(10)).expect("turn");
    ended(&mut gone, None, Some(ErrorClass::SessionNotFound));
    let err = LaneHold::claim(None, &gone, person(1), Timestamp(11)).expect_err("refused");
    assert_eq!(err, HoldError::NoSession("w".into()));
}

#[test]
fn a_running_lane_is_held_at_once_and_ready_when_its_turn_ends() {
    let mut l = lane();
    l.begin_turn(false, Timestamp(1)).expect("turn");
    let hold = LaneHold::claim(None, &l, person(1), Timestamp(2)).expect("held");
    assert_eq!(LaneHold::ready(&l), None, "waits for the turn");
    assert!(hold.waiting.is_none());
    ended(&mut l, Some("s9"), None);
    assert_eq!(LaneHold::ready(&l), Some(Ok("s9")));
    // A first turn that left no session: the holder is told why.
    let mut none = lane();
    none.begin_turn(false, Timestamp(1)).expect("turn");
    ended(&mut none, None, None);
    assert_eq!(
        LaneHold::ready(&none),
        Some(Err(HoldError::NoSession("w".into())))
    );
}

#[test]
fn one_turn_waits_for_the_release_with_its_number_reserved() {
    let l = idle_with_session();
    let mut hold = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    assert_eq!(hold.ask_turn(&l, "next".into(), true), Ok(2));
    assert_eq!(
        hold.waiting,
        Some(WaitingTurn {
            turn: 2,
            prompt: "next".into(),
            resume: true
        })
    );
    let second = hold.ask_turn(&l, "more".into(), true).expect_err("refused");
    assert_eq!(second, LaneError::Held("w".into(), "pid 1".into()));
    assert_eq!(
        hold.waiting.as_ref().map(|w| w.prompt.as_str()),
        Some("next")
    );
}

#[test]
fn a_waiting_turn_obeys_the_lanes_own_rules() {
    let mut l = lane();
    l.begin_turn(false, Timestamp(1)).expect("turn");
    ended(&mut l, Some("s1"), None);
    let mut hold = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    assert_eq!(
        hold.ask_turn(&l, "next".into(), true),
        Err(LaneError::Uncollected("w".into())),
        "an uncollected result is collected first, held or not"
    );
    assert!(hold.waiting.is_none());
}

#[test]
fn the_holder_is_recognised_by_pid_and_start_time() {
    let l = idle_with_session();
    let hold = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    assert!(hold.held_by(1, Some(7)));
    assert!(hold.held_by(1, None));
    assert!(!hold.held_by(1, Some(8)), "a reused pid is someone else");
    assert!(!hold.held_by(2, Some(7)));
}

#[test]
fn a_hold_survives_encoding() {
    let l = idle_with_session();
    let mut hold = LaneHold::claim(None, &l, person(1), Timestamp(9)).expect("held");
    hold.ask_turn(&l, "next".into(), false).expect("waits");
    let json = serde_json::to_string(&hold).expect("encode");
    let back: LaneHold = serde_json::from_str(&json).expect("decode");
    assert_eq!(back, hold);
}
