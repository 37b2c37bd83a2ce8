//! Tests of message ids in the store: an id names a message only together
//! with its sender (issue 13 point 7.1).

use super::*;
use crate::federation::Deliver;
use crate::model::Message;

fn remote(id: &str, from: &str, to: &[&str]) -> Deliver {
    Deliver {
        seq: 1,
        message: Message {
            id: MessageId::new(id).expect("id"),
            from: PeerId::parse(from).expect("from"),
            to: to.iter().map(|t| PeerId::parse(t).expect("to")).collect(),
            group: None,
            summary: None,
            body: format!("{id} from {from}"),
            sent_at: Timestamp(3),
            seq: 1,
            in_reply_to: None,
        },
        to: to.iter().map(|t| PeerId::parse(t).expect("to")).collect(),
    }
}

fn bodies(store: &Store, peer: &str) -> Vec<String> {
    let peer = PeerId::parse(peer).expect("peer");
    let (got, _) = store.fetch_inbox(&peer, 10, 1 << 20).expect("inbox");
    got.into_iter().map(|m| m.body).collect()
}

#[tokio::test]
async fn the_same_id_from_two_remote_senders_reaches_the_inbox_twice() {
    let (_d, store, q) = fixture().await;
    q.accept_delivery(remote("42", "w/x", &["h/b"]))
        .await
        .expect("first");
    q.accept_delivery(remote("42", "v/y", &["h/b"]))
        .await
        .expect("second");
    q.accept_delivery(remote("42", "w/x", &["h/b"]))
        .await
        .expect("a repeat");
    assert_eq!(bodies(&store, "h/b"), ["42 from w/x", "42 from v/y"]);
    store.verify().expect("consistent");
}

#[tokio::test]
async fn a_local_id_does_not_hide_a_remote_message_with_the_same_id() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("42", "h/a", &["h/b"])).await.expect("local");
    q.accept_delivery(remote("42", "w/x", &["h/b"]))
        .await
        .expect("remote");
    assert_eq!(bodies(&store, "h/b"), ["body of 42", "42 from w/x"]);
    let b = PeerId::parse("h/b").expect("b");
    let id = MessageId::new("42").expect("id");
    assert_eq!(q.ack(b, vec![id.clone(), id]).await.expect("ack"), 2);
    assert_eq!(store.queued().expect("queued"), 0);
    store.verify().expect("consistent");
}

#[tokio::test]
async fn a_reply_finds_the_remote_message_by_id_and_sender() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("42", "h/a", &["h/c"])).await.expect("local");
    q.accept_delivery(remote("42", "w/x", &["h/b"]))
        .await
        .expect("remote");
    let b = PeerId::parse("h/b").expect("b");
    let id = MessageId::new("42").expect("id");
    let got = store.received(&b, &id).expect("lookup");
    let senders: Vec<String> = got.iter().map(|r| r.from.to_string()).collect();
    assert_eq!(senders, ["w/x"]);
    q.accept_delivery(remote("42", "v/y", &["h/b"]))
        .await
        .expect("another");
    assert_eq!(store.received(&b, &id).expect("lookup").len(), 2);
}

#[tokio::test]
async fn a_delivery_stored_by_version_3_is_still_recognised_after_the_upgrade() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    let deliver = remote("42", "w/x", &["h/b"]);
    // What version 3 left: the delivered id in `seen`, no `received`.
    {
        let store = Store::open(&path).expect("create");
        let txn = store.db().expect("db").begin_write().expect("txn");
        let record = SeenRecord {
            from: deliver.message.from.clone(),
            to: deliver.to.clone(),
            seq: 1,
            sent_at: Timestamp(3),
        };
        txn.open_table(super::super::schema::SEEN)
            .expect("seen")
            .insert("42", codec_bytes(&record).as_slice())
            .expect("row");
        txn.delete_table(super::super::schema::RECEIVED)
            .expect("drop");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 3)
            .expect("v3");
        txn.commit().expect("commit");
    }
    let store = Arc::new(Store::open(&path).expect("upgrade"));
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    let (q, _h) = CommitQueue::start(store.clone(), watch::channel(0).0).expect("queue");
    q.put_peer(peer("h/b", &["g"])).await.expect("b");
    q.accept_delivery(deliver).await.expect("repeat");
    assert!(bodies(&store, "h/b").is_empty(), "not stored a second time");
    q.accept_delivery(remote("42", "v/y", &["h/b"]))
        .await
        .expect("another sender");
    assert_eq!(bodies(&store, "h/b"), ["42 from v/y"]);
}

fn codec_bytes(record: &SeenRecord) -> Vec<u8> {
    crate::codec::encode(record).expect("encode")
}
