//! Tests of the hub's store.

use super::*;
use flotilla_actors::federation::ReceiptState;
use flotilla_actors::names::MessageId;
use std::collections::BTreeMap;

pub(super) fn host(s: &str) -> HostName {
    HostName::new(s).expect("host")
}

fn message(from: &str, body: &str) -> Message {
    Message {
        id: MessageId::generate(),
        from: PeerId::parse(from).expect("from"),
        to: Vec::new(),
        group: None,
        summary: None,
        body: body.into(),
        sent_at: Timestamp(0),
        seq: 1,
        in_reply_to: None,
    }
}

pub(super) fn to(ids: &[&str]) -> BTreeMap<HostName, Vec<PeerId>> {
    let mut map: BTreeMap<HostName, Vec<PeerId>> = BTreeMap::new();
    for id in ids {
        let id = PeerId::parse(id).expect("id");
        map.entry(id.host.clone()).or_default().push(id);
    }
    map
}

#[test]
fn a_message_is_queued_once_in_order_and_survives_a_reopen() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let store = HubStore::open(&path).expect("open");
    let first = message("laptop/lead", "one");
    let second = message("laptop/lead", "two");
    let made = store
        .enqueue(&first, &to(&["work/a", "mac/b"]), Timestamp(1))
        .expect("queue");
    assert_eq!(made.len(), 2);
    let again = store
        .enqueue(&first, &to(&["work/a"]), Timestamp(2))
        .expect("retry");
    assert!(again.is_empty(), "a retry is not stored twice");
    store
        .enqueue(&second, &to(&["work/a"]), Timestamp(3))
        .expect("queue");
    drop(store);
    let store = HubStore::open(&path).expect("reopen");
    let queued = store.queued(&host("work"), 0, 10).expect("queued");
    let bodies: Vec<&str> = queued.iter().map(|d| d.message.body.as_str()).collect();
    assert_eq!(bodies, ["one", "two"]);
    let depth = store.depths().expect("depths")[&host("work")];
    assert_eq!(
        depth,
        Depth {
            messages: 2,
            bytes: 6
        }
    );
    let later = store
        .queued(&host("work"), queued[0].seq, 10)
        .expect("after");
    assert_eq!(later.len(), 1);
}

#[test]
fn a_delivery_becomes_a_receipt_for_the_senders_host() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    let m = message("laptop/lead", "hi");
    store
        .enqueue(&m, &to(&["work/a", "work/b"]), Timestamp(1))
        .expect("queue");
    let seq = store.queued(&host("work"), 0, 1).expect("queued")[0].seq;
    let gone = [PeerId::parse("work/b").expect("id")];
    let done = store
        .delivered(&host("work"), seq, &gone)
        .expect("delivered")
        .expect("was queued");
    let (sender, receipts) = (done.sender, done.receipts);
    assert_eq!(done.bytes, 2);
    assert_eq!(sender, host("laptop"));
    assert_eq!(receipts.len(), 2);
    assert_eq!(receipts[0].state, ReceiptState::Delivered);
    assert!(
        store
            .delivered(&host("work"), seq, &[])
            .expect("again")
            .is_none()
    );
    assert!(
        store
            .queued(&host("work"), 0, 10)
            .expect("empty")
            .is_empty()
    );
    let owed = store.receipts(&host("laptop")).expect("receipts");
    assert_eq!(owed.len(), 2);
    store
        .ack_receipts(&host("laptop"), owed[0].seq)
        .expect("ack");
    assert_eq!(store.receipts(&host("laptop")).expect("left").len(), 1);
    // Once delivered, a repeat is remembered, not queued again.
    assert!(
        store
            .enqueue(&m, &to(&["work/a"]), Timestamp(2))
            .expect("q")
            .is_empty()
    );
}

#[test]
fn old_deliveries_expire_with_a_dropped_receipt() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    store
        .enqueue(
            &message("laptop/lead", "old"),
            &to(&["work/a"]),
            Timestamp(1),
        )
        .expect("q");
    store
        .enqueue(
            &message("laptop/lead", "new"),
            &to(&["work/a"]),
            Timestamp(100),
        )
        .expect("q");
    let dropped = store.expire(Timestamp(50)).expect("expire");
    assert_eq!(dropped.receipts.len(), 1);
    assert!(matches!(
        dropped.receipts[0].1.state,
        ReceiptState::Dropped { .. }
    ));
    assert_eq!(
        dropped.freed,
        [(host("work"), 3)],
        "what it freed, per host"
    );
    assert_eq!(store.queued(&host("work"), 0, 10).expect("left").len(), 1);
}

