//! Agents as members of the team (issue 8): a lane's process knows its own
//! daemon and peer, and `flotilla mcp` serves the Flotilla tools to an MCP
//! client, acting as one peer under the daemon's rules.

use flotilla_tests::flotilla_bin;

use crate::lanes::{code, daemon};

/// Issue 8, point 2: a lane on `--home X` that ran `flotilla send` reached
/// the default home's daemon, as nobody in particular.
#[test]
fn a_lane_process_reaches_its_own_daemon_as_itself() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    let bin = flotilla_bin();
    let script =
        r#""$0" send --to lead "from $FLOTILLA_PEER on $FLOTILLA_HOST" >/dev/null && echo sent"#;
    let (c, v) = code(
        &home,
        &[
            "lane",
            "run",
            "--cli",
            "exec",
            "-n",
            "worker",
            "--as",
            "lead",
            "--",
            "sh",
            "-c",
            script,
            bin.to_str().expect("utf-8 path"),
        ],
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], "sent", "{v}");
    let inbox = home.json(&["inbox", "--as", "lead"]);
    let messages = inbox["messages"].as_array().expect("messages");
    // The lane's own message (its turn's notice to its owner comes too).
    let sent: Vec<_> = messages
        .iter()
        .filter(|m| m["from"] == "h/worker" && m["summary"].is_null())
        .collect();
    assert_eq!(sent.len(), 1, "{inbox}");
    assert_eq!(sent[0]["body"], "from worker on h");
}
