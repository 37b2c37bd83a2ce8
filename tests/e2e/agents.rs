//! Agents as members of the team (issue 8): a lane's process knows its own
//! daemon and peer, and `flotilla mcp` serves the Flotilla tools to an MCP
//! client, acting as one peer under the daemon's rules.

use flotilla_tests::{flotilla_bin, mcp};
use serde_json::{Value, json};

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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// Issue 8, point 1: every tool through rmcp's own client, as one peer.
#[test]
fn every_mcp_tool_works_as_its_one_peer() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&["peer", "join", "reviewer", "-g", "team"]);
    home.ok(&["peer", "join", "outsider", "-g", "elsewhere"]);
    runtime().block_on(async {
        let client = mcp::connect(&home, Some("lead")).await;
        let info = client.peer_info().expect("server info");
        let server = info.server_info.clone().expect("server info");
        assert_eq!(server.name, "flotilla");
        let tools = client.list_all_tools().await.expect("tools");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "whoami",
                "list_peers",
                "send",
                "broadcast",
                "inbox",
                "reply",
                "rename",
                "outbox",
                "lane",
                "fleet"
            ]
        );
        assert!(tools.iter().all(|t| t.output_schema.is_some()));

        let me = mcp::ok(&client, "whoami", json!({})).await;
        assert_eq!(me["peer"], "h/lead");
        assert_eq!(me["registered"], true);
        assert_eq!(me["groups"], json!(["session:h/lead", "team"]));
        let peers = mcp::ok(&client, "list_peers", json!({})).await;
        let ids: Vec<String> = peers["peers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["id"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(ids, ["h/reviewer"], "{peers}");

        let sent = mcp::ok(
            &client,
            "send",
            json!({"to": "reviewer", "body": "review please"}),
        )
        .await;
        assert_eq!(strings(&sent["recipients"]), ["h/reviewer"]);
        // All or nothing, as on the command line.
        let refused = mcp::error(
            &client,
            "send",
            json!({"to": ["reviewer", "outsider"], "body": "to both"}),
        )
        .await;
        assert_eq!(refused["code"], "targets_refused", "{refused}");
        assert_eq!(refused["exit"], 5);
        mcp::ok(
            &client,
            "broadcast",
            json!({"group": "team", "body": "standup"}),
        )
        .await;

        let got = home.json(&["inbox", "--as", "reviewer"]);
        let bodies: Vec<&str> = got["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["body"].as_str())
            .collect();
        assert_eq!(bodies, ["review please", "standup"]);
        let question = home.json(&["send", "--as", "reviewer", "--to", "lead", "which branch?"]);

        let peeked = mcp::ok(&client, "inbox", json!({"peek": true, "wait_s": 5})).await;
        assert_eq!(peeked["acknowledged"], false);
        let inbox = mcp::ok(&client, "inbox", json!({"wait_s": 5})).await;
        assert_eq!(inbox["acknowledged"], true);
        assert_eq!(inbox["messages"][0]["body"], "which branch?");
        assert_eq!(inbox["messages"][0]["from"], "h/reviewer");
        let empty = mcp::ok(&client, "inbox", json!({})).await;
        assert_eq!(empty["messages"], json!([]));
        let id = question["id"].as_str().expect("id");
        mcp::ok(&client, "reply", json!({"to_message": id, "body": "main"})).await;
        let answer = home.json(&["inbox", "--as", "reviewer"]);
        assert_eq!(answer["messages"][0]["body"], "main");
        assert_eq!(answer["messages"][0]["in_reply_to"], id);
        let outbox = mcp::ok(&client, "outbox", json!({"limit": 10})).await;
        assert!(
            outbox["messages"].as_array().is_some_and(|m| m.len() >= 3),
            "{outbox}"
        );

        let run = mcp::ok(
            &client,
            "lane",
            json!({"action": "run", "cli": "exec", "name": "check", "prompt": "x",
                   "args": ["sh", "-c", "echo checked"]}),
        )
        .await;
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["result"], "checked");
        let status = mcp::ok(
            &client,
            "lane",
            json!({"action": "status", "name": "check"}),
        )
        .await;
        assert_eq!(status["owner"], "h/lead");
        let list = mcp::ok(&client, "lane", json!({"action": "list", "all": true})).await;
        assert!(list["lanes"].as_array().is_some_and(|l| !l.is_empty()));
        let events = mcp::ok(
            &client,
            "lane",
            json!({"action": "events", "name": "check"}),
        )
        .await;
        assert!(events["events"].as_array().is_some_and(|e| !e.is_empty()));
        mcp::ok(&client, "lane", json!({"action": "doctor", "cli": "exec"})).await;

        let renamed = mcp::ok(&client, "rename", json!({"new_name": "boss"})).await;
        assert_eq!(renamed["id"], "h/boss");
        let me = mcp::ok(&client, "whoami", json!({})).await;
        assert_eq!(me["peer"], "h/boss");
        let _ = client.cancel().await;
    });
}