#[test]
fn rosters_are_kept_for_offline_hosts() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let store = HubStore::open(&path).expect("open");
    let entry = HostEntry {
        version: "9".into(),
        ..HostEntry::default()
    };
    store.put_host(&host("work"), &entry).expect("put");
    drop(store);
    let hosts = HubStore::open(&path)
        .expect("reopen")
        .load_hosts()
        .expect("load");
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0].1.version, "9");
}

#[test]
fn private_group_grants_survive_a_reopen_and_can_be_dropped() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let lane = PeerId::parse("work/helper").expect("id");
    let group = GroupName::session(&PeerId::parse("laptop/lead").expect("id"));
    let other = PeerId::parse("work/other").expect("id");
    {
        let store = HubStore::open(&path).expect("open");
        store.put_grant(&lane, &group).expect("grant");
        store.put_grant(&other, &group).expect("grant");
        store.drop_grant(&other, &group).expect("drop");
    }
    let store = HubStore::open(&path).expect("reopen");
    assert_eq!(store.load_grants().expect("load"), vec![(lane, group)]);
}

#[test]
fn the_same_id_from_two_senders_is_queued_for_each() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    let mut first = message("laptop/a", "from a");
    first.id = MessageId::new("42").expect("id");
    let mut second = message("mac/b", "from b");
    second.id = first.id.clone();
    let made = store
        .enqueue(&first, &to(&["work/c"]), Timestamp(1))
        .expect("first");
    assert_eq!(made.len(), 1);
    let made = store
        .enqueue(&second, &to(&["work/c"]), Timestamp(2))
        .expect("second");
    assert_eq!(made.len(), 1, "another sender's id 42 is another message");
    let queued = store.queued(&host("work"), 0, 10).expect("queued");
    let bodies: Vec<&str> = queued.iter().map(|d| d.message.body.as_str()).collect();
    assert_eq!(bodies, ["from a", "from b"]);
}

#[test]
fn a_store_of_an_older_release_gets_its_id_index_rebuilt_by_sender() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.redb");
    let message = message("laptop/a", "queued before the upgrade");
    let store = HubStore::open(&path).expect("open");
    store
        .enqueue(&message, &to(&["work/c"]), Timestamp(1))
        .expect("queue");
    drop(store);
    // Turn the file into what an older release left: the old index only.
    {
        let db = Database::create(&path).expect("raw");
        let txn = db.begin_write().expect("txn");
        txn.delete_table(QUEUED_IDS).expect("drop new");
        let old: TableDefinition<(&str, &str), u64> = TableDefinition::new("queued_ids");
        txn.open_table(old)
            .expect("old")
            .insert(("work", message.id.as_str()), 1)
            .expect("row");
        txn.commit().expect("commit");
    }
    let store = HubStore::open(&path).expect("upgrade");
    let again = store
        .enqueue(&message, &to(&["work/c"]), Timestamp(2))
        .expect("retry");
    assert!(
        again.is_empty(),
        "a retry after the upgrade is not queued twice"
    );
    let done = store.delivered(&host("work"), 1, &[]).expect("delivered");
    assert!(done.is_some());
    let made = store
        .enqueue(&message, &to(&["work/c"]), Timestamp(3))
        .expect("after");
    assert!(made.is_empty(), "the delivery is remembered as handled");
    let made = store
        .enqueue(&message, &to(&["mac/d"]), Timestamp(3))
        .expect("another host");
    assert_eq!(made.len(), 1, "the index entry is per host");
}

