//! Tests of the store: acceptance, dedupe, order, acks, peers, group commit and schema versions.

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::sync::watch;

use super::commit::CommitQueue;
use super::schema::{META, VERSION_KEY};
use super::*;
use crate::model::{PeerKind, PeerRecord, Timestamp};
use crate::names::{GroupName, MessageId, PeerId};

fn peer(id: &str, groups: &[&str]) -> PeerRecord {
    PeerRecord {
        id: PeerId::parse(id).expect("id"),
        kind: PeerKind::Mailbox,
        product: None,
        groups: groups
            .iter()
            .map(|g| GroupName::new(g).expect("g"))
            .collect::<BTreeSet<_>>(),
        joined_at: Timestamp(1),
    }
}

fn msg(id: &str, from: &str, to: &[&str]) -> NewMessage {
    NewMessage {
        id: MessageId::new(id).expect("id"),
        from: PeerId::parse(from).expect("from"),
        to: to.iter().map(|t| PeerId::parse(t).expect("to")).collect(),
        group: None,
        summary: None,
        body: format!("body of {id}"),
        in_reply_to: None,
        sent_at: Timestamp(2),
        outbox_room: OutboxRoom::default(),
    }
}

async fn fixture() -> (tempfile::TempDir, Arc<Store>, CommitQueue) {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Arc::new(Store::open(&dir.path().join("s.redb")).expect("open"));
    let (q, _h) = CommitQueue::start(store.clone(), watch::channel(0).0).expect("queue");
    for p in [
        peer("h/a", &["g"]),
        peer("h/b", &["g"]),
        peer("h/c", &["g"]),
    ] {
        q.put_peer(p).await.expect("put");
    }
    (dir, store, q)
}

#[tokio::test]
async fn accepted_messages_are_deduplicated_and_ordered() {
    let (_d, store, q) = fixture().await;
    let first = q
        .accept(msg("m1", "h/a", &["h/b", "h/c"]))
        .await
        .expect("m1");
    let AcceptOutcome::Stored(rec) = first else {
        panic!("stored")
    };
    assert_eq!(rec.seq, 1);
    let again = q
        .accept(msg("m1", "h/a", &["h/b", "h/c"]))
        .await
        .expect("retry");
    assert!(matches!(again, AcceptOutcome::Duplicate(ref r) if r.seq == 1));
    q.accept(msg("m2", "h/a", &["h/b"])).await.expect("m2");
    let (got, remaining) = store
        .fetch_inbox(&PeerId::parse("h/b").expect("b"), 10, 1 << 20)
        .expect("fetch");
    let ids: Vec<&str> = got.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m1", "m2"]);
    assert_eq!(got[1].seq, 2);
    assert_eq!(remaining, 0);
    // Another sender may not reuse the id.
    assert!(q.accept(msg("m1", "h/b", &["h/a"])).await.is_err());
    assert!(store.verify().expect("verify").contains("consistent"));
}

#[tokio::test]
async fn acks_release_messages_once_every_inbox_read_them() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("m1", "h/a", &["h/b", "h/c"]))
        .await
        .expect("m1");
    let b = PeerId::parse("h/b").expect("b");
    let c = PeerId::parse("h/c").expect("c");
    let ids = vec![MessageId::new("m1").expect("id")];
    assert_eq!(q.ack(b.clone(), ids.clone()).await.expect("ack"), 1);
    assert_eq!(q.ack(b.clone(), ids.clone()).await.expect("again"), 0);
    assert_eq!(store.fetch_inbox(&c, 10, 1 << 20).expect("c").0.len(), 1);
    q.ack(c.clone(), ids).await.expect("ack c");
    assert_eq!(store.queued().expect("queued"), 0);
    assert!(store.verify().expect("verify").contains("0 messages"));
}

#[tokio::test]
async fn unknown_recipients_are_refused_whole() {
    let (_d, store, q) = fixture().await;
    assert!(q.accept(msg("m1", "h/a", &["h/b", "h/zz"])).await.is_err());
    assert_eq!(store.queued().expect("queued"), 0);
    assert!(
        store
            .seen(&MessageId::new("m1").expect("id"))
            .expect("seen")
            .is_none()
    );
}

