//! The feed's rules, without a writer or a link.

use super::{Fed, FeedState, ForwardFeed, MAX_HELD, Next};
use crate::federation::Forward;
use crate::model::{Message, Timestamp};
use crate::names::{MessageId, PeerId};

fn forward(pos: u64, body: usize) -> (u64, Forward) {
    let to: PeerId = "work/b".parse().expect("peer");
    let message = Message {
        id: MessageId::new(&format!("m{pos}")).expect("id"),
        from: "mac/a".parse().expect("peer"),
        to: vec![to.clone()],
        group: None,
        summary: None,
        body: "x".repeat(body),
        sent_at: Timestamp(0),
        seq: pos,
        in_reply_to: None,
    };
    (
        pos,
        Forward {
            message,
            to: vec![to],
        },
    )
}

fn fed(range: std::ops::RangeInclusive<u64>) -> Fed {
    range.map(|pos| forward(pos, 10)).collect()
}

fn positions(next: Next) -> Vec<u64> {
    match next {
        Next::Forwards(f) => f.into_iter().map(|(pos, _)| pos).collect(),
        Next::ReadStore => panic!("expected forwards, got: read the store"),
    }
}

fn open() -> FeedState {
    FeedState {
        open: true,
        ..FeedState::default()
    }
}

#[test]
fn a_closed_feed_holds_nothing_and_sends_the_link_to_the_store() {
    let mut s = FeedState::default();
    assert!(!s.feed(fed(1..=3)), "nothing is fed while no link takes it");
    assert_eq!(s.next(&mut 0, 10), Next::ReadStore);
}

#[test]
fn an_open_feed_hands_on_what_follows_the_link_in_order_within_the_limit() {
    let mut s = open();
    assert!(s.feed(fed(5..=9)));
    let mut after = 4;
    assert_eq!(positions(s.next(&mut after, 3)), vec![5, 6, 7]);
    // The link moves on by what it sent; the feed holds the rest.
    after = 7;
    assert_eq!(positions(s.next(&mut after, 10)), vec![8, 9]);
    after = 9;
    assert_eq!(
        positions(s.next(&mut after, 10)),
        Vec::<u64>::new(),
        "everything fed is handed on: nothing to read"
    );
}

#[test]
fn a_link_behind_the_feed_reads_the_store_until_it_catches_up() {
    let mut s = open();
    s.feed(fed(5..=6));
    // Positions 1..=4 were committed before the feed opened.
    assert_eq!(s.next(&mut 0, 10), Next::ReadStore);
    // Nothing fed yet: the store is the only record.
    let mut fresh = open();
    assert_eq!(fresh.next(&mut 0, 10), Next::ReadStore);
    // Once the store's part is sent, the feed takes over.
    assert_eq!(positions(s.next(&mut 4, 10)), vec![5, 6]);
}

/// A group that commits durably takes outbox positions without feeding
/// them. Before, the link woken by its commit found the feed empty and its
/// position at the last one fed, took that for the outbox's end, and the
/// message waited for the next acceptance: with nothing more sent (four
/// senders all waiting for it, or one large message), five seconds, until
/// the senders' wait for the hub's verdict ran out.
#[test]
fn positions_given_without_feeding_send_the_link_to_the_store() {
    let mut s = open();
    s.feed(fed(5..=5));
    let mut after = 4;
    assert_eq!(positions(s.next(&mut after, 10)), vec![5]);
    after = 5;
    s.passed_over(); // position 6, committed durably
    assert_eq!(s.next(&mut after, 10), Next::ReadStore);
    // What is fed after it still waits for the store's part first.
    s.feed(fed(7..=7));
    assert_eq!(s.next(&mut after, 10), Next::ReadStore);
    after = 6;
    assert_eq!(positions(s.next(&mut after, 10)), vec![7]);
    after = 7;
    assert_eq!(positions(s.next(&mut after, 10)), Vec::<u64>::new());
}

#[test]
fn what_the_link_is_past_is_dropped_and_a_gap_sends_it_to_the_store() {
    let mut s = open();
    s.feed(fed(1..=5));
    // A resend read the store up to 3.
    assert_eq!(positions(s.next(&mut 3, 10)), vec![4, 5]);
    assert!(s.held.is_empty());
    let mut trimmed = open();
    trimmed.feed(fed(1..=(MAX_HELD as u64 + 2)));
    assert_eq!(trimmed.held.len(), MAX_HELD, "the oldest are dropped");
    assert_eq!(trimmed.next(&mut 0, 10), Next::ReadStore);
}

#[test]
fn the_bodies_held_are_bounded_too() {
    let mut s = open();
    s.feed((1..=3).map(|pos| forward(pos, 3 << 20)).collect());
    assert_eq!(s.held.len(), 2, "8 MiB at most");
    assert_eq!(s.bytes, 6 << 20);
    s.next(&mut 3, 10);
    assert_eq!(s.bytes, 0, "what is taken is no longer counted");
}

#[test]
fn a_failed_group_is_taken_back_and_the_link_moves_back_before_it() {
    let mut s = open();
    s.feed(fed(1..=2));
    let mut after = 0;
    assert_eq!(positions(s.next(&mut after, 10)), vec![1, 2]);
    after = 2;
    // The next group (3..=4) is fed and handed on, then its commit fails.
    s.feed(fed(3..=4));
    assert_eq!(positions(s.next(&mut after, 10)), vec![3, 4]);
    after = 4;
    assert!(s.rewind(3));
    // Positions 3 and 4 go to the next acceptances: the link is moved back
    // so it hands those on too.
    s.feed(fed(3..=3));
    assert_eq!(positions(s.next(&mut after, 10)), vec![3]);
    assert_eq!(after, 2, "moved back before the failed group");
}

#[test]
fn a_failed_group_not_yet_taken_leaves_the_link_where_it_is() {
    let mut s = open();
    s.feed(fed(1..=4));
    let mut after = 2;
    assert!(s.rewind(3));
    assert_eq!(s.held.len(), 2, "what failed is no longer held");
    assert_eq!(
        positions(s.next(&mut after, 10)),
        Vec::<u64>::new(),
        "nothing after 2 exists now"
    );
    assert_eq!(after, 2);
    assert!(!s.rewind(9), "a group that fed nothing takes nothing back");
}

#[tokio::test]
async fn the_link_is_woken_when_something_is_fed_or_taken_back_and_not_before_it_opens() {
    let feed = ForwardFeed::default();
    feed.feed(fed(1..=1));
    assert!(!feed.is_open());
    let mut ready = feed.open();
    assert!(
        !ready.has_changed().expect("open"),
        "nothing fed while closed"
    );
    feed.feed(fed(1..=2));
    assert!(ready.has_changed().expect("open"));
    ready.mark_unchanged();
    assert_eq!(positions(feed.next(&mut 0, 10)), vec![1, 2]);
    feed.rewind(2);
    assert!(ready.has_changed().expect("open"));
    feed.close();
    assert!(!feed.is_open());
    assert_eq!(feed.next(&mut 0, 10), Next::ReadStore);
}
