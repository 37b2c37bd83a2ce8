//! Tests of lanes in the store: a lane's record, events, owed notice and
//! put-aside result are written together, and a version 4 store gains the
//! tables that hold them.

use super::*;
use crate::lane::events::EventKind;
use crate::lane::{CliKind, LaneRecord, LaneSpec, Permissions, TurnResult, TurnStatus, Usage};
use crate::names::PeerName;

fn record() -> LaneRecord {
    let spec = LaneSpec {
        name: PeerName::new("w").expect("name"),
        cli: CliKind::Exec,
        cwd: "/tmp".into(),
        model: None,
        permissions: Permissions::Default,
        timeout_secs: None,
        persistent: true,
        auto_archive_secs: None,
        groups: vec![],
        inherit_groups: false,
        owner: PeerId::parse("h/lead").expect("owner"),
        env: vec![],
        args: vec!["true".into()],
    };
    LaneRecord::new(spec, Timestamp(1))
}

fn result(text: &str) -> TurnResult {
    TurnResult {
        lane: PeerId::parse("h/w").expect("id"),
        status: TurnStatus::Completed,
        exit: Some(0),
        result: Some(text.into()),
        error: None,
        usage: Usage::default(),
        context_window: None,
        context_used_pct: None,
        cost_usd: None,
        native_session_id: None,
        duration_ms: 1,
        finished_at: Timestamp(2),
    }
}

#[tokio::test]
async fn a_lane_write_keeps_its_record_events_notice_and_shelf_together() {
    let (_d, store, q) = fixture().await;
    let mut w = LaneWrite::record(record());
    w.turn = 1;
    w.events = vec![EventKind::TurnCompleted(result("one"))];
    w.owe_notice = Some((1, result("one")));
    w.shelve = Some((1, result("one")));
    let events = q.write_lane(w).await.expect("write");
    assert_eq!(events.len(), 1);
    assert_eq!(store.lane_events("w", 0, 10).expect("events").len(), 1);
    assert_eq!(store.load_lanes().expect("lanes").len(), 1);
    assert_eq!(store.lane_notices("w").expect("notices")[0].0, 1);
    assert_eq!(store.lane_shelf("w").expect("shelf")[0].1, result("one"));
    q.notice_sent("w", 1).await.expect("sent");
    assert!(store.lane_notices("w").expect("notices").is_empty());
    let mut w = LaneWrite::record(record());
    w.unshelve = Some(1);
    q.write_lane(w).await.expect("unshelve");
    assert!(store.lane_shelf("w").expect("shelf").is_empty());
}

#[tokio::test]
async fn a_version_4_store_gains_the_lane_notice_and_shelf_tables() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        txn.delete_table(super::super::schema::LANE_NOTICES)
            .expect("drop");
        txn.delete_table(super::super::schema::LANE_SHELF)
            .expect("drop");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 4)
            .expect("v4");
        txn.commit().expect("commit");
    }
    let store = Store::open(&path).expect("upgrade");
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert!(store.lane_notices("w").expect("notices").is_empty());
    assert!(store.lane_shelf("w").expect("shelf").is_empty());
}
