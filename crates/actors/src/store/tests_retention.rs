//! Tests of the store's bounded bookkeeping (issue 13 point 7): inbox
//! counts kept with every change, and remembered ids forgotten oldest
//! first once their message has left every inbox.

use super::*;
use crate::store::mail_tables::MailTables;
use crate::store::retention::remembered;
use crate::store::schema::{ID_ORDER, MESSAGES, SEEN};
use redb::{ReadableTable, ReadableTableMetadata};

fn depth(store: &Store, peer: &str) -> (usize, u64) {
    let peer = PeerId::parse(peer).expect("peer");
    let (got, remaining) = store.fetch_inbox(&peer, 1, 1 << 20).expect("inbox");
    (got.len(), remaining)
}

#[tokio::test]
async fn issue_13_inbox_counts_follow_sends_acks_renames_and_leaves() {
    let (_d, store, q) = fixture().await;
    for i in 0..3 {
        q.accept(msg(&format!("m{i}"), "h/a", &["h/b", "h/c"]))
            .await
            .expect("send");
    }
    assert_eq!(depth(&store, "h/b"), (1, 2), "one read, two more");
    let b = PeerId::parse("h/b").expect("b");
    q.ack(b.clone(), vec![MessageId::new("m0").expect("id")])
        .await
        .expect("ack");
    assert_eq!(depth(&store, "h/b"), (1, 1));
    let b2 = PeerId::parse("h/b2").expect("b2");
    q.rename_peer(b, b2).await.expect("rename");
    assert_eq!(
        depth(&store, "h/b2"),
        (1, 1),
        "the count moves with the name"
    );
    assert_eq!(depth(&store, "h/b"), (0, 0));
    q.remove_peer(PeerId::parse("h/c").expect("c"), true)
        .await
        .expect("c leaves");
    let depths = store.inbox_depths().expect("depths");
    assert_eq!(
        depths.into_iter().collect::<Vec<_>>(),
        [("h/b2".to_owned(), 2)]
    );
    store.verify().expect("counts agree with the inboxes");
}

#[tokio::test]
async fn issue_13_the_oldest_ids_are_forgotten_once_their_message_left_every_inbox() {
    let (_d, store, _q) = fixture().await;
    let txn = store.db().expect("db").begin_write().expect("txn");
    {
        let mut seen = txn.open_table(SEEN).expect("seen");
        for id in ["held", "old", "mid", "new"] {
            seen.insert(id, b"x".as_slice()).expect("seen");
        }
        txn.open_table(MESSAGES)
            .expect("messages")
            .insert("held", b"x".as_slice())
            .expect("held");
    }
    {
        let mut tables = MailTables::open(&txn).expect("tables");
        for id in ["held", "old", "mid", "new"] {
            remembered(&mut tables, id, "", 2).expect("remember");
        }
    }
    let seen = txn.open_table(SEEN).expect("seen");
    assert!(
        seen.get("held").expect("get").is_some(),
        "still in an inbox"
    );
    assert!(seen.get("old").expect("get").is_none(), "forgotten");
    assert!(seen.get("mid").expect("get").is_none(), "forgotten");
    assert!(seen.get("new").expect("get").is_some(), "kept");
    assert_eq!(seen.len().expect("len"), 2);
    let order = txn.open_table(ID_ORDER).expect("order");
    let ids: Vec<String> = order
        .iter()
        .expect("iter")
        .map(|r| r.expect("row").1.value().0.to_owned())
        .collect();
    assert_eq!(
        ids,
        ["held", "new"],
        "the held one is looked at again later"
    );
}

#[tokio::test]
async fn a_version_4_store_gets_its_inbox_counts_and_id_order_at_the_upgrade() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.redb");
    {
        let store = Arc::new(Store::open(&path).expect("create"));
        let (q, writer) = CommitQueue::start(store.clone(), watch::channel(0).0).expect("queue");
        q.put_peer(peer("h/a", &["g"])).await.expect("a");
        q.put_peer(peer("h/b", &["g"])).await.expect("b");
        for id in ["m1", "m2"] {
            q.accept(msg(id, "h/a", &["h/b"])).await.expect("send");
        }
        drop(q);
        // The writer thread holds the store until it ends: wait for it, so
        // the file is closed before it is opened again below.
        writer.join().expect("the writer ends");
        let txn = store.db().expect("db").begin_write().expect("txn");
        txn.delete_table(super::super::schema::INBOX_DEPTH)
            .expect("drop depth");
        txn.delete_table(ID_ORDER).expect("drop order");
        txn.open_table(META)
            .expect("meta")
            .insert(VERSION_KEY, 4)
            .expect("v4");
        txn.commit().expect("commit");
    }
    let store = Store::open(&path).expect("upgrade");
    assert_eq!(store.schema_version().expect("v"), SCHEMA_VERSION);
    assert_eq!(depth(&store, "h/b"), (1, 1));
    store.verify().expect("consistent");
    let txn = store.db().expect("db").begin_read().expect("read");
    assert_eq!(
        txn.open_table(ID_ORDER).expect("order").len().expect("len"),
        2
    );
}
