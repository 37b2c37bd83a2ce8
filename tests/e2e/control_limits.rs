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
