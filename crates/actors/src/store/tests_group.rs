//! Tests of one commit group (issue 11): acceptances in a row share their
//! open tables, and any other write between them still applies, in order,
//! in the same transaction; a write that breaks a rule fails alone.

use super::write_op::{WriteDone, WriteOp, apply};
use super::*;
use crate::federation::Deliver;
use crate::model::Message;

fn stored(done: Result<WriteDone, StoreError>) -> SeenRecord {
    match done {
        Ok(WriteDone::Accepted(AcceptOutcome::Stored(r))) => r,
        other => panic!("expected a stored message, got {other:?}"),
    }
}

pub(super) fn delivery(id: &str, to: &str) -> Deliver {
    let from = PeerId::parse("w/x").expect("from");
    let to = vec![PeerId::parse(to).expect("to")];
    Deliver {
        seq: 1,
        message: Message {
            id: MessageId::new(id).expect("id"),
            from,
            to: to.clone(),
            group: None,
            summary: None,
            body: "from another host".into(),
            sent_at: Timestamp(3),
            seq: 1,
            in_reply_to: None,
        },
        to,
    }
}

#[tokio::test]
async fn acceptances_share_their_tables_and_other_writes_between_them_apply_in_order() {
    let (_d, store, _q) = fixture().await;
    let db = store.db().expect("db");
    let txn = db.begin_write().expect("txn");
    let mut mail = None;
    let mut run = |op| apply(&txn, &mut mail, op);

    let first = stored(run(WriteOp::Accept(msg("m1", "h/a", &["h/b"]))));
    assert_eq!(first.seq, 1);
    match run(WriteOp::Accept(msg("m1", "h/a", &["h/b"]))) {
        Ok(WriteDone::Accepted(AcceptOutcome::Duplicate(r))) => assert_eq!(r, first),
        other => panic!("a repeat in the same group is a duplicate, got {other:?}"),
    }
    match run(WriteOp::Accept(msg("m2", "h/a", &["h/d"]))) {
        Err(StoreError::Rejected(why)) => assert!(why.contains("h/d"), "{why}"),
        other => panic!("h/d is not registered yet, got {other:?}"),
    }
    // A peer's write closes the acceptances' tables; the next acceptance
    // opens them again and sees it.
    assert!(run(WriteOp::PutPeer(peer("h/d", &["g"]))).is_ok());
    assert_eq!(
        stored(run(WriteOp::Accept(msg("m3", "h/a", &["h/d"])))).seq,
        2
    );
    match run(WriteOp::AcceptDelivery(delivery("r1", "h/b"))) {
        Ok(WriteDone::Gone(gone)) => assert!(gone.is_empty(), "{gone:?}"),
        other => panic!("a delivery in the run, got {other:?}"),
    }
    let b = PeerId::parse("h/b").expect("b");
    let acked = run(WriteOp::Ack {
        peer: b.clone(),
        ids: vec![MessageId::new("m1").expect("id")],
    });
    assert!(matches!(acked, Ok(WriteDone::Count(1))), "{acked:?}");
    assert_eq!(
        stored(run(WriteOp::Accept(msg("m4", "h/a", &["h/b"])))).seq,
        3
    );
    drop(mail);
    txn.commit().expect("commit");

    let ids = |peer: &str| {
        let peer = PeerId::parse(peer).expect("peer");
        let (got, _) = store.fetch_inbox(&peer, 10, 1 << 20).expect("inbox");
        got.into_iter()
            .map(|m| m.id.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("h/b"), ["r1", "m4"]);
    assert_eq!(ids("h/d"), ["m3"]);
    assert!(
        store
            .seen(&MessageId::new("m2").expect("id"))
            .expect("seen")
            .is_none()
    );
    store.verify().expect("counts and inboxes agree");
}
