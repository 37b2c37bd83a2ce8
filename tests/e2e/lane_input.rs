//! What a lane start is refused for before anything exists: NUL bytes in its
//! environment, arguments or model (a process cannot carry them), and
//! environment variable names that are empty or hold `=` (issue 13, §5).
//! Each is a `bad_request` naming the variable or argument, on a connection
//! and a daemon that keep working, and no lane or peer is left behind.

use flotilla_tests::raw::error_code;
use serde_json::{Value, json};

use crate::lanes::daemon;

/// A `lane.start` of an exec lane named `name`, with `extra` merged in.
fn start(name: &str, extra: Value) -> Value {
    let mut args = json!({"name": name, "cli": "exec", "prompt": "x", "args": ["true"]});
    for (k, v) in extra.as_object().expect("an object") {
        args[k] = v.clone();
    }
    args
}

#[test]
fn issue_13_nul_bytes_and_bad_env_names_are_refused_before_a_lane_exists() {
    let home = daemon();
    let mut raw = home.raw();
    let cases = [
        (json!({"env": [["A\u{0}B", "v"]]}), "\"A\\0B\""),
        (
            json!({"env": [["OK", "v"], ["TOKEN", "se\u{0}cret"]]}),
            "TOKEN",
        ),
        (json!({"args": ["sh", "-c", "echo a\u{0}b"]}), "argument 3"),
        (json!({"model": "m\u{0}"}), "model"),
        (json!({"env": [["A=B", "v"]]}), "\"A=B\""),
        (json!({"env": [["", "v"]]}), "empty"),
    ];
    for (i, (extra, named)) in cases.into_iter().enumerate() {
        let name = format!("bad{i}");
        let frame = raw
            .call("lane.start", start(&name, extra.clone()))
            .expect("an answer, not a dropped connection");
        assert_eq!(error_code(&frame), "bad_request", "{extra}: {frame}");
        let message = frame["error"]["message"].as_str().expect("message");
        assert!(message.contains(named), "{extra}: {message}");
        let hint = frame["error"]["hint"].as_str().expect("a hint");
        assert!(!hint.is_empty(), "{extra}");
    }
    let lanes = raw.call("lane.list", json!({"all": true})).expect("list");
    assert_eq!(
        lanes["result"]["lanes"],
        json!([]),
        "no ghost lane: {lanes}"
    );
    let roster = home.json(&["roster"]);
    let ids: Vec<&str> = roster["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert!(ids.iter().all(|id| !id.contains("bad")), "{ids:?}");
    let status = home.json(&["host", "status"]);
    for actor in status["actors"].as_array().expect("actors") {
        assert_eq!(actor["restarts"], 0, "{actor}");
    }
    let ok = raw
        .call("lane.start", start("good", json!({"env": [["A", "v"]]})))
        .expect("answer");
    assert_eq!(ok["ok"], true, "the same connection still works: {ok}");
}
