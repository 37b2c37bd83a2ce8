//! A persistent lane answers (issue 12): a message that starts its turn
//! gets the turn's result back as a reply threaded to it; a child lane's
//! notice to an owner that is itself a lane waits for the owner's next
//! turn, never a turn of its own (which would leave a result nobody
//! collects, blocking the operator's `resume`).

use std::time::Duration;

use flotilla_tests::wait_until;

use crate::lanes::{code, daemon};

#[test]
fn a_message_that_starts_a_turn_gets_the_result_as_a_threaded_reply() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&[
        "lane",
        "run",
        "-n",
        "echoer",
        "--persistent",
        "--no-auto-archive",
        "-g",
        "team",
        "--cli",
        "exec",
        "--prompt",
        "warm up",
        "--",
        "sh",
        "-c",
        "cat",
    ]);
    let sent = home.json(&[
        "send",
        "--as",
        "lead",
        "--to",
        "echoer",
        "--id",
        "question-1",
        "QUESTION-MARK",
    ]);
    assert_eq!(sent["id"], "question-1");
    let mut reply = serde_json::Value::Null;
    wait_until("the lane's answer", Duration::from_secs(30), || {
        let inbox = home.json(&["inbox", "--as", "lead", "--peek"]);
        reply = inbox["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["from"] == "h/echoer").cloned())
            .unwrap_or_default();
        !reply.is_null()
    });
    assert_eq!(reply["in_reply_to"], "question-1", "{reply}");
    assert!(
        reply["body"]
            .as_str()
            .unwrap_or_default()
            .contains("QUESTION-MARK"),
        "the turn's result: {reply}"
    );
    assert!(
        reply["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("completed"),
        "{reply}"
    );
}

#[test]
fn a_childs_notice_to_an_owner_lane_waits_for_its_next_turn() {
    let home = daemon();
    home.ok(&[
        "lane",
        "run",
        "-n",
        "parent",
        "--persistent",
        "--no-auto-archive",
        "--cli",
        "exec",
        "--prompt",
        "first",
        "--",
        "sh",
        "-c",
        "cat",
    ]);
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "-n",
            "child",
            "--as",
            "parent",
            "--cli",
            "exec",
            "--prompt",
            "x",
            "--",
            "sh",
            "-c",
            "echo CHILD-DONE",
        ],
    );
    assert_eq!(c, 0, "{v}");
    wait_until("the notice is read", Duration::from_secs(20), || {
        home.json(&["inbox", "--as", "parent", "--peek"])["messages"] == serde_json::json!([])
    });
    let parent = home.json(&["lane", "status", "parent"]);
    assert_eq!(parent["turns"], 1, "no turn of its own: {parent}");
    assert_eq!(parent["uncollected"], false, "{parent}");
    home.ok(&["lane", "resume", "parent", "--prompt", "NEXT-MARK"]);
    let (c, v) = code(&home, &["lane", "wait", "parent"]);
    assert_eq!(c, 0, "the operator's resume was not blocked: {v}");
    let result = v["result"].as_str().unwrap_or_default();
    assert!(
        result.contains("Notice from h/child") && result.contains("NEXT-MARK"),
        "the notice comes with the next turn: {result}"
    );
}