/// Issue 8, tests: unknown tool, wrong types, a name that is not yours, a
/// 2 MiB body: tool errors with the right code, and both the server and
/// the daemon keep serving.
#[test]
fn bad_input_to_an_mcp_tool_is_a_tool_error_and_nothing_stops() {
    let home = daemon();
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&["peer", "join", "reviewer", "-g", "team"]);
    runtime().block_on(async {
        let client = mcp::connect(&home, Some("lead")).await;
        let unknown = mcp::error(&client, "launch_missiles", json!({})).await;
        assert_eq!(unknown["code"], "not_found", "{unknown}");
        let wrong_type = mcp::error(&client, "send", json!({"to": 5, "body": "x"})).await;
        assert_eq!(wrong_type["code"], "usage", "{wrong_type}");
        assert_eq!(wrong_type["exit"], 2);
        // No tool takes an identity: a field naming another peer is refused.
        let spoof = mcp::error(
            &client,
            "send",
            json!({"to": "reviewer", "body": "x", "as": "reviewer"}),
        )
        .await;
        assert_eq!(spoof["code"], "usage", "{spoof}");
        let not_yours = mcp::error(
            &client,
            "reply",
            json!({"to_message": "never-received", "body": "x"}),
        )
        .await;
        assert_eq!(not_yours["code"], "not_found", "{not_yours}");
        let bad_name = mcp::error(&client, "rename", json!({"new_name": "../etc"})).await;
        assert_eq!(bad_name["code"], "invalid_name", "{bad_name}");
        let big = "x".repeat(2 * 1024 * 1024);
        let too_large = mcp::error(&client, "send", json!({"to": "reviewer", "body": big})).await;
        assert_eq!(too_large["code"], "too_large", "{too_large}");
        let long_wait = mcp::error(&client, "inbox", json!({"wait_s": 61})).await;
        assert_eq!(long_wait["code"], "usage", "{long_wait}");
        let no_name = mcp::error(&client, "lane", json!({"action": "wait"})).await;
        assert_eq!(no_name["code"], "usage", "{no_name}");
        // Still serving, and nothing was sent.
        let me = mcp::ok(&client, "whoami", json!({})).await;
        assert_eq!(me["peer"], "h/lead");
        let _ = client.cancel().await;
    });
    let inbox = home.json(&["inbox", "--as", "reviewer"]);
    assert_eq!(inbox["messages"], json!([]), "{inbox}");
    home.ok(&["host", "status"]);
}

/// Without an identity the server still answers the read-only tools and
/// says how to set one; every tool that acts as a peer is refused.
#[test]
fn an_mcp_server_without_identity_serves_only_reading_tools() {
    let home = daemon();
    home.ok(&["peer", "join", "lead"]);
    runtime().block_on(async {
        let client = mcp::connect(&home, None).await;
        let me = mcp::ok(&client, "whoami", json!({})).await;
        assert_eq!(me["peer"], Value::Null);
        assert!(
            me["hint"].as_str().is_some_and(|h| h.contains("--as")),
            "{me}"
        );
        for (tool, args) in [
            ("send", json!({"to": "lead", "body": "x"})),
            ("inbox", json!({})),
            ("list_peers", json!({})),
            (
                "lane",
                json!({"action": "run", "cli": "exec", "args": ["true"]}),
            ),
        ] {
            let e = mcp::error(&client, tool, args).await;
            assert_eq!(e["code"], "usage", "{tool}: {e}");
            assert!(
                e["hint"]
                    .as_str()
                    .is_some_and(|h| h.contains("FLOTILLA_PEER")),
                "{e}"
            );
        }
        mcp::ok(&client, "lane", json!({"action": "list"})).await;
        let _ = client.cancel().await;
    });
}
