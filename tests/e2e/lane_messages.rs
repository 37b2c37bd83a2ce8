//! Messages to persistent lanes (issue 13, point 8): a message that
//! arrives while the lane is busy is acknowledged by the daemon, so it must
//! not be lost: it waits and becomes the prompt of the next turn, with any
//! other message that arrived meanwhile, in order.

use std::time::Duration;

use flotilla_tests::wait_until;

use crate::lanes::daemon;

#[test]
fn messages_to_a_busy_persistent_lane_start_its_next_turn() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "busy",
        "--persistent",
        "--as",
        "lead",
        "--prompt",
        "first",
        "--",
        "sh",
        "-c",
        "cat; sleep 2",
    ]);
    wait_until("the first turn runs", Duration::from_secs(20), || {
        home.json(&["lane", "status", "busy"])["phase"] == "running"
    });
    home.ok(&["send", "--as", "lead", "--to", "busy", "ALPHA-MARK"]);
    home.ok(&["send", "--as", "lead", "--to", "busy", "BETA-MARK"]);
    assert_eq!(home.json(&["lane", "status", "busy"])["turns"], 1);
    wait_until(
        "a second turn with both messages",
        Duration::from_secs(40),
        || {
            let v = home.json(&["lane", "status", "busy"]);
            v["turns"] == 2 && v["phase"] == "idle"
        },
    );
    let events = home.ok(&["lane", "events", "busy"]);
    // Results are handed out oldest first: the first turn's, then this one.
    assert_eq!(home.json(&["lane", "wait", "busy"])["turn"], 1);
    let result = home.json(&["lane", "wait", "busy"]);
    let text = result["result"].as_str().unwrap_or_default();
    let (alpha, beta) = (text.find("ALPHA-MARK"), text.find("BETA-MARK"));
    assert!(
        alpha.is_some() && beta.is_some() && alpha < beta,
        "both messages, in order, in the second turn: {result}\n{events}"
    );
    // Nothing else is left waiting: no third turn starts.
    assert_eq!(home.json(&["lane", "status", "busy"])["turns"], 2);
}

/// Hardening review of lanes, section 8, point 2.v: a message was
/// acknowledged off the supervisor while its ticks went on reading the
/// inbox, so a slow acknowledgement (held 1.5 s here by a pause point)
/// delivered it again at every tick: several turns for one message.
#[test]
fn a_slow_acknowledgement_delivers_a_message_once() {
    let mut home = flotilla_tests::TestHome::new();
    home.env
        .push(("FLOTILLA_TEST_PAUSE_AT".into(), "lane.mail-ack:1500".into()));
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "lead"]);
    home.ok(&[
        "lane",
        "start",
        "--cli",
        "exec",
        "-n",
        "slow",
        "--persistent",
        "--as",
        "lead",
        "--prompt",
        "first",
        "--",
        "cat",
    ]);
    let results_with = |mark: &str| {
        let out = home.run(&["lane", "events", "slow", "--json"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["type"] == "turn.completed")
            .filter(|e| e["result"].as_str().unwrap_or("").contains(mark))
            .count()
    };
    wait_until("the first turn", Duration::from_secs(20), || {
        results_with("first") == 1
    });
    home.ok(&["send", "--as", "lead", "--to", "slow", "ONE-MARK"]);
    wait_until("the message's turn", Duration::from_secs(20), || {
        results_with("ONE-MARK") >= 1
    });
    // A later message's turn comes after any repeat of the first.
    home.ok(&["send", "--as", "lead", "--to", "slow", "TWO-MARK"]);
    wait_until("the second message's turn", Duration::from_secs(30), || {
        results_with("TWO-MARK") >= 1
    });
    assert_eq!(results_with("ONE-MARK"), 1, "one turn for one message");
    assert_eq!(results_with("TWO-MARK"), 1, "one turn for one message");
}