/// Issue 13, point 7: once delivered (or expired) the hub forgot the id,
/// so a forward repeated after that was queued and delivered again.
#[test]
fn a_message_delivered_or_expired_is_not_queued_again_by_a_repeat() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    let (first, second) = (message("laptop/lead", "one"), message("laptop/lead", "two"));
    let made = store
        .enqueue(&first, &to(&["work/a"]), Timestamp(1))
        .expect("queue");
    store
        .delivered(&host("work"), made[0].1.seq, &[])
        .expect("delivered");
    store
        .enqueue(&second, &to(&["work/a"]), Timestamp(1))
        .expect("queue");
    store.expire(Timestamp(2)).expect("expire");
    for m in [&first, &second] {
        let hosts = [host("work"), host("mac")];
        let repeats = store.repeats(m, hosts.iter()).expect("repeats");
        assert_eq!(repeats.into_iter().collect::<Vec<_>>(), [host("work")]);
        let again = store
            .enqueue(m, &to(&["work/a"]), Timestamp(3))
            .expect("repeat");
        assert!(again.is_empty(), "a repeat is not queued again");
    }
    assert!(
        store
            .queued(&host("work"), 0, 10)
            .expect("queued")
            .is_empty()
    );
    assert_eq!(store.forget_handled(0).expect("forget"), 0);
    assert_eq!(store.forget_handled(u64::MAX).expect("forget"), 2);
    let again = store
        .enqueue(&first, &to(&["work/a"]), Timestamp(3))
        .expect("after the record expired");
    assert_eq!(again.len(), 1, "the record is bounded in time");
}

/// Issue 13, point 3: the rows of a host that never came back stayed
/// forever.
#[test]
fn a_forgotten_host_loses_its_roster_queue_and_owed_receipts() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    store
        .put_host(&host("gone"), &crate::roster::HostEntry::default())
        .expect("host");
    store
        .enqueue(
            &message("laptop/lead", "for gone"),
            &to(&["gone/a"]),
            Timestamp(1),
        )
        .expect("q");
    let made = store
        .enqueue(
            &message("gone/a", "from gone"),
            &to(&["work/b"]),
            Timestamp(1),
        )
        .expect("q");
    store
        .delivered(&host("work"), made[0].1.seq, &[])
        .expect("delivered");
    assert_eq!(store.receipts(&host("gone")).expect("owed").len(), 1);
    let forgotten = store
        .forget_host(&host("gone"), "forgotten")
        .expect("forget");
    assert_eq!(forgotten.freed, [(host("gone"), 8)]);
    assert_eq!(forgotten.receipts[0].0, host("laptop"));
    assert!(store.load_hosts().expect("hosts").is_empty());
    assert!(
        store
            .queued(&host("gone"), 0, 10)
            .expect("queue")
            .is_empty()
    );
    assert!(store.receipts(&host("gone")).expect("owed").is_empty());
}

#[test]
fn one_group_sees_its_own_earlier_writes_through_tables_opened_once() {
    let dir = tempfile::tempdir().expect("dir");
    let store = HubStore::open(&dir.path().join("hub.redb")).expect("open");
    let (first, second) = (message("laptop/lead", "one"), message("laptop/lead", "two"));
    let work = host("work");
    let seq = store
        .enqueue(&first, &to(&["work/a"]), Timestamp(1))
        .expect("q")[0]
        .1
        .seq;
    let laptop = host("laptop");
    let (a, b) = (
        Enqueue {
            message: second.clone(),
            by_host: to(&["work/a"]),
            now: Timestamp(2),
        },
        Enqueue {
            message: first.clone(),
            by_host: to(&["work/a"]),
            now: Timestamp(3),
        },
    );
    let done = store
        .apply_group([
            QueueOp::Delivered {
                host: &work,
                seq,
                gone: &[],
            },
            QueueOp::AckReceipts {
                host: &laptop,
                seq: u64::MAX,
            },
            QueueOp::Enqueue(&a),
            QueueOp::Enqueue(&a),
            QueueOp::Enqueue(&b),
        ])
        .expect("group");
    assert!(
        matches!(done[0], QueueOpDone::Delivered(Some(_))),
        "{done:?}"
    );
    let made = |i: usize| match &done[i] {
        QueueOpDone::Made(made) => made.len(),
        other => panic!("op {i}: {other:?}"),
    };
    assert_eq!(made(2), 1, "queued");
    assert_eq!(
        made(3),
        0,
        "the same forward again in the group is queued once"
    );
    assert_eq!(
        made(4),
        0,
        "delivered earlier in the group: handled, not queued again"
    );
    assert!(
        store.receipts(&laptop).expect("receipts").is_empty(),
        "acked in the group"
    );
    let queued = store.queued(&work, 0, 10).expect("queued");
    let bodies: Vec<&str> = queued.iter().map(|d| d.message.body.as_str()).collect();
    assert_eq!(bodies, ["two"]);
}