#[tokio::test]
async fn leaving_with_unread_mail_needs_force_and_rename_moves_everything() {
    let (_d, store, q) = fixture().await;
    let mut lane = peer("h/lane", &["session:h/b"]);
    lane.kind = PeerKind::Lane;
    q.put_peer(lane).await.expect("lane");
    q.accept(msg("m1", "h/a", &["h/b"])).await.expect("m1");
    let b = PeerId::parse("h/b").expect("b");
    let b2 = PeerId::parse("h/b2").expect("b2");
    let renamed = q.rename_peer(b.clone(), b2.clone()).await.expect("rename");
    assert_eq!(renamed.id, b2);
    assert_eq!(
        store.fetch_inbox(&b2, 10, 1 << 20).expect("inbox").0.len(),
        1
    );
    let peers = store.load_peers().expect("peers");
    let lane = peers
        .iter()
        .find(|p| p.id.name.as_str() == "lane")
        .expect("lane");
    assert!(
        lane.groups
            .contains(&GroupName::new("session:h/b2").expect("g"))
    );
    assert!(q.remove_peer(b2.clone(), false).await.is_err());
    assert_eq!(q.remove_peer(b2, true).await.expect("force"), 1);
    assert_eq!(store.queued().expect("queued"), 0);
    assert!(store.verify().is_ok());
}

#[tokio::test]
async fn many_concurrent_writers_share_commits() {
    let (_d, store, q) = fixture().await;
    let mut tasks = Vec::new();
    for i in 0..400 {
        let q = q.clone();
        tasks.push(tokio::spawn(async move {
            q.accept(msg(&format!("m{i}"), "h/a", &["h/b"])).await
        }));
    }
    for t in tasks {
        t.await.expect("join").expect("accepted");
    }
    let commits = q.stats().commits.load(std::sync::atomic::Ordering::Relaxed);
    assert!(commits < 400, "{commits} commits for 400 concurrent writes");
    assert_eq!(store.queued().expect("q"), 400);
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 99)
            .expect("set");
        txn.commit().expect("commit");
    }
    let err = Store::open(&path).expect_err("too new");
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
    assert!(err.to_string().contains("nothing was changed"));
    let db = redb::Database::open(&path).expect("reopen raw");
    let txn = redb::ReadableDatabase::begin_read(&db).expect("read");
    let version = txn
        .open_table(META)
        .expect("meta")
        .get(VERSION_KEY)
        .expect("get")
        .map(|v| v.value());
    assert_eq!(version, Some(99));
}

#[test]
fn a_second_opener_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    let _first = Store::open(&path).expect("first");
    assert!(matches!(Store::open(&path), Err(StoreError::Locked { .. })));
}

#[test]
fn issue_13_a_probe_reads_without_writing_and_reports_the_stores_own_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    drop(Store::open(&path).expect("create"));
    let before = std::fs::read(&path).expect("read");
    assert_eq!(
        Store::probe(&path).expect("probe"),
        Probe::Readable(SCHEMA_VERSION)
    );
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "nothing written"
    );
    {
        let _open = Store::open(&path).expect("open");
        assert!(matches!(
            Store::probe(&path),
            Err(StoreError::Locked { .. })
        ));
    }
    std::fs::write(&path, b"not a database at all, just some bytes").expect("garbage");
    let err = Store::probe(&path).expect_err("garbage");
    assert!(err.to_string().contains("Not a redb database"), "{err}");
}

#[test]
fn reopening_keeps_the_version() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    drop(Store::open(&path).expect("create"));
    let store = Store::open(&path).expect("reopen");
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert_eq!(store.integrity(), &Integrity::Clean);
}

mod cross_host {
    //! The outbox and deliveries from other hosts.

    use super::*;
    use crate::federation::{Deliver, ForwardOutcome, ForwardRefusal, Receipt, ReceiptState};
    use crate::names::HostName;

    fn host() -> HostName {
        HostName::new("h").expect("host")
    }

