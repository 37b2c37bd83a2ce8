use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use flotilla_actors::model::Timestamp;
use flotilla_actors::names::PeerId;

use super::*;
use crate::test_message::message;

fn work(link_id: u64, id: &str, from: &str, lifts_hold: bool) -> QueueWork {
    numbered(link_id, id, from, lifts_hold, 0)
}

/// A forward to `work/b` whose delivery the core numbered `seq`.
fn numbered(link_id: u64, id: &str, from: &str, lifts_hold: bool, seq: u64) -> QueueWork {
    let to = PeerId::parse("work/b").expect("peer");
    let mut by_host = BTreeMap::new();
    by_host.insert(to.host.clone(), vec![to]);
    QueueWork {
        link_id,
        host: HostName::new("laptop").expect("host"),
        enqueue: Enqueue {
            message: message(id, from),
            by_host,
            now: Timestamp(1),
        },
        seqs: vec![seq],
        lifts_hold,
    }
}

#[test]
fn a_failed_sender_is_held_on_its_link_until_the_failed_message_comes_again() {
    let mut poisoned = Poisoned::default();
    let m1 = work(1, "m1", "laptop/a", false);
    assert!(poisoned.check(&m1).is_none());
    poisoned.failed(&m1);
    let why = poisoned
        .check(&work(1, "m2", "laptop/a", false))
        .expect("held");
    assert!(why.contains("m1"), "{why}");
    assert!(
        poisoned.check(&work(1, "m3", "laptop/b", false)).is_none(),
        "other senders flow"
    );
    assert!(
        poisoned.check(&work(2, "m2", "laptop/a", false)).is_none(),
        "a new link starts clean"
    );
    assert!(poisoned.check(&work(1, "m1", "laptop/a", true)).is_none());
    assert!(
        poisoned.check(&work(1, "m2", "laptop/a", false)).is_none(),
        "lifted"
    );
}

/// Outcomes come back in order, each after its commit; each delivery is
/// stored under the seq the core gave it; a repeat makes nothing; many
/// forwards handed over at once share commits; a delivery the host stored
/// leaves its queue with a receipt.
#[test]
fn forwards_are_queued_in_order_under_their_seqs_and_share_commits() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Arc::new(HubStore::open(&dir.path().join("hub.redb")).expect("store"));
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let writer = QueueWriter::start(store.clone(), move |group| {
        for done in group {
            let _ = tx.lock().expect("tx").send(done);
        }
    })
    .expect("writer");
    let count = 300;
    // Numbered from 1000 on, two apart: the store keeps the core's seqs.
    let seq_of = |i: usize| 1000 + 2 * i as u64;
    for i in 0..count {
        let w = numbered(1, &format!("m{i}"), "laptop/a", false, seq_of(i));
        writer
            .submit(WriterWork::Forward(Box::new(w)))
            .expect("submit");
    }
    let repeat = numbered(1, "m0", "laptop/a", false, seq_of(count));
    writer
        .submit(WriterWork::Forward(Box::new(repeat)))
        .expect("repeat");
    for i in 0..=count {
        let done = rx.recv_timeout(Duration::from_secs(30)).expect("outcome");
        let WriterDone::Forward(done) = done else {
            panic!("a forward's outcome: {done:?}")
        };
        let queued_for = done.outcome.expect("queued");
        if i == count {
            assert_eq!(done.work.enqueue.message.id.as_str(), "m0");
            assert!(
                queued_for.is_empty(),
                "a repeat is not queued again: {queued_for:?}"
            );
        } else {
            assert_eq!(done.work.enqueue.message.id.as_str(), format!("m{i}"));
            assert_eq!(queued_for, [HostName::new("work").expect("host")]);
        }
    }
    let seqs: Vec<u64> = (0..count).map(seq_of).collect();
    assert_eq!(
        store.delivery_seq_floor().expect("floor"),
        seq_of(count),
        "the repeat's seq counts too: the core never numbers it again"
    );
    let host = HostName::new("work").expect("host");
    let queued = store.queued(&host, 0, 1000).expect("queued");
    let stored: Vec<u64> = queued.iter().map(|d| d.seq).collect();
    assert_eq!(stored, seqs);
    let commits = store.queue_commits();
    assert!(
        commits < count as u64,
        "{commits} commits for {count} forwards"
    );

    let delivered = WriterWork::Delivered {
        host: host.clone(),
        seq: seqs[0],
        gone: Vec::new(),
    };
    writer.submit(delivered).expect("delivered");
    let done = rx.recv_timeout(Duration::from_secs(30)).expect("outcome");
    let WriterDone::Delivered {
        host: h,
        done: Some(taken),
    } = done
    else {
        panic!("a delivery taken off its queue: {done:?}")
    };
    assert_eq!(h, host);
    assert_eq!(taken.sender.as_str(), "laptop");
    assert_eq!(taken.receipts.len(), 1);
    let left = store.queued(&host, 0, 1000).expect("queued");
    assert_eq!(left.len(), count - 1);
}
