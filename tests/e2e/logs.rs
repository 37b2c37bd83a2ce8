//! `flotilla logs`: the daemon's log without a daemon to ask: its last
//! lines, as JSON, followed as it grows, and a clear error where no daemon
//! ever ran. `RUST_LOG` sets the level when `FLOTILLA_LOG` does not.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};

#[test]
fn logs_prints_follows_and_says_when_there_is_none() {
    let mut home = TestHome::new();
    let none = home.fails(&["logs"], 4);
    assert!(
        none.contains("no log at") && none.contains(&home.flotilla_cmd("up")),
        "{none}"
    );

    home.env.push(("RUST_LOG".into(), "debug".into()));
    home.spawn_daemon("h");
    let log = home.path().join("logs/daemon.log");
    wait_until("a debug line", Duration::from_secs(20), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("DEBUG"))
    });
    let last = home.ok(&["logs", "-n", "3"]);
    assert_eq!(last.lines().count(), 3, "{last}");
    let json = home.json(&["logs", "-n", "2"]);
    assert_eq!(json["schema"], "flotilla.logs.v1");
    assert_eq!(json["lines"].as_array().map(Vec::len), Some(2), "{json}");

    let mut follower = home
        .command(&["logs", "-n", "1", "-f"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn logs -f");
    let mut out = BufReader::new(follower.stdout.take().expect("stdout"));
    let mut first = String::new();
    out.read_line(&mut first).expect("the last line");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .expect("log");
    writeln!(file, "FOLLOW-MARK appended").expect("append");
    let mut next = String::new();
    for _ in 0..10_000 {
        next.clear();
        out.read_line(&mut next).expect("a followed line");
        if next.contains("FOLLOW-MARK") || next.is_empty() {
            break;
        }
    }
    let _ = follower.kill();
    let _ = follower.wait();
    assert!(next.contains("FOLLOW-MARK"), "followed: {next:?}");
}

#[test]
fn verbose_and_quiet_set_what_a_started_daemon_logs_and_what_the_command_says() {
    let home = TestHome::new();
    home.ok(&["-v", "up", "--name", "h"]);
    let log = home.path().join("logs/daemon.log");
    wait_until("a debug line", Duration::from_secs(20), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("DEBUG"))
    });
    let out = home.run(&["lane", "run", "--cli", "exec", "--", "echo", "hi"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("completed"),
        "a summary on stderr"
    );
    let out = home.run(&["-q", "lane", "run", "--cli", "exec", "--", "echo", "hi"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "-q: nothing on stderr"
    );
    home.ok(&["down"]);

    std::fs::remove_file(&log).expect("a fresh log");
    home.ok(&["-q", "up", "--name", "h"]);
    home.fails(&["peers", "--as", "nobody"], 4);
    home.ok(&["down"]);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !text.contains("INFO") && !text.contains("DEBUG"),
        "-q: warnings only:\n{text}"
    );
}
