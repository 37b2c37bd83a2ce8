//! Tests of the outbox against what a review of the message path found
//! (issue 13, point 7): a transient refusal by the hub, and renames.

use super::*;
use crate::federation::{ForwardOutcome, ForwardRefusal};
use crate::names::HostName;

fn host() -> HostName {
    HostName::new("h").expect("host")
}

fn states(store: &Store, sender: &str) -> Vec<(String, DeliveryState)> {
    let sender = PeerId::parse(sender).expect("sender");
    let mut out = Vec::new();
    for e in store.outbox(&sender, 10).expect("outbox") {
        for r in e.recipients {
            out.push((e.id.to_string(), r.state));
        }
    }
    out
}

#[tokio::test]
async fn issue_13_a_transient_refusal_keeps_the_message_queued_for_a_retry() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("m1", "h/a", &["w/x"])).await.expect("m1");
    let refused = ForwardOutcome::Refused {
        code: ForwardRefusal::Unavailable,
        reason: "the hub could not store the message (disk full); it will be retried".into(),
    };
    q.forwarded(MessageId::new("m1").expect("id"), refused)
        .await
        .expect("fwd");
    assert_eq!(
        states(&store, "h/a"),
        [("m1".to_owned(), DeliveryState::Accepted)]
    );
    let pending = store.pending_forwards(&host(), 0, 10).expect("pending");
    assert_eq!(pending.len(), 1, "still to hand to the hub");
    let a = PeerId::parse("h/a").expect("a");
    let reason = store.outbox(&a, 1).expect("outbox")[0].recipients[0]
        .reason
        .clone()
        .unwrap_or_default();
    assert!(reason.contains("retried"), "{reason}");
    store.verify().expect("the body is still held");
    q.forwarded(MessageId::new("m1").expect("id"), ForwardOutcome::Queued)
        .await
        .expect("retry");
    assert_eq!(
        states(&store, "h/a"),
        [("m1".to_owned(), DeliveryState::Queued)]
    );
    assert!(
        store
            .pending_forwards(&host(), 0, 10)
            .expect("p")
            .is_empty()
    );
    store.verify().expect("released");
}

#[tokio::test]
async fn issue_13_a_renamed_peer_keeps_what_it_queued_for_the_hub() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("m1", "h/a", &["w/x"])).await.expect("m1");
    q.accept(msg("m2", "h/a", &["h/b", "w/x"]))
        .await
        .expect("m2");
    let (a, a2) = (
        PeerId::parse("h/a").expect("a"),
        PeerId::parse("h/a2").expect("a2"),
    );
    q.rename_peer(a, a2.clone()).await.expect("rename");
    let pending = store.pending_forwards(&host(), 0, 10).expect("pending");
    let from: Vec<String> = pending
        .iter()
        .map(|(_, f)| f.message.from.to_string())
        .collect();
    assert_eq!(from, ["h/a2", "h/a2"], "sent under the name the hub knows");
    let shown: Vec<(String, DeliveryState)> = states(&store, "h/a2");
    assert_eq!(
        shown,
        [
            ("m1".to_owned(), DeliveryState::Accepted),
            ("m2".to_owned(), DeliveryState::Delivered),
            ("m2".to_owned(), DeliveryState::Accepted),
        ]
    );
    store.verify().expect("consistent");
}

#[tokio::test]
async fn issue_13_a_reused_name_does_not_move_a_sequence_number_backwards() {
    let (_d, _store, q) = fixture().await;
    for id in ["m1", "m2", "m3"] {
        q.accept(msg(id, "h/a", &["h/c"])).await.expect("send");
    }
    q.accept(msg("b1", "h/b", &["h/c"])).await.expect("b1");
    let (a, b) = (
        PeerId::parse("h/a").expect("a"),
        PeerId::parse("h/b").expect("b"),
    );
    q.remove_peer(a.clone(), true).await.expect("a leaves");
    q.rename_peer(b.clone(), a.clone())
        .await
        .expect("b takes a's name");
    let seq = |o: AcceptOutcome| match o {
        AcceptOutcome::Stored(r) | AcceptOutcome::Duplicate(r) => r.seq,
    };
    let next = q.accept(msg("m4", "h/a", &["h/c"])).await.expect("m4");
    assert_eq!(seq(next), 4, "h/a's numbers go on from 3");
    // The name given up is taken again: its numbers go on too.
    q.put_peer(peer("h/b", &["g"])).await.expect("rejoin");
    let again = q.accept(msg("b2", "h/b", &["h/c"])).await.expect("b2");
    assert_eq!(seq(again), 2, "h/b's numbers go on from 1");
}

