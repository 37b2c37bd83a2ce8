//! Fuzzing the control protocol: a client's bytes on the daemon's socket,
//! cut into lines by [`read_line_within`] and parsed by
//! [`RequestFrame::parse`], and the error line the daemon sends back.

use proptest::{prop_assert, prop_assert_eq};
use serde_json::{Value, json};

use crate::fuzzing::{Target, TestCaseError, fuzz};
use crate::protocol::*;

/// A request line exactly as the CLI sends it: typed args serialized by
/// [`RequestFrame::new`].
fn line<O: Op>(id: u64, args: Value) -> Vec<u8> {
    let op: O = serde_json::from_value(args).expect("args");
    let mut line = serde_json::to_vec(&RequestFrame::new(id, &op).expect("frame")).expect("json");
    line.push(b'\n');
    line
}

fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![
        line::<HostStatusArgs>(1, json!({})),
        line::<PeerJoinArgs>(
            2,
            json!({"name": "lead", "groups": ["proj"], "product": "claude-code"}),
        ),
        line::<PeersArgs>(3, json!({"as": "lead"})),
        line::<SendArgs>(
            4,
            json!({"as": "lead", "to": ["reviewer", "workstation/qa"], "summary": "review", "body": "Please review `fuzz`.\n\"Thanks\" \u{e9}"}),
        ),
        line::<BroadcastArgs>(5, json!({"as": "lead", "group": "proj", "body": "standup"})),
        line::<InboxFetchArgs>(6, json!({"as": "reviewer", "wait_ms": 30000, "limit": 10})),
        line::<InboxAckArgs>(
            7,
            json!({"as": "reviewer", "ids": ["0192f3a4-7b1c-7d2e-8f00-1a2b3c4d5e6f"]}),
        ),
        line::<OutboxArgs>(8, json!({"as": "lead"})),
        line::<LaneStartArgs>(
            9,
            json!({"name": "w1", "cli": "claude", "prompt": "Fix the failing test in crates/actors.", "cwd": "/home/me/src", "permissions": "workspace", "env": [["RUST_LOG", "debug"]]}),
        ),
        line::<LaneWaitArgs>(10, json!({"name": "w1", "timeout_ms": 600000})),
        line::<RemoteCallArgs>(
            11,
            json!({"host": "workstation", "as": "lead", "op": "lane.status", "args": {"name": "w1"}}),
        ),
    ];
    // Several requests on one connection, as `flotilla mcp` sends them.
    let stream: Vec<u8> = seeds.iter().take(4).flatten().copied().collect();
    seeds.push(stream);
    seeds
}

/// The daemon's answer to a line: a reply id and a request, or an error
/// that serializes to one line.
fn parse(line: &[u8]) -> Result<(), TestCaseError> {
    match RequestFrame::parse(line) {
        Ok((id, request)) => {
            prop_assert!(OP_NAMES.contains(&request.name()));
            // serde also reads a struct from an array (`[1,7,"peers"]`),
            // and skips unknown keys without reading their numbers (a
            // `Value` refuses `1e999`): both harmless, and then there is
            // nothing to compare.
            let sent: Value = serde_json::from_slice(line).unwrap_or_default();
            if sent.is_object() {
                prop_assert_eq!(sent.get("op").and_then(Value::as_str), Some(request.name()));
                prop_assert_eq!(sent.get("id").cloned().unwrap_or(Value::Null), id);
            }
        }
        Err(refused) => {
            let answer = ResponseFrame::err(refused.id, refused.error);
            let bytes = serde_json::to_vec(&answer).expect("an error answer serializes");
            prop_assert!(!bytes.contains(&b'\n'), "an answer must stay on one line");
            let back: ResponseFrame = serde_json::from_slice(&bytes).expect("the client reads it");
            prop_assert!(!back.ok);
        }
    }
    Ok(())
}

fn check(runtime: &tokio::runtime::Runtime, input: &[u8]) -> Result<(), TestCaseError> {
    const LIMIT: usize = 512;
    let budget = LineBudget::new(2 * LIMIT);
    let mut reader = input;
    let mut lines = 0usize;
    runtime.block_on(async {
        loop {
            match read_line_within(&mut reader, LIMIT, Some(&budget)).await {
                Ok(Some(line)) => {
                    prop_assert!(line.len() <= LIMIT && !line.contains(&b'\n'));
                    parse(&line)?;
                }
                Ok(None) | Err(LineError::Truncated) => break,
                Err(LineError::TooLong { .. } | LineError::Busy { .. }) => {}
                Err(e) => return Err(TestCaseError::fail(format!("unexpected: {e}"))),
            }
            lines += 1;
            prop_assert!(lines <= input.len(), "more lines than bytes");
        }
        prop_assert_eq!(budget.used(), 0, "every line gives its budget back");
        Ok(())
    })?;
    parse(input)
}

#[test]
fn fuzz_control_requests() {
    let seeds = seeds();
    for seed in &seeds[..seeds.len() - 1] {
        let line = seed.strip_suffix(b"\n").unwrap_or(seed);
        RequestFrame::parse(line).expect("every seed is a valid request");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let target = Target {
        name: "control-requests",
        seeds: &seeds,
        dictionary: &[
            b"\n",
            b"{",
            b"}",
            b"[",
            b"\"",
            b"\\u0000",
            b"\\ud800",
            b"null",
            b"1e999",
            b"-0",
            b"\"op\":\"send\"",
            b"\"v\":1",
        ],
    };
    fuzz(target, |input| check(&runtime, input));
}

/// Deep nesting stops at serde_json's recursion limit instead of
/// overflowing the daemon's stack.
#[test]
fn deeply_nested_arguments_are_refused() {
    let depth = 100_000;
    let line = format!(
        r#"{{"v":1,"id":{}1{},"op":"peers"}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let refused = RequestFrame::parse(line.as_bytes()).expect_err("too deep");
    assert_eq!(refused.error.code, ErrorCode::BadRequest);
}

/// Found by `fuzz_control_requests`: an unknown key's value is skipped
/// unread, so a number no `Value` holds does not refuse the request.
#[test]
fn an_unknown_key_is_skipped_whatever_its_number() {
    let line = br#"{"v":1,"-0id":81e999,"id":3,"op":"outbox","args":{"as":"lead"}}"#;
    let (id, request) = RequestFrame::parse(line).expect("accepted");
    assert_eq!((id, request.name()), (json!(3), "outbox"));
    check_one(line);
}

fn check_one(line: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    check(&runtime, line).expect("the properties hold");
}
