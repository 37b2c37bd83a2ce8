use super::*;
use crate::governance::record::turn_summary;

fn id(text: &str) -> ClaimId {
    ClaimId::parse(text).expect("id")
}

fn rec(claim: &str, at: u64, entry: Entry) -> Record {
    Record::new(id(claim), entry, "laptop", Timestamp(at))
}

fn added(claim: &str, at: u64) -> Record {
    rec(
        claim,
        at,
        Entry::Claim {
            title: claim.to_uppercase(),
            branch: format!("flotilla/{claim}"),
            base: "main".into(),
            brief: None,
        },
    )
}

fn lane(claim: &str, at: u64, name: &str) -> Record {
    rec(
        claim,
        at,
        Entry::Lane {
            lane: format!("laptop/{name}"),
            cli: "exec".into(),
            worktree: "/w".into(),
        },
    )
}

#[test]
fn records_fold_into_each_claims_state() {
    let records = [
        added("a", 1),
        added("b", 2),
        lane("a", 3, "lane-1"),
        rec(
            "a",
            4,
            Entry::Turn {
                lane: "laptop/lane-1".into(),
                status: "completed".into(),
                head: Some("abc".into()),
                summary: turn_summary("  built it  "),
            },
        ),
        rec("b", 5, Entry::Drop { kept: false }),
    ];
    let (board, notes) = Board::fold(&records);
    assert!(notes.is_empty(), "{notes:?}");
    let a = board.get(&id("a")).expect("a");
    assert_eq!(a.status, ClaimStatus::InFlight);
    assert_eq!(a.lane.as_deref(), Some("laptop/lane-1"));
    assert_eq!(a.last_turn.as_deref(), Some("completed"));
    assert_eq!(a.head.as_deref(), Some("abc"));
    assert_eq!(
        (a.records, a.added_at, a.updated_at),
        (3, Timestamp(1), Timestamp(4))
    );
    assert_eq!(board.get(&id("b")).expect("b").status, ClaimStatus::Dropped);
    assert_eq!(board.claims[0].id, id("a"), "in the order they were added");
}

#[test]
fn records_that_do_not_fit_are_skipped_and_named() {
    let records = [
        added("a", 1),
        added("a", 2),
        lane("ghost", 3, "l"),
        rec("a", 4, Entry::Drop { kept: true }),
        lane("a", 5, "late"),
    ];
    let (board, notes) = Board::fold(&records);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains("added twice"));
    assert!(notes[1].contains("never added"));
    assert!(notes[2].contains("after claim a was dropped"));
    let a = board.get(&id("a")).expect("a");
    assert_eq!((a.status, a.lane.clone()), (ClaimStatus::Dropped, None));
}

#[test]
fn concurrency_counts_other_claims_in_flight() {
    let records = [
        added("a", 1),
        added("b", 2),
        added("c", 3),
        lane("a", 4, "l1"),
    ];
    let (board, _) = Board::fold(&records);
    let refusal = board.may_start(&id("b"), 1).expect_err("one in flight");
    assert_eq!((refusal.in_flight, refusal.names.as_str()), (1, "a"));
    assert!(refusal.to_string().contains("concurrency"), "{refusal}");
    assert!(board.may_start(&id("a"), 1).is_ok(), "its own worktree");
    assert!(board.may_start(&id("b"), 2).is_ok());
    let (board, _) = Board::fold(&[
        added("a", 1),
        lane("a", 2, "l"),
        rec("a", 3, Entry::Drop { kept: false }),
    ]);
    assert!(
        board.may_start(&id("b"), 1).is_ok(),
        "a dropped claim is not in flight"
    );
}

#[test]
fn a_fleets_claims_count_together() {
    let (board, _) = Board::fold(&[added("a", 1), added("b", 2), added("c", 3)]);
    let both = [id("a"), id("b")];
    let refusal = board.may_start_all(&both, 1).expect_err("two at once");
    assert_eq!(
        (
            refusal.in_flight,
            refusal.names.as_str(),
            refusal.starting.as_str()
        ),
        (0, "none", "a, b")
    );
    assert!(board.may_start_all(&both, 2).is_ok());
    let (board, _) = Board::fold(&[
        added("a", 1),
        added("b", 2),
        added("c", 3),
        lane("c", 4, "l"),
    ]);
    let refusal = board.may_start_all(&both, 2).expect_err("c is in flight");
    assert_eq!(
        (refusal.names.as_str(), refusal.starting.as_str()),
        ("c", "a, b")
    );
    assert!(
        board.may_start_all(&[id("c")], 1).is_ok(),
        "already in flight"
    );
}

#[test]
fn a_turns_summary_is_trimmed_and_cut_and_a_handoff_only_counts() {
    assert_eq!(turn_summary("  \n "), None);
    let long = "é".repeat(crate::governance::record::SUMMARY_CHARS + 5);
    let cut = turn_summary(&long).expect("cut");
    assert_eq!(
        cut.chars().count(),
        crate::governance::record::SUMMARY_CHARS + 1
    );
    assert!(cut.ends_with('…'));
    let note = crate::fleet::rotation::HandoffNote::default();
    let records = [
        added("a", 1),
        lane("a", 2, "w"),
        rec(
            "a",
            3,
            Entry::Handoff {
                lane: "laptop/w".into(),
                note,
            },
        ),
    ];
    let (board, notes) = Board::fold(&records);
    assert!(notes.is_empty(), "{notes:?}");
    let a = board.get(&id("a")).expect("a");
    assert_eq!((a.records, a.status), (3, ClaimStatus::InFlight));
}