    #[tokio::test]
    async fn a_message_for_a_remote_peer_waits_for_the_hub_then_follows_its_receipts() {
        let (_d, store, q) = fixture().await;
        q.accept(msg("m1", "h/a", &["h/b", "w/x", "w/y"]))
            .await
            .expect("m1");
        let pending = store.pending_forwards(&host(), 0, 10).expect("pending");
        assert_eq!(pending.len(), 1);
        let (pos, forward) = &pending[0];
        assert_eq!(forward.to.len(), 2, "only the remote recipients");
        assert_eq!(
            store
                .pending_forwards(&host(), *pos, 10)
                .expect("after")
                .len(),
            0
        );
        let states = |s: &Store| -> Vec<DeliveryState> {
            let a = PeerId::parse("h/a").expect("a");
            s.outbox(&a, 10).expect("outbox")[0]
                .recipients
                .iter()
                .map(|r| r.state)
                .collect()
        };
        use DeliveryState::*;
        assert_eq!(states(&store), [Delivered, Accepted, Accepted]);
        store.verify().expect("consistent while held");
        q.forwarded(forward.message.id.clone(), ForwardOutcome::Queued)
            .await
            .expect("fwd");
        assert_eq!(states(&store), [Delivered, Queued, Queued]);
        assert!(
            store
                .pending_forwards(&host(), 0, 10)
                .expect("none")
                .is_empty()
        );
        let receipt = Receipt {
            seq: 1,
            id: forward.message.id.clone(),
            to: vec![PeerId::parse("w/x").expect("x")],
            state: ReceiptState::Delivered,
        };
        q.receipt(receipt).await.expect("receipt");
        assert_eq!(states(&store), [Delivered, Delivered, Queued]);
        // h/b still holds the message; the hub no longer needs it.
        store.verify().expect("consistent");
    }

    #[tokio::test]
    async fn a_refused_forward_drops_the_remote_recipients_with_the_reason() {
        let (_d, store, q) = fixture().await;
        q.accept(msg("m1", "h/a", &["w/x"])).await.expect("m1");
        let refused = ForwardOutcome::Refused {
            code: ForwardRefusal::QuotaExceeded,
            reason: "full".into(),
        };
        q.forwarded(MessageId::new("m1").expect("id"), refused)
            .await
            .expect("fwd");
        let a = PeerId::parse("h/a").expect("a");
        let entry = &store.outbox(&a, 10).expect("outbox")[0];
        assert_eq!(entry.recipients[0].state, DeliveryState::Dropped);
        assert!(
            entry.recipients[0]
                .reason
                .as_deref()
                .unwrap_or("")
                .contains("full")
        );
        store.verify().expect("the held body is released");
    }

    #[tokio::test]
    async fn a_delivery_from_another_host_is_stored_once() {
        let (_d, store, q) = fixture().await;
        let (sent, _) = {
            q.accept(msg("m0", "h/a", &["w/x"])).await.expect("m0");
            (store.pending_forwards(&host(), 0, 1).expect("p"), ())
        };
        let mut message = sent[0].1.message.clone();
        message.id = MessageId::new("remote-1").expect("id");
        message.from = PeerId::parse("w/x").expect("x");
        let deliver = Deliver {
            seq: 9,
            message,
            to: vec![
                PeerId::parse("h/b").expect("b"),
                PeerId::parse("h/gone").expect("g"),
            ],
        };
        let gone = q.accept_delivery(deliver.clone()).await.expect("deliver");
        assert_eq!(gone.len(), 1);
        // Issue 13, point 7: a delivery repeated (the hub restarted before
        // it recorded the first acknowledgement) reported the peer that had
        // left as delivered.
        let again = q.accept_delivery(deliver).await.expect("again");
        assert_eq!(again, gone, "a repeat gives the first answer");
        let b = PeerId::parse("h/b").expect("b");
        let (inbox, _) = store.fetch_inbox(&b, 10, 1 << 20).expect("inbox");
        assert_eq!(inbox.len(), 1);
        assert_eq!(inbox[0].from.to_string(), "w/x");
        store.verify().expect("consistent");
    }
}

#[path = "tests_ids.rs"]
mod ids;

#[path = "tests_outbox.rs"]
mod outbox_path;

#[path = "tests_retention.rs"]
mod retention_path;

#[path = "tests_lanes.rs"]
mod lanes;

#[path = "tests_group.rs"]
mod group;

#[path = "tests_wal.rs"]
mod wal_log;

#[path = "tests_log_format.rs"]
mod log_format;
