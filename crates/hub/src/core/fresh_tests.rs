use super::*;
use crate::test_message::message;

fn to(peers: &[&str]) -> BTreeMap<HostName, Vec<PeerId>> {
    let mut by_host: BTreeMap<HostName, Vec<PeerId>> = BTreeMap::new();
    for p in peers {
        let peer = PeerId::parse(p).expect("peer");
        by_host.entry(peer.host.clone()).or_default().push(peer);
    }
    by_host
}

fn host(name: &str) -> HostName {
    HostName::new(name).expect("host")
}

fn ids(fresh: &FreshDeliveries, host: &HostName, after: u64) -> Vec<String> {
    fresh
        .pushable(host, after)
        .map(|d| d.message.id.to_string())
        .collect()
}

#[test]
fn deliveries_are_numbered_above_the_store_one_per_host_in_order() {
    let mut fresh = FreshDeliveries::new(41);
    let seqs = fresh.number(&message("m1", "laptop/a"), &to(&["work/b", "ci/c", "ci/d"]));
    assert_eq!(
        seqs,
        [42, 43],
        "one per host, in the map's order (ci, work)"
    );
    let ci = fresh
        .pushable(&host("ci"), 0)
        .next()
        .expect("ci's delivery");
    assert_eq!((ci.seq, ci.to.len()), (42, 2));
    let seqs = fresh.number(&message("m2", "laptop/a"), &to(&["work/b"]));
    assert_eq!(seqs, [44]);
    assert_eq!(ids(&fresh, &host("work"), 0), ["m1", "m2"]);
    assert_eq!(
        ids(&fresh, &host("work"), 43),
        ["m2"],
        "only after the pushed"
    );
}

#[test]
fn a_settled_forward_leaves_and_a_failure_holds_everything_still_waiting() {
    let mut fresh = FreshDeliveries::new(0);
    let work = host("work");
    let by_host = to(&["work/b"]);
    let s1 = fresh.number(&message("m1", "laptop/a"), &by_host);
    let s2 = fresh.number(&message("m2", "laptop/a"), &by_host);
    fresh.settled(by_host.keys(), &s1, false);
    assert_eq!(ids(&fresh, &work, 0), ["m2"], "m1 is in the store now");
    fresh.settled(by_host.keys(), &s2, true);
    let s3 = fresh.number(&message("m3", "laptop/a"), &by_host);
    let s4 = fresh.number(&message("m4", "laptop/b"), &by_host);
    fresh.settled(by_host.keys(), &s3, true);
    assert!(
        ids(&fresh, &work, 0).is_empty(),
        "m4 waits for its outcome behind the failure: {:?}",
        ids(&fresh, &work, 0)
    );
    let s5 = fresh.number(&message("m5", "laptop/c"), &by_host);
    assert!(
        ids(&fresh, &work, 0).is_empty(),
        "and so does what follows it"
    );
    fresh.settled(by_host.keys(), &s4, false);
    assert_eq!(ids(&fresh, &work, 0), ["m5"], "m4 settled; m5 came after");
    fresh.settled(by_host.keys(), &s5, false);
    assert!(fresh.by_host.is_empty(), "nothing kept once all settled");
}

#[test]
fn a_repeat_of_a_forward_still_waiting_is_held_until_its_outcome() {
    let mut fresh = FreshDeliveries::new(0);
    let work = host("work");
    let by_host = to(&["work/b"]);
    let s1 = fresh.number(&message("m1", "laptop/a"), &by_host);
    let again = fresh.number(&message("m1", "laptop/a"), &by_host);
    let other = fresh.number(&message("m1", "laptop/other"), &by_host);
    assert_eq!(
        ids(&fresh, &work, 0),
        ["m1"],
        "the first only, and nothing behind the repeat"
    );
    fresh.settled(by_host.keys(), &s1, false);
    assert!(
        ids(&fresh, &work, s1[0]).is_empty(),
        "the repeat waits for the writer"
    );
    fresh.settled(by_host.keys(), &again, false);
    let left: Vec<u64> = fresh.pushable(&work, 0).map(|d| d.seq).collect();
    assert_eq!(
        left, other,
        "the same id from another sender is another message"
    );
}
