//! The write-ahead log under the store: a copy of the files taken while
//! the writer runs is what a crash leaves, and opening it must bring back
//! every acknowledged write, exactly once and in order.

use std::path::Path;

use super::*;

fn ids(store: &Store, peer: &str) -> Vec<String> {
    let peer = PeerId::parse(peer).expect("peer");
    let (got, _) = store.fetch_inbox(&peer, 1000, 1 << 24).expect("fetch");
    got.into_iter().map(|m| m.id.as_str().to_owned()).collect()
}

/// Copies the store (and its log, when `with_log`) as a crash would leave
/// them: the redb file holds its last durable commit.
fn crash_image(from: &Path, to: &Path, with_log: bool) -> std::path::PathBuf {
    std::fs::create_dir_all(to).expect("dir");
    let store = to.join("s.redb");
    std::fs::copy(from, &store).expect("copy store");
    if with_log {
        std::fs::copy(wal_path(from), wal_path(&store)).expect("copy log");
    }
    store
}

#[tokio::test]
async fn a_crash_image_is_brought_back_by_its_log_exactly_once() {
    let (dir, store, q) = fixture().await;
    for i in 1..=20 {
        let to: &[&str] = if i % 2 == 0 {
            &["h/b", "h/c"]
        } else {
            &["h/b"]
        };
        q.accept(msg(&format!("m{i}"), "h/a", to))
            .await
            .expect("accept");
    }
    // A retry and a refusal in the log replay as what they were.
    q.accept(msg("m3", "h/a", &["h/b"])).await.expect("retry");
    assert!(q.accept(msg("x", "h/a", &["h/nobody"])).await.is_err());
    let read: Vec<MessageId> = (1..=5)
        .map(|i| MessageId::new(&format!("m{i}")).expect("id"))
        .collect();
    assert_eq!(
        q.ack(PeerId::parse("h/b").expect("b"), read)
            .await
            .expect("ack"),
        5
    );
    let live_b = ids(&store, "h/b");
    let live_c = ids(&store, "h/c");
    assert_eq!(live_b.len(), 15);

    let path = dir.path().join("s.redb");
    let with_log = crash_image(&path, &dir.path().join("crash"), true);
    let without = crash_image(&path, &dir.path().join("bare"), false);
    let bare = Store::open(&without).expect("open bare");
    assert!(
        ids(&bare, "h/c").is_empty() && ids(&bare, "h/b").is_empty(),
        "the store file alone must lack the logged writes, or this test proves nothing"
    );
    drop(bare);

    let log = std::fs::read(wal_path(&with_log)).expect("log");
    let back = Store::open(&with_log).expect("open crash image");
    assert_eq!(ids(&back, "h/b"), live_b);
    assert_eq!(ids(&back, "h/c"), live_c);
    back.verify().expect("consistent");
    drop(back);
    // A crash that lost the emptying: the store's position skips it all.
    std::fs::write(wal_path(&with_log), &log).expect("put the log back");
    let back = Arc::new(Store::open(&with_log).expect("open again"));
    assert_eq!(ids(&back, "h/b"), live_b, "nothing applied twice");
    back.verify().expect("consistent");
    // Numbers go on where the acknowledged ones stopped, and an id used
    // before the crash is still known.
    let (q2, writer) = CommitQueue::start(back.clone(), watch::channel(0).0).expect("queue");
    let AcceptOutcome::Stored(rec) = q2.accept(msg("m21", "h/a", &["h/b"])).await.expect("m21")
    else {
        panic!("stored")
    };
    assert_eq!(rec.seq, 21);
    let again = q2
        .accept(msg("m20", "h/a", &["h/b", "h/c"]))
        .await
        .expect("retry");
    assert!(matches!(again, AcceptOutcome::Duplicate(_)));
    q2.shutdown().await;
    drop(q2);
    writer.join().expect("writer");
}

