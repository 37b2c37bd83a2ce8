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
