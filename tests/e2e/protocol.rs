//! The control socket spoken badly: malformed lines, unknown versions and
//! ops, oversized lines, and clients that vanish mid-request. Each gets a
//! structured error or is dropped, and the daemon keeps serving everyone.

use std::os::unix::fs::PermissionsExt;

use flotilla_tests::TestHome;
use flotilla_tests::raw::{RawClient, error_code};
use serde_json::json;

fn daemon() -> TestHome {
    let home = TestHome::new();
    home.ok(&["up", "--name", "h"]);
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    home
}

#[test]
fn the_socket_is_private() {
    let home = daemon();
    let mode = std::fs::metadata(home.socket_path())
        .expect("socket")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let run = std::fs::metadata(home.path().join("run"))
        .expect("run")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(run, 0o700);
}

#[test]
fn malformed_requests_get_structured_errors_on_a_usable_connection() {
    let home = daemon();
    let mut c = home.raw();
    let cases: &[(&[u8], &str)] = &[
        (b"this is not json\n", "bad_request"),
        (b"{\"v\":1,\"id\":1}\n", "bad_request"),
        (
            b"{\"v\":2,\"id\":2,\"op\":\"roster\"}\n",
            "unsupported_version",
        ),
        (b"{\"v\":1,\"id\":3,\"op\":\"no.such.op\"}\n", "bad_request"),
        (
            b"{\"v\":1,\"id\":4,\"op\":\"send\",\"args\":{\"as\":\"a\"}}\n",
            "bad_request",
        ),
        (
            b"{\"v\":1,\"id\":5,\"op\":\"peer.join\",\"args\":{\"name\":\"bad name\"}}\n",
            "bad_request",
        ),
        (b"[1,2,3]\n", "bad_request"),
        (b"\n", "bad_request"),
    ];
    for (line, code) in cases {
        c.send_bytes(line).expect("send");
        let frame = c.read_frame().expect("a response");
        assert_eq!(
            frame["ok"],
            json!(false),
            "{}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(
            error_code(&frame),
            *code,
            "{}: {frame}",
            String::from_utf8_lossy(line)
        );
        assert!(
            frame["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let ok = c.call("host.status", json!({})).expect("still usable");
    assert_eq!(ok["ok"], json!(true));
    let unsupported = c.call("roster", json!({})).expect("roster");
    assert_eq!(unsupported["result"]["schema"], "flotilla.roster.v1");
}

#[test]
fn an_oversized_line_is_refused_and_the_connection_survives() {
    let home = daemon();
    let mut c = home.raw();
    let mut line = vec![b'x'; 9 * 1024 * 1024];
    line.push(b'\n');
    c.send_bytes(&line).expect("send");
    let frame = c.read_frame().expect("response");
    assert_eq!(error_code(&frame), "too_large", "{frame}");
    assert_eq!(
        c.call("host.status", json!({})).expect("after")["ok"],
        json!(true)
    );
}

#[test]
fn clients_that_vanish_mid_request_do_not_stall_the_daemon() {
    let home = daemon();
    for _ in 0..20 {
        let mut c = home.raw();
        c.send_bytes(
            b"{\"v\":1,\"id\":1,\"op\":\"send\",\"args\":{\"as\":\"a\",\"to\":[\"b\"],\"bo",
        )
        .expect("partial");
        drop(c);
    }
    // A client that asks and leaves before the answer.
    for _ in 0..20 {
        let mut c = home.raw();
        c.send_bytes(
            b"{\"v\":1,\"id\":1,\"op\":\"inbox.fetch\",\"args\":{\"as\":\"a\",\"wait_ms\":50}}\n",
        )
        .expect("send");
        drop(c);
    }
    // Idle connections held open do not block others.
    let idle: Vec<RawClient> = (0..50).map(|_| home.raw()).collect();
    let mut c = home.raw();
    let sent = c
        .call(
            "send",
            json!({"as": "a", "to": ["b"], "body": "still here"}),
        )
        .expect("send");
    assert_eq!(sent["ok"], json!(true), "{sent}");
    drop(idle);
    let inbox = home.json(&["inbox", "--as", "b"]);
    assert_eq!(
        inbox["messages"].as_array().expect("m").len(),
        1,
        "the partial send stored nothing"
    );
}

#[test]
fn a_reader_that_dies_before_acknowledging_gets_the_messages_again() {
    let home = daemon();
    home.ok(&["send", "--as", "a", "--to", "b", "first"]);
    home.ok(&["send", "--as", "a", "--to", "b", "second"]);
    {
        let mut reader = home.raw();
        let frame = reader
            .call("inbox.fetch", json!({"as": "b"}))
            .expect("fetch");
        assert_eq!(frame["result"]["messages"].as_array().expect("m").len(), 2);
        // The reader dies here, before inbox.ack.
    }
    let again = home.json(&["inbox", "--as", "b"]);
    let bodies: Vec<&str> = again["messages"]
        .as_array()
        .expect("m")
        .iter()
        .map(|m| m["body"].as_str().expect("b"))
        .collect();
    assert_eq!(bodies, ["first", "second"]);
    assert_eq!(
        home.json(&["inbox", "--as", "b"])["messages"],
        json!([]),
        "acknowledged by the CLI"
    );
}

#[test]
fn test_hooks_are_off_unless_enabled() {
    let mut home = TestHome::new();
    home.env.clear();
    home.ok(&["up", "--name", "h"]);
    let mut c = home.raw();
    let frame = c
        .call("debug.fail", json!({"actor": "router"}))
        .expect("call");
    assert_eq!(error_code(&frame), "forbidden");
}