#[tokio::test]
async fn a_clean_stop_leaves_everything_in_the_store_itself() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    let store = Arc::new(Store::open(&path).expect("open"));
    let (q, writer) = CommitQueue::start(store.clone(), watch::channel(0).0).expect("queue");
    q.put_peer(peer("h/a", &["g"])).await.expect("a");
    q.put_peer(peer("h/b", &["g"])).await.expect("b");
    q.accept(msg("m1", "h/a", &["h/b"])).await.expect("m1");
    let before = crash_image(&path, &dir.path().join("before"), false);
    assert!(
        ids(&Store::open(&before).expect("open"), "h/b").is_empty(),
        "m1 went through the log"
    );
    q.shutdown().await;
    drop(q);
    writer.join().expect("writer");
    // Copied while the store is still open (its close would commit what
    // is pending anyway): only the writer's last durable commit put m1
    // into the file.
    let after = crash_image(&path, &dir.path().join("after"), false);
    drop(store);
    assert_eq!(ids(&Store::open(&after).expect("reopen"), "h/b"), ["m1"]);
}

#[tokio::test]
async fn a_log_of_another_store_is_set_aside_not_applied() {
    let (dir, _store, q) = fixture().await;
    q.accept(msg("m1", "h/a", &["h/b"])).await.expect("m1");
    let path = dir.path().join("s.redb");
    // Another store with the same peers: applying the log would store m1.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let fresh = other.join("s.redb");
    {
        let store = Arc::new(Store::open(&fresh).expect("create"));
        let (q, writer) = CommitQueue::start(store.clone(), watch::channel(0).0).expect("queue");
        q.put_peer(peer("h/a", &["g"])).await.expect("a");
        q.put_peer(peer("h/b", &["g"])).await.expect("b");
        q.shutdown().await;
        drop(q);
        writer.join().expect("writer");
    }
    std::fs::copy(wal_path(&path), wal_path(&fresh)).expect("copy log");
    let opened = Store::open(&fresh).expect("open");
    assert!(
        ids(&opened, "h/b").is_empty(),
        "the foreign log was not applied"
    );
    let aside: Vec<_> = std::fs::read_dir(&other)
        .expect("ls")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".wal.orphan-"))
        .collect();
    assert_eq!(aside.len(), 1, "the foreign log is kept aside");
}

