//! Human tables: they fit the terminal (tmux at 60 columns), are styled
//! only on a terminal, never with `NO_COLOR`, and reach a pipe unstyled
//! and unwrapped.

use std::process::Command;
use std::time::Duration;

use flotilla_tests::{TestHome, flotilla_bin};

/// Runs `flotilla roster` in a 60-column tmux pane (with `extra_env`) and
/// returns the pane with its escape sequences, once the output is there.
fn roster_in_tmux(home: &TestHome, extra_env: &str) -> String {
    let socket = home.path().join(format!("tmux-{}.sock", extra_env.len()));
    let script = format!(
        "{extra_env} '{}' --home '{}' roster; sleep 30",
        flotilla_bin().display(),
        home.path().display()
    );
    let started = Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args([
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "60",
            "-y",
            "30",
            "sh",
            "-c",
            &script,
        ])
        .status()
        .expect("tmux");
    assert!(started.success());
    let capture = || {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["capture-pane", "-p", "-e", "-t", "t"])
            .output()
            .expect("capture");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut pane = capture();
    while !(pane.contains("peer(s)") && pane.contains("active")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the roster never showed: {pane:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
        pane = capture();
    }
    let _ = Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
    pane
}

fn visible(line: &str) -> usize {
    let mut n = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

#[test]
fn tables_fit_the_terminal_and_are_styled_only_there_and_never_with_no_color() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&[
        "peer",
        "join",
        "a-peer-with-a-rather-long-name",
        "-g",
        "a-group-with-a-long-name",
    ]);
    let piped = home.ok(&["roster"]);
    assert!(
        !piped.contains('\u{1b}'),
        "no escapes into a pipe: {piped:?}"
    );
    assert!(
        piped
            .lines()
            .any(|l| l.contains("h/a-peer-with-a-rather-long-name") && l.len() > 60),
        "a pipe gets whole rows: {piped}"
    );

    let pane = roster_in_tmux(&home, "");
    assert!(
        pane.contains("\u{1b}[1m"),
        "a bold header on a terminal: {pane:?}"
    );
    for line in pane.lines() {
        assert!(visible(line) <= 60, "fits 60 columns: {line:?}");
    }
    let plain = roster_in_tmux(&home, "NO_COLOR=1");
    assert!(!plain.contains("\u{1b}[1m"), "NO_COLOR: {plain:?}");
}
