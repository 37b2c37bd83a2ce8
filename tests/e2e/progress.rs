//! Progress for long waits (issue 12): a spinner saying what is awaited on
//! a terminal, cleared when the wait ends; nothing of it in a pipe.

use std::time::Duration;

use flotilla_tests::session::Tmux;
use flotilla_tests::{flotilla_bin, wait_until};

use crate::lanes::{daemon, unique};

#[test]
fn a_long_wait_shows_a_spinner_on_a_terminal_and_nothing_in_a_pipe() {
    let home = daemon();
    let sleep = format!("sleep {}", unique(21));
    home.ok(&[
        "lane", "start", "-n", "slow", "--cli", "exec", "--prompt", "x", "--", "sh", "-c", &sleep,
    ]);
    let piped = home.run(&["lane", "wait", "slow", "--timeout", "1"]);
    assert_eq!(piped.status.code(), Some(124));
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains("waiting for lane"),
        "no spinner in a pipe: {stderr}"
    );

    let script = format!(
        "'{}' --home '{}' lane wait slow; echo WAIT-ENDED; sleep 30",
        flotilla_bin().display(),
        home.path().display()
    );
    let tmux = Tmux::start(
        home.path(),
        home.path(),
        &["sh".into(), "-c".into(), script],
    );
    let mut pane = String::new();
    wait_until("the spinner", Duration::from_secs(20), || {
        pane = tmux.capture();
        pane.contains("waiting for lane slow's result (")
    });
    home.ok(&["lane", "interrupt", "slow"]);
    wait_until("the wait ends", Duration::from_secs(30), || {
        pane = tmux.capture();
        pane.contains("WAIT-ENDED")
    });
    assert!(
        !pane.contains("waiting for lane slow's result"),
        "cleared: {pane}"
    );
}
