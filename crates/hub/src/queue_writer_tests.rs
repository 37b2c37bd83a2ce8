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
    // The deliveries handed out before each commit, as (message, seq).
    let staged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = staged.clone();
    let writer = QueueWriter::start(store.clone(), move |group| {
        for done in group {
            match done {
                WriterDone::Staged(d) => {
                    let mut seen = seen.lock().expect("staged");
                    seen.extend(d.into_iter().map(|(_, d)| (d.message.id, d.seq)));
                }
                done => {
                    let id = match &done {
                        WriterDone::Forward(f) => Some(f.work.enqueue.message.id.clone()),
                        _ => None,
                    };
                    let seen = seen.lock().expect("staged");
                    let staged_first = id.is_some_and(|id| seen.iter().any(|(s, _)| *s == id));
                    let _ = tx.send((done, staged_first));
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
    for i in 0..=count {
        let (done, staged_first) = rx.recv_timeout(Duration::from_secs(30)).expect("outcome");
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
            assert!(staged_first, "m{i} went out before its commit's outcome");
        }
    }
    // Each new delivery was handed out once, in the order of the forwards.
    let staged = staged.lock().expect("staged").clone();
    let ids: Vec<String> = staged.iter().map(|(id, _)| id.to_string()).collect();
    let sent: Vec<String> = (0..count).map(|i| format!("m{i}")).collect();
    assert_eq!(ids, sent);
    let seqs: Vec<u64> = staged.iter().map(|(_, seq)| *seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
    let host = HostName::new("work").expect("host");
    let queued = store.queued(&host, 0, 1000).expect("queued");
    assert_eq!(queued.len(), count);
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
    let (done, _) = rx.recv_timeout(Duration::from_secs(30)).expect("outcome");
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
