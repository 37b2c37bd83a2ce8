//! Peers and messages through the real binary: visibility, atomic
//! admission, broadcast, reply, inbox semantics, order, dedupe, and every
//! bad input with its clear error and exit code.

use flotilla_tests::TestHome;
use serde_json::{Value, json};

fn with_team() -> TestHome {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h"]);
    home.ok(&["peer", "join", "lead", "-g", "proj", "-g", "ops"]);
    home.ok(&["peer", "join", "rev", "-g", "proj"]);
    home.ok(&["peer", "join", "ci", "-g", "ops"]);
    home.ok(&["peer", "join", "loner"]);
    home
}

fn ids(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .expect("array")
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn peers_sees_only_shared_groups() {
    let home = with_team();
    assert_eq!(
        ids(&home.json(&["peers", "--as", "lead"]), "peers"),
        ["h/ci", "h/rev"]
    );
    assert_eq!(
        ids(&home.json(&["peers", "--as", "rev"]), "peers"),
        ["h/lead"]
    );
    assert!(ids(&home.json(&["peers", "--as", "loner"]), "peers").is_empty());
    let roster = home.json(&["roster"]);
    assert_eq!(roster["schema"], "flotilla.roster.v1");
    assert_eq!(ids(&roster, "peers").len(), 4);
}

#[test]
fn send_is_all_or_nothing_and_names_each_bad_target() {
    let home = with_team();
    let stderr = home.fails(&["send", "--as", "rev", "--to", "lead,ci,ghost", "hi"], 5);
    assert!(
        stderr.contains("ci: shares no group with the sender"),
        "{stderr}"
    );
    assert!(stderr.contains("ghost: no such peer"), "{stderr}");
    assert!(stderr.contains("nothing was sent"), "{stderr}");
    let out = home.run(&["send", "--as", "rev", "--to", "lead,ci", "hi", "--json"]);
    let err: Value = serde_json::from_slice(&out.stdout).expect("json error");
    assert_eq!(err["error"]["code"], "targets_refused");
    assert_eq!(
        err["error"]["details"]["refused"][0]["problem"],
        "not_visible"
    );
    assert_eq!(
        home.json(&["inbox", "--as", "lead", "--peek"])["messages"],
        json!([])
    );
}

#[test]
fn inbox_acknowledges_unless_peek_and_keeps_sender_order() {
    let home = with_team();
    for i in 0..20 {
        home.ok(&["send", "--as", "lead", "--to", "h/rev", &format!("m{i}")]);
    }
    let peek = home.json(&["inbox", "--as", "rev", "--peek", "--limit", "5"]);
    assert_eq!(peek["acknowledged"], Value::Bool(false));
    assert_eq!(peek["remaining"], 15);
    let all = home.json(&["inbox", "--as", "rev"]);
    let bodies: Vec<&str> = all["messages"]
        .as_array()
        .expect("m")
        .iter()
        .map(|m| m["body"].as_str().expect("b"))
        .collect();
    let want: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies, want);
    let seqs: Vec<u64> = all["messages"]
        .as_array()
        .expect("m")
        .iter()
        .map(|m| m["seq"].as_u64().expect("seq"))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let first = &all["messages"][0];
    for key in ["id", "from", "to", "group", "summary", "body", "sent_at"] {
        assert!(first.get(key).is_some(), "inbox message lacks {key}");
    }
    assert_eq!(home.json(&["inbox", "--as", "rev"])["messages"], json!([]));
}

#[test]
fn a_retried_send_is_stored_once() {
    let home = with_team();
    let first = home.json(&[
        "send", "--as", "lead", "--to", "rev", "--id", "fixed-1", "once",
    ]);
    assert_eq!(first["duplicate"], Value::Bool(false));
    let again = home.json(&[
        "send", "--as", "lead", "--to", "rev", "--id", "fixed-1", "once",
    ]);
    assert_eq!(again["duplicate"], Value::Bool(true));
    assert_eq!(again["seq"], first["seq"]);
    assert_eq!(
        home.json(&["inbox", "--as", "rev"])["messages"]
            .as_array()
            .expect("m")
            .len(),
        1
    );
    let stderr = home.fails(
        &[
            "send", "--as", "rev", "--to", "lead", "--id", "fixed-1", "x",
        ],
        6,
    );
    assert!(
        stderr.contains("already used by another sender"),
        "{stderr}"
    );
}

#[test]
fn broadcast_reaches_the_group_and_needs_membership() {
    let home = with_team();
    let sent = home.json(&["broadcast", "--as", "lead", "-g", "ops", "deploy at 5"]);
    assert_eq!(sent["recipients"], json!(["h/ci"]));
    let inbox = home.json(&["inbox", "--as", "ci"]);
    assert_eq!(inbox["messages"][0]["group"], "ops");
    let stderr = home.fails(&["broadcast", "--as", "rev", "-g", "ops", "x"], 5);
    assert!(stderr.contains("not a member of group ops"), "{stderr}");
    assert!(stderr.contains("peer join rev -g ops"), "{stderr}");
}

/// lead sends rev a message and rev reads it; its id.
fn read_by_rev(home: &TestHome) -> String {
    let sent = home.json(&["send", "--as", "lead", "--to", "rev", "review this"]);
    home.ok(&["inbox", "--as", "rev"]);
    sent["id"].as_str().expect("id").to_owned()
}

