//! Human tables: they fit the terminal (tmux at 60 columns), are styled
//! only on a terminal, never with `NO_COLOR`, and reach a pipe unstyled
//! and unwrapped.

use std::process::Command;
use std::time::Duration;

use flotilla_tests::{TestHome, flotilla_bin};

/// Runs `flotilla roster` in a 60-column tmux pane (with `extra_env`) and
/// returns the pane with its escape sequences, once the output is there.
fn roster_in_tmux(home: &TestHome, extra_env: &str) -> String {
    in_tmux(home, extra_env, "roster", &["peer(s)", "active"])
}

/// Runs `flotilla ARGS` in a 60-column tmux pane (with `extra_env`) and
/// returns the pane with its escape sequences, once it shows every one of
/// `until`.
fn in_tmux(home: &TestHome, extra_env: &str, args: &str, until: &[&str]) -> String {
    let socket = home
        .path()
        .join(format!("tmux-{}-{}.sock", extra_env.len(), args.len()));
    let script = format!(
        "{extra_env} '{}' --home '{}' {args}; sleep 30",
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
    while !until.iter().all(|u| pane.contains(u)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the pane never showed {until:?}: {pane:?}"
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

#[test]
fn lanes_the_outbox_and_the_host_status_are_tables_that_fit_too() {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "a-sender-with-a-long-name", "-g", "t"]);
    home.ok(&["peer", "join", "a-reader-with-a-long-name", "-g", "t"]);
    home.ok(&[
        "send",
        "--as",
        "a-sender-with-a-long-name",
        "--to",
        "a-reader-with-a-long-name",
        "--summary",
        "a summary long enough to wrap in a narrow terminal pane",
        "hello",
    ]);
    home.ok(&[
        "lane",
        "run",
        "-n",
        "a-lane-with-a-long-name",
        "--cli",
        "exec",
        "--prompt",
        "x",
        "--",
        "true",
    ]);
    let cases: [(&str, &[&str]); 3] = [
        ("lane list", &["LANE", "CLI", "exec", "idle"]),
        ("outbox --as a-sender-with-a-long-name", &["SEQ", "#1"]),
        ("host status", &["ACTOR", "registry", "hub none"]),
    ];
    for (args, until) in cases {
        let pane = in_tmux(&home, "", args, until);
        for line in pane.lines() {
            assert!(visible(line) <= 60, "{args} fits 60 columns: {line:?}");
        }
        let piped = home.ok(&args.split(' ').collect::<Vec<_>>());
        assert!(!piped.contains('\u{1b}'), "{args}: no escapes into a pipe");
    }
}
