//! Tests of lanes in the store: a lane's record, events, owed notice and
//! put-aside result are written together, and a version 4 store gains the
//! tables that hold them.

use super::*;
use crate::lane::events::EventKind;
use crate::lane::{CliKind, LaneRecord, LaneSpec, Permissions, TurnResult, TurnStatus, Usage};
use crate::names::PeerName;

pub(super) fn record() -> LaneRecord {
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
        restart_on_stall: false,
    };
    LaneRecord::new(spec, Timestamp(1))
}

pub(super) fn result(text: &str) -> TurnResult {
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
        error_class: None,
    }
}

#[tokio::test]
async fn a_new_lanes_peer_is_stored_with_its_first_turn() {
    let (_d, store, q) = fixture().await;
    let mut w = LaneWrite::record(record());
    w.turn = 1;
    w.events = vec![EventKind::Note {
        text: "started".into(),
    }];
    w.peer = Some(crate::model::PeerRecord {
        id: PeerId::parse("h/w").expect("id"),
        kind: crate::model::PeerKind::Lane,
        product: None,
        groups: Default::default(),
        joined_at: Timestamp(1),
    });
    let lane_peer =
        |peers: Vec<crate::model::PeerRecord>| peers.iter().any(|p| p.id.to_string() == "h/w");
    assert!(!lane_peer(store.load_peers().expect("peers")));
    q.write_lane(w).await.expect("write");
    assert!(lane_peer(store.load_peers().expect("peers")));
    assert_eq!(store.load_lanes().expect("lanes").len(), 1);
    assert_eq!(store.lane_events("w", 0, 10).expect("events").len(), 1);
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

#[tokio::test]
async fn a_version_6_lane_record_is_rewritten_by_the_upgrade_to_version_7() {
    use super::upgrade_v7::{LaneRecordV6, LaneSpecV6};
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    let new = record();
    let s = new.spec.clone();
    let old = LaneRecordV6 {
        spec: LaneSpecV6 {
            name: s.name,
            cli: s.cli,
            cwd: s.cwd,
            model: s.model,
            permissions: s.permissions,
            timeout_secs: s.timeout_secs,
            persistent: s.persistent,
            auto_archive_secs: s.auto_archive_secs,
            groups: s.groups,
            inherit_groups: s.inherit_groups,
            owner: s.owner,
            env: s.env,
            args: s.args,
        },
        phase: new.phase,
        turns: new.turns,
        native_session: None,
        running: None,
        uncollected: None,
        last_result: None,
        created_at: new.created_at,
        finished_at: None,
        queued: vec![],
    };
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        let bytes = crate::codec::encode(&old).expect("encode");
        txn.open_table(super::schema::LANES)
            .expect("lanes")
            .insert("w", bytes.as_slice())
            .expect("put");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 6)
            .expect("v6");
        txn.commit().expect("commit");
        assert!(
            store.load_lanes().is_err(),
            "version 7 cannot read it as is"
        );
    }
    let store = Store::open(&path).expect("upgrade");
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert_eq!(store.load_lanes().expect("lanes"), vec![new]);
}

#[tokio::test]
async fn version_8_results_are_rewritten_by_the_upgrade_to_version_9() {
    use super::upgrade_v9::{LaneRecordV8, TurnResultV8};
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    let r = result("done");
    let old_result = TurnResultV8 {
        lane: r.lane.clone(),
        status: r.status,
        exit: r.exit,
        result: r.result.clone(),
        error: r.error.clone(),
        usage: r.usage,
        context_window: r.context_window,
        context_used_pct: r.context_used_pct,
        cost_usd: r.cost_usd,
        native_session_id: r.native_session_id.clone(),
        duration_ms: r.duration_ms,
        finished_at: r.finished_at,
    };
    let mut new = record();
    new.last_result = Some(r.clone());
    let old = LaneRecordV8 {
        spec: new.spec.clone(),
        phase: new.phase,
        turns: new.turns,
        native_session: None,
        running: None,
        uncollected: None,
        last_result: Some(old_result.clone()),
        created_at: new.created_at,
        finished_at: None,
        queued: vec![],
        queued_from: vec![],
        answering: vec![],
        replies_owed: vec![],
        asides: vec![],
    };
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        let encoded = |v: &TurnResultV8| crate::codec::encode(v).expect("encode");
        txn.open_table(super::schema::LANES)
            .expect("lanes")
            .insert("w", crate::codec::encode(&old).expect("encode").as_slice())
            .expect("put");
        txn.open_table(super::schema::LANE_NOTICES)
            .expect("notices")
            .insert(("w", 1), encoded(&old_result).as_slice())
            .expect("put");
        txn.open_table(super::schema::LANE_SHELF)
            .expect("shelf")
            .insert(("w", 1), encoded(&old_result).as_slice())
            .expect("put");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 8)
            .expect("v8");
        txn.commit().expect("commit");
        assert!(
            store.load_lanes().is_err(),
            "version 9 cannot read it as is"
        );
    }
    let store = Store::open(&path).expect("upgrade");
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert_eq!(store.load_lanes().expect("lanes"), vec![new]);
    assert_eq!(
        store.lane_notices("w").expect("notices"),
        vec![(1, r.clone())]
    );
    assert_eq!(store.lane_shelf("w").expect("shelf"), vec![(1, r)]);
}

pub(super) fn fleet(name: &str) -> crate::fleet::FleetRecord {
    use crate::fleet::{FleetRun, FleetSpec, MemberSpec};
    let member = MemberSpec {
        cli: CliKind::Exec,
        model: None,
        command: Some("true".into()),
        fallback_models: Vec::new(),
        permissions: Default::default(),
        host: None,
        claim: None,
    };
    crate::fleet::FleetRecord {
        spec: FleetSpec {
            name: PeerName::new(name).expect("name"),
            supervisor: member.clone(),
            workers: vec![member],
            lifecycle: crate::fleet::Lifecycle::Task,
            dir: "/tmp".into(),
            max_busy: None,
            budget: crate::fleet::BudgetCard::default(),
            turn_timeout_secs: None,
            check_timeout_secs: 60,
            rotate_at_pct: 60.0,
            rotate_now_at_pct: None,
            wall_wait_secs: 300,
            matrix: Vec::new(),
            as_peer: None,
        },
        started_ms: 1,
        stopped: false,
        run: FleetRun::default(),
        parent: None,
        remote_seen: Default::default(),
    }
}

#[tokio::test]
async fn a_fleet_record_is_stored_whole_and_a_version_9_store_gains_the_fleets_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        txn.delete_table(super::super::schema::FLEETS)
            .expect("drop");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 9)
            .expect("v9");
        txn.commit().expect("commit");
    }
    let store = std::sync::Arc::new(Store::open(&path).expect("upgrade"));
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert!(store.fleets().expect("fleets").is_empty());
    let (q, _h) =
        CommitQueue::start(store.clone(), tokio::sync::watch::channel(0).0).expect("queue");
    let mut a = fleet("a");
    a.run.spent.model_calls = 7;
    q.put_fleet(&a).await.expect("put");
    q.put_fleet(&fleet("b")).await.expect("put");
    assert_eq!(store.fleet("a").expect("read"), Some(a));
    assert_eq!(store.fleets().expect("fleets").len(), 2);
    q.remove_fleet("b").await.expect("remove");
    assert_eq!(store.fleet("b").expect("read"), None);
}
