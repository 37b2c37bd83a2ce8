//! Tests of the lane rules: turns, collection, archive, events and the store codec.

use super::events::{EventKind, LaneEvent};
use super::*;
use crate::model::Timestamp;
use crate::names::MessageId;
use crate::names::{PeerId, PeerName};

fn spec() -> LaneSpec {
    LaneSpec {
        name: PeerName::new("w").expect("name"),
        cli: CliKind::Exec,
        cwd: "/tmp".into(),
        model: None,
        permissions: Permissions::Default,
        timeout_secs: Some(10),
        persistent: false,
        auto_archive_secs: Some(60),
        groups: vec![],
        inherit_groups: false,
        owner: PeerId::parse("h/lead").expect("owner"),
        env: vec![],
        args: vec!["true".into()],
        restart_on_stall: false,
    }
}

fn result(_turn: u32, status: TurnStatus, at: u64) -> TurnResult {
    TurnResult {
        lane: PeerId::parse("h/w").expect("id"),
        status,
        exit: Some(0),
        result: Some("done\nmore".into()),
        error: None,
        usage: Usage::default(),
        context_window: None,
        context_used_pct: None,
        cost_usd: None,
        native_session_id: Some("sess-1".into()),
        duration_ms: 5,
        finished_at: Timestamp(at),
        error_class: None,
    }
}

#[test]
fn a_turn_runs_then_its_result_is_collected_once() {
    let mut lane = LaneRecord::new(spec(), Timestamp(0));
    let plan = lane.begin_turn(false, Timestamp(1000)).expect("start");
    assert_eq!(
        plan,
        TurnPlan {
            turn: 1,
            resume: false,
            deadline: Some(Timestamp(11_000))
        }
    );
    assert_eq!(
        lane.begin_turn(true, Timestamp(1001)),
        Err(LaneError::Busy("w".into()))
    );
    assert!(lane.deadline_passed(Timestamp(11_000)));
    lane.finish_turn(result(1, TurnStatus::Completed, 2000));
    assert_eq!(lane.native_session.as_deref(), Some("sess-1"));
    assert!(matches!(
        lane.begin_turn(true, Timestamp(2001)),
        Err(LaneError::Uncollected(_))
    ));
    assert!(lane.collect().is_some());
    assert!(lane.collect().is_none(), "handed out once");
    let plan = lane.begin_turn(true, Timestamp(3000)).expect("resume");
    assert!(plan.resume);
    assert_eq!(plan.turn, 2);
}

#[test]
fn archive_rules_and_auto_archive() {
    let mut lane = LaneRecord::new(spec(), Timestamp(0));
    lane.begin_turn(false, Timestamp(0)).expect("start");
    assert!(
        lane.archive().is_err(),
        "running lanes are interrupted first"
    );
    lane.mark_interrupted().expect("interrupt");
    lane.finish_turn(result(1, TurnStatus::Interrupted, 1000));
    assert!(!lane.auto_archive_due(Timestamp(60_999)));
    assert!(lane.auto_archive_due(Timestamp(61_000)));
    lane.archive().expect("archive");
    lane.collect();
    assert!(matches!(
        lane.begin_turn(false, Timestamp(70_000)),
        Err(LaneError::Archived(_))
    ));
    lane.begin_turn(true, Timestamp(70_000))
        .expect("resume unarchives");
    assert_eq!(lane.phase, LanePhase::Running);
    let mut persistent = LaneRecord::new(
        LaneSpec {
            persistent: true,
            ..spec()
        },
        Timestamp(0),
    );
    persistent.finished_at = Some(Timestamp(0));
    assert!(
        persistent.auto_archive_due(Timestamp(60_000)),
        "persistence changes ownership only"
    );
    persistent.archive().expect("idle");
    assert!(persistent.wake(), "a message wakes it");
    assert_eq!(persistent.phase, LanePhase::Idle);
    persistent
        .begin_turn(false, Timestamp(61_000))
        .expect("a woken lane starts a turn without resuming");
    let mut kept = LaneRecord::new(
        LaneSpec {
            persistent: true,
            auto_archive_secs: None,
            ..spec()
        },
        Timestamp(0),
    );
    kept.finished_at = Some(Timestamp(0));
    assert!(!kept.auto_archive_due(Timestamp(1_000_000)));
    assert!(!kept.wake(), "only an archived lane wakes");
}

#[test]
fn exit_codes_are_documented_ones() {
    assert_eq!(TurnStatus::Completed.exit_code(), 0);
    assert_eq!(TurnStatus::Failed.exit_code(), 1);
    assert_eq!(TurnStatus::TimedOut.exit_code(), 124);
    assert_eq!(TurnStatus::Interrupted.exit_code(), 130);
    assert_eq!("codex".parse::<CliKind>(), Ok(CliKind::Codex));
    assert!("vim".parse::<CliKind>().is_err());
}