#[test]
fn reply_answers_the_verified_sender() {
    let home = with_team();
    let id = read_by_rev(&home);
    let id = id.as_str();
    let replied = home.json(&["reply", "--as", "rev", "--to-message", id, "looks good"]);
    assert_eq!(replied["recipients"], json!(["h/lead"]));
    let inbox = home.json(&["inbox", "--as", "lead"]);
    assert_eq!(inbox["messages"][0]["in_reply_to"], id);
    let stderr = home.fails(&["reply", "--as", "ci", "--to-message", id, "not mine"], 4);
    assert!(stderr.contains("received no message"), "{stderr}");
}

#[test]
fn a_reply_to_a_sender_who_left_is_refused_as_a_send_would_be() {
    let home = with_team();
    let id = read_by_rev(&home);
    let id = id.as_str();
    home.ok(&["peer", "leave", "lead"]);
    let stderr = home.fails(&["reply", "--as", "rev", "--to-message", id, "too late"], 5);
    assert!(
        stderr.contains("nothing was sent; refused targets: h/lead")
            && stderr.contains("peers --as rev` lists who you can reach"),
        "{stderr}"
    );
}

#[test]
fn inbox_wait_returns_when_a_message_arrives() {
    let home = with_team();
    let reader = home
        .command(&["inbox", "--as", "rev", "--wait", "20", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("reader");
    flotilla_tests::wait_until(
        "the reader to be waiting",
        std::time::Duration::from_secs(10),
        || {
            home.json(&["roster"])["peers"]
                .as_array()
                .expect("p")
                .iter()
                .any(|p| p["id"] == "h/rev" && p["state"] == "waiting")
        },
    );
    home.ok(&["send", "--as", "lead", "--to", "rev", "wake up"]);
    let out = reader.wait_with_output().expect("reader");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["messages"][0]["body"], "wake up");
}

#[test]
fn bad_names_groups_and_sizes_get_clear_errors() {
    let home = with_team();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["peer", "join", "bad name"], 2, "invalid peer name"),
        (&["peer", "join", &"x".repeat(65)], 2, "1 to 64"),
        (
            &["peer", "join", "ok", "-g", "bad group!"],
            2,
            "invalid group",
        ),
        (
            &["peer", "join", "ok", "-g", "session:h/lead"],
            2,
            "reserved",
        ),
        (
            &["send", "--as", "nobody", "--to", "lead", "x"],
            4,
            "not a peer of this host",
        ),
        (
            &["send", "--as", "lead", "--to", "rev", ""],
            2,
            "message is empty",
        ),
        (
            &["send", "--as", "lead", "--to", "rev", "--id", "bad id", "x"],
            2,
            "invalid message id",
        ),
        (&["peer", "rename", "lead", "rev"], 6, "already exists"),
        (&["peer", "leave", "ghost"], 4, "not a peer of this host"),
        (&["inbox", "--as", "rev", "--wait", "-1"], 2, ""),
    ];
    for (args, code, needle) in cases {
        let stderr = home.fails(args, *code);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let big = vec![b'a'; 1024 * 1024 + 1];
    let out = home.run_with_stdin(&["send", "--as", "lead", "--to", "rev", "-"], &big);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("1048577 bytes, over the limit of 1048576"),
        "{stderr}"
    );
    let out = home.run_with_stdin(&["send", "--as", "lead", "--to", "rev", "-"], &[0xff, 0xfe]);
    assert_eq!(out.status.code(), Some(2));
    // Exactly at the limit is fine, and nothing above was stored.
    let at_limit = vec![b'b'; 1024 * 1024];
    let out = home.run_with_stdin(&["send", "--as", "lead", "--to", "rev", "-"], &at_limit);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inbox = home.json(&["inbox", "--as", "rev"]);
    assert_eq!(inbox["messages"].as_array().expect("m").len(), 1);
    home.ok(&["host", "status"]);
}

#[test]
fn leave_with_unread_mail_needs_force_and_rename_keeps_mail() {
    let home = with_team();
    home.ok(&["send", "--as", "lead", "--to", "rev", "for rev"]);
    home.ok(&["peer", "rename", "rev", "reviewer"]);
    let inbox = home.json(&["inbox", "--as", "reviewer", "--peek"]);
    assert_eq!(inbox["messages"][0]["body"], "for rev");
    let stderr = home.fails(&["peer", "leave", "reviewer"], 6);
    assert!(
        stderr.contains("1 unread") && stderr.contains("--force"),
        "{stderr}"
    );
    let left = home.json(&["peer", "leave", "reviewer", "--force"]);
    assert_eq!(left["dropped_unread"], 1);
    home.fails(&["inbox", "--as", "reviewer"], 4);
}

#[test]
fn a_configured_message_limit_is_enforced() {
    let home = TestHome::new();
    std::fs::write(home.path().join("config.toml"), "max_message_bytes = 10\n").expect("config");
    home.ok(&["up", "--name", "h"]);
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    let stderr = home.fails(&["send", "--as", "a", "--to", "b", "eleven byte"], 2);
    assert!(
        stderr.contains("11 bytes, over the limit of 10"),
        "{stderr}"
    );
    home.ok(&["send", "--as", "a", "--to", "b", "ten bytes!"]);
}
