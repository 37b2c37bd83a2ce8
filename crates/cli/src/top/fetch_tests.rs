//! Unit tests of how `top` turns the daemon's replies into rows.

use serde_json::json;

use super::*;

fn event(seq: u64, body: serde_json::Value) -> LaneEvent {
    let mut v = json!({"seq": seq, "at": "2026-11-30T06:00:00.000Z", "turn": 1});
    if let (Some(v), Some(body)) = (v.as_object_mut(), body.as_object()) {
        v.extend(body.clone());
    }
    serde_json::from_value(v).expect("an event")
}

fn peer(id: &str, groups: &[&str], state: &str, inbox: u64) -> serde_json::Value {
    json!({"id": id, "product": null, "kind": "mailbox", "groups": groups,
           "state": state, "inbox_depth": inbox, "last_seen": null})
}

#[test]
fn hosts_put_this_host_first_with_its_link_then_the_others_with_their_state() {
    let roster: RosterReply = serde_json::from_value(json!({
        "schema": "flotilla.roster.v1", "host": "h",
        "generated_at": "2026-11-30T06:00:00.000Z",
        "peers": [
            peer("h/a", &["session:h/a", "red"], "idle", 2),
            peer("far/b", &["session:far/b", "red"], "offline", 0),
            peer("far/c", &["session:far/c"], "offline", 0),
            peer("h/d", &["session:h/d"], "active", 0),
        ],
    }))
    .expect("a roster");
    let rows = hosts(&roster, ("connected".into(), Some(1.5)));
    let got: Vec<_> = rows
        .iter()
        .map(|r| (r.name.as_str(), r.link.as_str(), r.rtt_ms, r.peers))
        .collect();
    assert_eq!(
        got,
        [
            ("h", "connected", Some(1.5), 2),
            ("far", "offline", None, 2)
        ]
    );
    let a = peer_row(&roster.peers[0], &roster.host);
    assert_eq!(a.groups, ["red"], "the private group is left out");
    assert_eq!(a.inbox, Some(2));
    let b = peer_row(&roster.peers[1], &roster.host);
    assert_eq!(b.inbox, None, "no inbox depth for another host's peer");
}

#[test]
fn a_tail_keeps_the_last_event_and_the_context_used() {
    let mut tail = Tail::default();
    tail.take(&event(
        1,
        json!({"type": "message", "text": "first line\nsecond"}),
    ));
    assert_eq!(tail.last, "message: first line");
    tail.take(&event(
        2,
        json!({"type": "usage", "usage": {"input": 90_000, "output": 10, "cached": 0},
               "context_window": 200_000, "context_used_pct": 25.0}),
    ));
    assert_eq!(
        tail.context_pct,
        Some(25.0),
        "the event's share, not a turn's sum"
    );
    tail.take(&event(
        3,
        json!({"type": "tool.call", "name": "Bash", "id": null, "input": "{}"}),
    ));
    assert_eq!(tail.last, "tool.call Bash");
    assert_eq!(tail.after, 3);
    assert_eq!(tail.lines.len(), 3);
    assert!(tail.lines[2].contains("tool.call Bash"), "{:?}", tail.lines);
    assert_eq!(tail.context_pct, Some(25.0), "kept until the next report");
}

#[test]
fn a_tail_keeps_only_the_last_lines() {
    let mut tail = Tail::default();
    for seq in 1..=(FOLLOW_LINES as u64 + 5) {
        tail.take(&event(
            seq,
            json!({"type": "note", "text": format!("n{seq}")}),
        ));
    }
    assert_eq!(tail.lines.len(), FOLLOW_LINES);
    assert!(tail.lines[0].contains("note: n6"), "{}", tail.lines[0]);
}
