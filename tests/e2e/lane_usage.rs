//! Issue 9: a turn that ends without its connector keeps the usage its
//! output on disk shows: stopped by `flotilla down`, lost while the
//! daemon was down, or killed by the watchdog before a restart. The CLI is a stand-in `claude` that prints one model
//! call's message with its usage, then works on (sleeps).

use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

use crate::lanes::{code, kill_turn_with_daemon, running_with, unique};

/// A home whose `claude` prints a message that used 100 input tokens (20
/// of them read from the cache) and 7 output tokens, then sleeps `sleep`;
/// resumed (`--resume`), it finishes at once with 10 and 3 tokens. The
/// daemon runs with `config` and the lane with `lane_args`.
fn home_with_working_claude(sleep: &str, config: &str, lane_args: &[&str]) -> TestHome {
    let mut home = TestHome::new();
    let fake = home.path().join("working-claude");
    let message = r#"{"type":"assistant","session_id":"s-1","message":{"id":"m-1","model":"m","role":"assistant","content":[{"type":"text","text":"working on it"}],"usage":{"input_tokens":80,"cache_read_input_tokens":20,"output_tokens":7}}}"#;
    let script = format!(
        r#"#!/bin/sh
case "$1" in --version) echo '2.1.332 (Claude Code)'; exit 0;; --help) echo '--output-format'; exit 0;; esac
cat >/dev/null
echo '{{"type":"system","subtype":"init","session_id":"s-1"}}'
case " $* " in *" --resume "*)
  echo '{{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-1","usage":{{"input_tokens":10,"output_tokens":3}}}}'
  exit 0;;
esac
echo '{message}'
exec sleep {sleep}
"#
    );
    flotilla_tests::write_executable(&fake, &script);
    home.write_config(&format!(
        "{config}[clis]\nclaude = \"{}\"\n",
        fake.display()
    ));
    home.spawn_daemon("h");
    let mut start = vec![
        "lane", "start", "--cli", "claude", "-n", "w", "--prompt", "work",
    ];
    start.extend_from_slice(lane_args);
    home.ok(&start);
    wait_until("the model call's usage", Duration::from_secs(20), || {
        home.ok(&["lane", "events", "w"]).contains("working on it")
    });
    home
}

fn assert_usage(v: &Value) {
    assert_eq!(v["usage"]["input"], 100, "{v}");
    assert_eq!(v["usage"]["cached"], 20, "{v}");
    assert_eq!(v["usage"]["output"], 7, "{v}");
    assert_eq!(v["native_session_id"], "s-1", "{v}");
}

#[test]
fn a_turn_stopped_by_down_keeps_its_usage() {
    let sleep = unique(41);
    let home = home_with_working_claude(&sleep, "", &[]);
    wait_until("the turn's process", Duration::from_secs(20), || {
        running_with(&format!("sleep {sleep}"))
    });
    home.ok(&["down"]);
    home.ok(&["up", "--name", "h"]);
    let (_, v) = code(&home, &["lane", "wait", "w"]);
    assert_eq!(v["status"], "interrupted", "{v}");
    assert_usage(&v);
}

#[test]
fn a_turn_lost_while_the_daemon_was_down_keeps_its_usage() {
    let sleep = unique(42);
    let mut home = home_with_working_claude(&sleep, "", &[]);
    wait_until("the turn's process", Duration::from_secs(20), || {
        running_with(&format!("sleep {sleep}"))
    });
    kill_turn_with_daemon(&mut home, "w", &format!("sleep {sleep}"));
    home.spawn_daemon("h");
    let (c, v) = code(&home, &["lane", "wait", "w"]);
    assert_eq!((c, v["status"].as_str()), (1, Some("lost")), "{v}");
    assert_usage(&v);
}

#[test]
fn a_turn_the_watchdog_restarted_counts_the_killed_attempts_usage() {
    // The watchdog restarts only while the model endpoint answers.
    let endpoint = std::net::TcpListener::bind("127.0.0.1:0").expect("endpoint");
    let url = format!(
        "ANTHROPIC_BASE_URL=http://{}",
        endpoint.local_addr().expect("addr")
    );
    let config = "watchdog_interval_ms = 100\nlane_stall_secs = 1.0\nlane_stall_restarts = 1\n";
    let sleep = unique(43);
    let home = home_with_working_claude(&sleep, config, &["--env", &url]);
    let (c, v) = code(&home, &["lane", "wait", "w", "--timeout", "60"]);
    let events = home.ok(&["lane", "events", "w"]);
    assert_eq!(
        (c, v["status"].as_str()),
        (0, Some("completed")),
        "{v}\n{events}"
    );
    assert_eq!(v["result"], "done", "{v}");
    assert_eq!(
        v["usage"]["input"], 110,
        "the killed attempt's 100 and the last one's 10: {v}"
    );
    assert_eq!(v["usage"]["output"], 10, "{v}");
    assert_eq!(v["usage"]["cached"], 20, "{v}");
}