/// Sends `n` local messages from h/a to h/b, ids `PREFIX-i`.
async fn send_local(q: &CommitQueue, prefix: &str, n: usize) {
    let batch: Vec<_> = (0..n)
        .map(|i| msg(&format!("{prefix}-{i}"), "h/a", &["h/b"]))
        .collect();
    for m in batch {
        q.accept(m).await.expect("send");
    }
}

#[tokio::test]
async fn issue_13_an_entry_not_final_when_it_fell_behind_is_pruned_once_final() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("far", "h/a", &["w/x"])).await.expect("far");
    send_local(&q, "early", OUTBOX_KEEP as usize + 5).await;
    let far = MessageId::new("far").expect("id");
    assert!(
        store.outbox_entry(&far).expect("entry").is_some(),
        "kept while the hub has not answered"
    );
    q.forwarded(far.clone(), ForwardOutcome::Queued)
        .await
        .expect("queued");
    let delivered = crate::federation::Receipt {
        seq: 1,
        id: far.clone(),
        to: vec![PeerId::parse("w/x").expect("x")],
        state: crate::federation::ReceiptState::Delivered,
    };
    q.receipt(delivered).await.expect("receipt");
    send_local(&q, "late", 1).await;
    assert_eq!(store.outbox_entry(&far).expect("entry"), None, "pruned");
    let a = PeerId::parse("h/a").expect("a");
    let kept = store.outbox(&a, 5000).expect("outbox").len() as u64;
    assert!(kept <= OUTBOX_KEEP + 1, "{kept} entries kept");
    store.verify().expect("consistent");
}

#[tokio::test]
async fn issue_13_an_entry_whose_receipt_never_came_is_pruned_after_thirty_days() {
    let (_d, store, q) = fixture().await;
    q.accept(msg("lost", "h/a", &["w/x"])).await.expect("lost");
    let lost = MessageId::new("lost").expect("id");
    q.forwarded(lost.clone(), ForwardOutcome::Queued)
        .await
        .expect("queued");
    send_local(&q, "soon", OUTBOX_KEEP as usize + 1).await;
    assert!(store.outbox_entry(&lost).expect("entry").is_some(), "kept");
    let mut later = msg("later", "h/a", &["h/b"]);
    later.sent_at = Timestamp(2 + 31 * 24 * 3600 * 1000);
    q.accept(later).await.expect("later");
    assert_eq!(store.outbox_entry(&lost).expect("entry"), None, "pruned");
}

/// Issue 11: what a group hands the hub link before its commit is what the
/// outbox then holds, at the same positions; a local message hands nothing
/// on. (A group that commits durably, at least one a second, has nothing on
/// disk before its commit and hands nothing on early: the link reads those
/// from the outbox.)
#[tokio::test]
async fn issue_11_what_the_feed_hands_on_is_what_the_outbox_holds() {
    use super::forward_feed::Next;
    let (_d, store, q) = fixture().await;
    let feed = q.forward_feed();
    let _ready = feed.open();
    for n in 1..=5 {
        let m = msg(&format!("m{n}"), "h/a", &["w/x", "h/b"]);
        q.accept(m).await.expect("accept");
    }
    q.accept(msg("local", "h/a", &["h/b"]))
        .await
        .expect("local");
    let stored = store.pending_forwards(&host(), 0, 10).expect("pending");
    let positions: Vec<u64> = stored.iter().map(|(pos, _)| *pos).collect();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    let mut after = 0;
    let fed = loop {
        match feed.next(&mut after, 10) {
            Next::Forwards(fed) => break fed,
            Next::ReadStore if after < 5 => after += 1,
            Next::ReadStore => panic!("nothing was handed on early"),
        }
    };
    assert!(!fed.is_empty(), "the logged groups hand on");
    assert_eq!(fed, stored[after as usize..], "as the outbox holds them");
    assert_eq!(fed[0].1.to, [PeerId::parse("w/x").expect("x")]);
}
