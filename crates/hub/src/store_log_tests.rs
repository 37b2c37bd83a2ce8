//! The hub store's write-ahead log: a copy of the files taken while the
//! store is open is what a crash leaves, and opening it must bring back
//! every queued forward and every delivery's receipt, once.

use std::path::{Path, PathBuf};

use flotilla_actors::names::MessageId;
use flotilla_actors::wal_log::wal_path;

use super::tests::{host, to};
use super::*;

fn message(n: u64) -> Message {
    Message {
        id: MessageId::new(&format!("m{n}")).expect("id"),
        from: PeerId::parse("laptop/lead").expect("from"),
        to: Vec::new(),
        group: None,
        summary: None,
        body: format!("body {n}"),
        sent_at: Timestamp(0),
        seq: n,
        in_reply_to: None,
    }
}

fn image(from: &Path, to: &Path, with_log: bool) -> PathBuf {
    std::fs::create_dir_all(to).expect("dir");
    let store = to.join("hub.redb");
    std::fs::copy(from, &store).expect("copy store");
    if with_log {
        std::fs::copy(wal_path(from), wal_path(&store)).expect("copy log");
    }
    store
}

fn bodies(store: &HubStore, h: &str) -> Vec<String> {
    let queued = store.queued(&host(h), 0, 100).expect("queued");
    queued.into_iter().map(|d| d.message.body).collect()
}

#[test]
fn a_crash_image_gets_back_every_queued_forward_and_receipt_from_its_log() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let store = HubStore::open(&path).expect("open");
    let mut first_work = None;
    for n in 1..=12 {
        let made = store
            .enqueue(&message(n), &to(&["work/a", "mac/b"]), Timestamp(n))
            .expect("queue");
        first_work.get_or_insert(made[1].1.seq);
    }
    // A repeat is not queued twice, on replay either.
    assert!(
        store
            .enqueue(&message(3), &to(&["work/a"]), Timestamp(20))
            .expect("repeat")
            .is_empty()
    );
    let first_work = first_work.expect("made");
    let done = store
        .delivered(&host("work"), first_work, &[])
        .expect("delivered");
    assert!(done.is_some());
    let live_work = bodies(&store, "work");
    let live_mac = bodies(&store, "mac");
    let live_receipts = store.receipts(&host("laptop")).expect("receipts");
    assert_eq!(
        (live_work.len(), live_mac.len(), live_receipts.len()),
        (11, 12, 1)
    );

    let bare = HubStore::open(&image(&path, &dir.path().join("bare"), false)).expect("bare");
    assert!(
        bodies(&bare, "work").is_empty(),
        "the store file alone must lack the logged groups, or this test proves nothing"
    );
    drop(bare);

    let crash = image(&path, &dir.path().join("crash"), true);
    let log = std::fs::read(wal_path(&crash)).expect("log");
    let back = HubStore::open(&crash).expect("open the crash image");
    assert_eq!(bodies(&back, "work"), live_work);
    assert_eq!(bodies(&back, "mac"), live_mac);
    assert_eq!(
        back.receipts(&host("laptop")).expect("receipts"),
        live_receipts
    );
    drop(back);
    // The log put back (a crash that lost its emptying) applies nothing twice.
    std::fs::write(wal_path(&crash), &log).expect("put back");
    let again = HubStore::open(&crash).expect("open again");
    assert_eq!(bodies(&again, "work"), live_work);
    assert_eq!(again.receipts(&host("laptop")).expect("receipts").len(), 1);
    // A new forward gets the next number, not one the log had used.
    let made = again
        .enqueue(&message(13), &to(&["work/a"]), Timestamp(30))
        .expect("queue");
    let last = store
        .queued(&host("mac"), 0, 100)
        .expect("q")
        .last()
        .map(|d| d.seq);
    assert!(made[0].1.seq > last.expect("last"));
}

#[test]
fn a_flush_leaves_everything_in_the_store_itself() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let store = HubStore::open(&path).expect("open");
    store
        .enqueue(&message(1), &to(&["work/a"]), Timestamp(1))
        .expect("queue");
    let before = image(&path, &dir.path().join("before"), false);
    assert!(
        bodies(&HubStore::open(&before).expect("open"), "work").is_empty(),
        "the forward went through the log"
    );
    store.flush().expect("flush");
    // Copied while the store is open (its close would commit anyway):
    // only the flush's durable commit put the forward into the file.
    let after = image(&path, &dir.path().join("after"), false);
    drop(store);
    assert_eq!(
        bodies(&HubStore::open(&after).expect("reopen"), "work"),
        ["body 1"]
    );
}

/// Forwards the core numbered come back from the log under their own
/// seqs, and the core's numbering starts above every seq used, a repeat's
/// included.
#[test]
fn a_crash_image_keeps_the_seqs_the_core_gave() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let store = HubStore::open(&path).expect("open");
    let forward = |n: u64| Enqueue {
        message: message(n),
        by_host: to(&["work/a", "mac/b"]),
        now: Timestamp(n),
    };
    let (one, two) = (forward(1), forward(2));
    store
        .apply_group([
            QueueOp::EnqueueAt {
                enqueue: &one,
                seqs: &[10, 11],
            },
            QueueOp::EnqueueAt {
                enqueue: &two,
                seqs: &[12, 13],
            },
            QueueOp::EnqueueAt {
                enqueue: &one,
                seqs: &[14, 15],
            },
        ])
        .expect("group");
    let seqs = |s: &HubStore, h: &str| -> Vec<u64> {
        let queued = s.queued(&host(h), 0, 100).expect("queued");
        queued.into_iter().map(|d| d.seq).collect()
    };
    // by_host is ordered: mac before work.
    assert_eq!(
        (seqs(&store, "mac"), seqs(&store, "work")),
        (vec![10, 12], vec![11, 13])
    );
    let bare = HubStore::open(&image(&path, &dir.path().join("bare"), false)).expect("bare");
    assert!(
        seqs(&bare, "mac").is_empty(),
        "the store file alone must lack the logged group, or this test proves nothing"
    );
    drop(bare);
    let crash = image(&path, &dir.path().join("crash"), true);
    let back = HubStore::open(&crash).expect("open the crash image");
    assert_eq!(seqs(&back, "mac"), [10, 12]);
    assert_eq!(seqs(&back, "work"), [11, 13]);
    assert_eq!(back.delivery_seq_floor().expect("floor"), 15);
    // A receipt takes the hub's sequence, above every delivery's.
    let done = back.delivered(&host("work"), 11, &[]).expect("delivered");
    let receipts = done.map(|d| d.receipts).unwrap_or_default();
    assert_eq!(receipts.iter().map(|r| r.seq).collect::<Vec<_>>(), [16]);
    assert_eq!(back.delivery_seq_floor().expect("floor"), 16);
}