#[tokio::test]
async fn a_lanes_writes_come_back_from_the_log_with_its_peer() {
    use super::lanes::{fleet, record, result};
    use crate::lane::events::EventKind;
    let (dir, store, q) = fixture().await;
    // Every other kind of write goes through the log as well.
    q.put_fleet(&fleet("f1")).await.expect("fleet");
    q.put_fleet(&fleet("f2")).await.expect("fleet");
    q.remove_fleet("f2").await.expect("fleet gone");
    let (x, y) = (
        PeerId::parse("h/x").expect("x"),
        PeerId::parse("h/y").expect("y"),
    );
    q.put_peer(peer("h/x", &["g"])).await.expect("x");
    q.rename_peer(x, y).await.expect("renamed");
    q.remove_peer(PeerId::parse("h/c").expect("c"), false)
        .await
        .expect("c gone");
    let mut gone = record();
    gone.spec.name = crate::names::PeerName::new("gone").expect("name");
    q.put_lane(gone).await.expect("lane");
    q.remove_lane("gone", PeerId::parse("h/gone").expect("id"), true)
        .await
        .expect("lane gone");
    let mut w = LaneWrite::record(record());
    w.turn = 1;
    w.events = vec![EventKind::TurnCompleted(result("one"))];
    w.owe_notice = Some((1, result("one")));
    w.peer = Some(peer("h/w", &["g"]));
    q.write_lane(w).await.expect("write");
    q.append_events(
        "w",
        1,
        vec![EventKind::Note {
            text: "more".into(),
        }],
    )
    .await
    .expect("events");
    let live = store.lane_events("w", 0, 10).expect("events");
    assert_eq!(live.len(), 2);

    let path = dir.path().join("s.redb");
    let with_log = crash_image(&path, &dir.path().join("crash"), true);
    let without = crash_image(&path, &dir.path().join("bare"), false);
    let bare = Store::open(&without).expect("open bare");
    assert!(
        bare.load_lanes().expect("lanes").is_empty(),
        "the store file alone must lack the lane, or this test proves nothing"
    );
    drop(bare);
    let back = Store::open(&with_log).expect("open crash image");
    assert_eq!(back.load_lanes().expect("lanes").len(), 1);
    assert_eq!(back.lane_events("w", 0, 10).expect("events"), live);
    assert_eq!(back.lane_notices("w").expect("notices")[0].0, 1);
    assert!(
        back.load_peers()
            .expect("peers")
            .iter()
            .any(|p| p.id.to_string() == "h/w"),
        "the lane's peer came back with it"
    );
    let names = |peers: Vec<crate::model::PeerRecord>| {
        let mut v: Vec<String> = peers.iter().map(|p| p.id.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(
        names(back.load_peers().expect("peers")),
        names(store.load_peers().expect("live peers"))
    );
    let fleets: Vec<String> = back
        .fleets()
        .expect("fleets")
        .into_iter()
        .map(|f| f.spec.name.to_string())
        .collect();
    assert_eq!(fleets, ["f1"]);
    back.verify().expect("consistent");
}

#[tokio::test]
async fn accepted_messages_wake_the_forwarder_before_their_sender_is_answered() {
    let (_dir, _store, q) = fixture().await;
    let mut forwards = q.forwards_ready();
    forwards.borrow_and_update();
    q.put_peer(peer("h/d", &["g"])).await.expect("d");
    assert!(
        !forwards.has_changed().expect("open"),
        "no message, nothing to hand on"
    );
    q.accept(msg("m1", "h/a", &["h/b"])).await.expect("m1");
    assert!(
        forwards.has_changed().expect("open"),
        "woken by the time the sender is answered"
    );
    forwards.borrow_and_update();
    // Only an acceptance adds to the outbox: a delivery stored or an
    // inbox read does not make the link read it again.
    let delivered = super::group::delivery("r1", "h/b");
    q.accept_delivery(delivered).await.expect("delivery");
    let id = MessageId::new("r1").expect("id");
    let b = PeerId::parse("h/b").expect("b");
    assert_eq!(q.ack(b, vec![id]).await.expect("ack"), 1);
    assert!(
        !forwards.has_changed().expect("open"),
        "nothing new for the hub"
    );
}

#[tokio::test]
async fn a_record_this_flotilla_cannot_read_refuses_the_store_by_name_and_keeps_the_log() {
    let (dir, _store, q) = fixture().await;
    q.accept(msg("m1", "h/a", &["h/b"])).await.expect("m1");
    let image = crash_image(&dir.path().join("s.redb"), &dir.path().join("crash"), true);
    // A record that passes its checksum but holds no write this build
    // knows (as a newer Flotilla's might).
    let log = wal_path(&image);
    let header = std::fs::read(&log).expect("log");
    let id = u64::from_le_bytes(header[8..16].try_into().expect("id"));
    let opened = crate::wal::WalFile::open(&log, id).expect("open log");
    let next = opened.records.last().map_or(1, |r| r.seq + 1);
    let mut wal = opened.wal;
    wal.append(next, &[0xff; 12]).expect("append");
    wal.sync().expect("sync");
    drop(wal);
    let before = std::fs::read(&log).expect("log");
    let err = Store::open(&image).expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "record {next} holds writes this Flotilla cannot read"
        )) && text.contains(&log.display().to_string()),
        "{text}"
    );
    assert_eq!(std::fs::read(&log).expect("log"), before, "the log is kept");
    // The store file holds nothing of the replay that was refused.
    let alone = crash_image(&image, &dir.path().join("alone"), false);
    assert!(
        ids(&Store::open(&alone).expect("open alone"), "h/b").is_empty(),
        "nothing was replayed"
    );
}
