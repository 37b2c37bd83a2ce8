//! The control socket's bounds against hostile local clients (issue 13,
//! point 4): a client that hangs up during a long-poll releases it at once.

use std::time::Duration;

use flotilla_tests::wait_until;

use crate::lanes::daemon;

fn reader_state(home: &flotilla_tests::TestHome) -> String {
    let roster = home.json(&["roster"]);
    roster["peers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["id"] == "h/reader")
        .and_then(|p| p["state"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[test]
fn a_client_that_hangs_up_during_a_long_poll_releases_it_at_once() {
    let home = daemon();
    home.ok(&["peer", "join", "reader"]);
    let mut raw = home.raw();
    raw.send_bytes(
        b"{\"v\":1,\"id\":1,\"op\":\"inbox.fetch\",\"args\":{\"as\":\"reader\",\"wait_ms\":600000}}\n",
    )
    .expect("send");
    wait_until("the reader to wait", Duration::from_secs(10), || {
        reader_state(&home) == "waiting"
    });
    drop(raw);
    wait_until("the wait to be released", Duration::from_secs(10), || {
        reader_state(&home) != "waiting"
    });
}

fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS")
}

/// Twenty clients each holding a 7 MiB partial line took the daemon to
/// about 195 MB: what all connections buffer together is now bounded.
#[test]
fn partial_lines_of_many_clients_share_one_bound() {
    let home = daemon();
    let pid = home.daemon_pid();
    let before = rss_kib(pid);
    let chunk = vec![b'x'; 7 * 1024 * 1024];
    let mut clients: Vec<_> = (0..20).map(|_| home.raw()).collect();
    for c in &mut clients {
        c.send_bytes(&chunk).expect("a partial line");
    }
    let grown_mib = rss_kib(pid).saturating_sub(before) / 1024;
    assert!(grown_mib < 110, "the daemon grew by {grown_mib} MiB");
    let mut busy = 0;
    for c in &mut clients {
        c.send_bytes(b"\n").expect("end of line");
        let frame = c.read_frame().expect("an answer");
        if frame["error"]["code"] == "unavailable" {
            busy += 1;
        }
    }
    assert!(busy > 0, "some lines were over the shared bound");
    home.ok(&["host", "status"]);
}