#[test]
fn events_serialize_with_their_type_names() {
    let e = LaneEvent {
        seq: 3,
        at: Timestamp(0),
        turn: 1,
        kind: EventKind::TurnCompleted(result(1, TurnStatus::Completed, 0)),
    };
    let v: serde_json::Value = serde_json::from_slice(&e.to_json()).expect("json");
    assert_eq!(v["type"], "turn.completed");
    for key in [
        "lane",
        "status",
        "exit",
        "result",
        "usage",
        "context_used_pct",
        "cost_usd",
        "native_session_id",
    ] {
        assert!(v.get(key).is_some(), "turn.completed lacks {key}");
    }
    let back: LaneEvent = serde_json::from_value(v).expect("back");
    assert_eq!(back, e);
    let m = LaneEvent {
        seq: 1,
        at: Timestamp(0),
        turn: 1,
        kind: EventKind::Message { text: "hi".into() },
    };
    assert!(
        String::from_utf8(m.to_json())
            .expect("utf8")
            .contains("\"type\":\"message\"")
    );
}

#[test]
fn summaries_are_one_line() {
    let r = result(2, TurnStatus::Completed, 0);
    assert_eq!(
        r.summary_line(2),
        "lane h/w turn 2: completed (exit 0): done"
    );
    assert_eq!(events::clip("héllo", 2), "h…");
}

#[test]
fn specs_and_records_round_trip_the_store_codec() {
    let mut lane = LaneRecord::new(spec(), Timestamp(5));
    lane.begin_turn(false, Timestamp(6)).expect("start");
    lane.finish_turn(result(1, TurnStatus::Completed, 7));
    let bytes = crate::codec::encode(&lane).expect("encode");
    let back: LaneRecord = crate::codec::decode(&bytes, 1 << 20).expect("decode");
    assert_eq!(back, lane);
}

/// Issue 13, point 8: messages that arrived during a turn were queued and
/// never read.
#[test]
fn queued_messages_become_one_prompt_once_the_lane_is_idle() {
    let mut lane = LaneRecord::new(spec(), Timestamp(0));
    lane.begin_turn(false, Timestamp(1)).expect("turn");
    lane.queued = vec!["alpha".into(), "beta".into()];
    let ids = vec![MessageId::new("m-1").expect("id")];
    lane.queued_from = ids.clone();
    assert_eq!(lane.take_queued(), None, "not while a turn runs");
    lane.running = None;
    lane.phase = LanePhase::Idle;
    assert_eq!(lane.take_queued(), Some(("alpha\n\nbeta".into(), ids)));
    assert!(lane.queued.is_empty() && lane.queued_from.is_empty());
    assert_eq!(lane.take_queued(), None);
}

/// Issue 12: a turn started by messages owes each sender a reply with its
/// result; notices held aside go in front of the next turn's prompt once.
#[test]
fn a_turn_answers_its_messages_and_asides_join_the_next_prompt() {
    let mut lane = LaneRecord::new(spec(), Timestamp(0));
    let asked = MessageId::new("m-7").expect("id");
    lane.answer(vec![asked.clone()]);
    lane.begin_turn(false, Timestamp(1)).expect("turn");
    lane.finish_turn(result(1, TurnStatus::Completed, 2));
    assert!(lane.answering.is_empty());
    let owed = &lane.replies_owed;
    assert_eq!(owed.len(), 1);
    assert_eq!((owed[0].turn, &owed[0].to), (1, &asked));
    assert!(owed[0].summary.contains("turn 1"), "{owed:?}");
    let first = owed[0].id(&lane, 0).expect("id");
    assert_eq!(
        owed[0].id(&lane, 0),
        Some(first),
        "fixed per turn and message"
    );
    lane.aside("child done".into());
    assert_eq!(lane.with_asides("next".into()), "child done\n\n---\n\nnext");
    lane.asides_given();
    assert_eq!(lane.with_asides("again".into()), "again", "given once");
}

#[test]
fn every_cli_and_permission_name_reads_back_and_is_its_wire_name() {
    for kind in CliKind::ALL {
        assert_eq!(kind.as_str().parse::<CliKind>(), Ok(kind));
        assert_eq!(serde_json::to_value(kind).ok(), Some(kind.as_str().into()));
    }
    for mode in Permissions::ALL {
        assert_eq!(mode.as_str().parse::<Permissions>(), Ok(mode));
        assert_eq!(serde_json::to_value(mode).ok(), Some(mode.as_str().into()));
    }
    assert!("root".parse::<Permissions>().is_err());
}

#[test]
fn a_session_the_cli_says_is_gone_is_not_resumed_again() {
    let mut lane = LaneRecord::new(spec(), Timestamp(0));
    lane.begin_turn(false, Timestamp(1)).expect("first");
    lane.finish_turn(result(1, TurnStatus::Completed, 2));
    lane.collect();
    assert_eq!(lane.native_session.as_deref(), Some("sess-1"));
    let plan = lane.begin_turn(true, Timestamp(3)).expect("resume");
    assert!(plan.resume);
    let mut gone = result(2, TurnStatus::Failed, 4);
    gone.error_class = Some(crate::lane::ErrorClass::SessionNotFound);
    lane.finish_turn(gone);
    lane.collect();
    assert!(lane.session_gone());
    assert_eq!(lane.native_session, None);
    let plan = lane.begin_turn(true, Timestamp(5)).expect("resume again");
    assert!(!plan.resume, "a new session, not the dead one again");
    lane.finish_turn(result(3, TurnStatus::Completed, 6));
    assert!(!lane.session_gone());
}
