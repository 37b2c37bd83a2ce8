use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{MessageId, PeerId};

use super::*;

fn work(link_id: u64, id: &str, from: &str, lifts_hold: bool) -> QueueWork {
    let to = PeerId::parse("work/b").expect("peer");
    let mut by_host = BTreeMap::new();
    by_host.insert(to.host.clone(), vec![to]);
    QueueWork {
        link_id,
        host: HostName::new("laptop").expect("host"),
        enqueue: Enqueue {
            message: Message {
                id: MessageId::new(id).expect("id"),
                from: PeerId::parse(from).expect("from"),
                to: Vec::new(),
                group: None,
                summary: None,
                body: format!("body of {id}"),
                sent_at: Timestamp(0),
                seq: 1,
                in_reply_to: None,
            },
            by_host,
            now: Timestamp(1),
        },
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

/// Outcomes come back in order, each after its commit; a repeat makes
/// nothing; many forwards handed over at once share commits; a delivery
/// the host stored leaves its queue with a receipt.
#[test]
fn forwards_are_queued_in_order_and_share_commits() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Arc::new(HubStore::open(&dir.path().join("hub.redb")).expect("store"));
    let (tx, rx) = mpsc::channel();
    let staged = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = staged.clone();
    let writer = QueueWriter::start(store.clone(), move |group| {
        for done in group {
            match done {
                WriterDone::Staged(d) => {
                    counted.fetch_add(d.len(), std::sync::atomic::Ordering::SeqCst);
                }
                done => {
                    let _ = tx.send(done);
                }
            }
        }
    })
    .expect("writer");
    let count = 300;
    for i in 0..count {
        let w = WriterWork::Forward(Box::new(work(1, &format!("m{i}"), "laptop/a", false)));
        writer.submit(w).expect("submit");
    }
    let repeat = WriterWork::Forward(Box::new(work(1, "m0", "laptop/a", false)));
    writer.submit(repeat).expect("repeat");
    let mut seqs = Vec::new();
    for i in 0..=count {
        let done = rx.recv_timeout(Duration::from_secs(30)).expect("outcome");
        let WriterDone::Forward(done) = done else {
            panic!("a forward's outcome: {done:?}")
        };
        let made = done.outcome.expect("queued");
        if i == count {
            assert_eq!(done.work.enqueue.message.id.as_str(), "m0");
            assert!(made.is_empty(), "a repeat is not queued again: {made:?}");
        } else {
            assert_eq!(done.work.enqueue.message.id.as_str(), format!("m{i}"));
            assert_eq!(made.len(), 1);
            seqs.push(made[0].1.seq);
        }
    }
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
    let host = HostName::new("work").expect("host");
    let queued = store.queued(&host, 0, 1000).expect("queued");
    assert_eq!(queued.len(), count);
    let staged = staged.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        staged, count,
        "each new delivery is handed out before its commit"
    );
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
