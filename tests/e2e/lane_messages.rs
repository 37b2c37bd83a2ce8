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
