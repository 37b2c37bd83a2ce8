//! The README's command blocks, pasted as they are (issue 12): every block
//! marked `<!-- doc-test: NAME -->` runs line by line through `sh`, with
//! `flotilla` on PATH. The everyday block runs on one home; the federation
//! block on three (a hub, a workstation, a laptop, on loopback), each line
//! on the machine its comment names. Only what cannot be pasted across
//! machines is filled in: the hub's port (loopback instead of 0.0.0.0:7700)
//! and the token `hub invite` printed for that host. Every line must
//! succeed.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Output};

use flotilla_tests::federation::PATIENCE;
use flotilla_tests::{TestHome, flotilla_bin, free_udp_port, stop_child, wait_until};

/// The lines of the README block marked `name`.
fn block(name: &str) -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(readme).expect("README.md");
    let marker = format!("<!-- doc-test: {name} -->");
    let after = text.split_once(&marker).expect("the block's marker").1;
    let body = after
        .trim_start()
        .strip_prefix("```sh\n")
        .expect("a sh block after the marker");
    let body = body.split_once("```").expect("the block's end").0;
    body.lines().map(str::to_owned).collect()
}

/// Where a line of the federation block runs: the word its comment
/// starts with.
fn machine(line: &str) -> &str {
    let comment = line.split_once(" # ").map_or("", |(_, c)| c.trim());
    comment.split([':', ' ']).next().unwrap_or_default().trim()
}

/// Runs `line` with `sh` as a user of `home` whose files are in `user`.
fn sh(home: &Path, user: &Path, line: &str) -> Output {
    let bin_dir = flotilla_bin().parent().expect("bin dir").to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .args(["-c", line])
        .current_dir(user)
        .env("PATH", path)
        .env("HOME", user)
        .env("FLOTILLA_HOME", home)
        .env_remove("FLOTILLA_PEER")
        .output()
        .expect("sh")
}

fn must(out: Output, line: &str) -> String {
    assert!(
        out.status.success(),
        "README line failed ({}): {line}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_everyday_block_runs_as_pasted() {
    let home = TestHome::new();
    let user = tempfile::tempdir().expect("user home");
    let lines = block("everyday");
    assert!(lines.len() > 10, "{lines:?}");
    for line in &lines {
        let out = must(sh(home.path(), user.path(), line), line);
        if line.starts_with("flotilla lane wait build") {
            assert!(out.contains("built"), "{out}");
        }
    }
}

#[test]
fn the_federation_block_runs_on_a_hub_and_two_hosts() {
    let homes: HashMap<&str, TestHome> = ["hub", "workstation", "laptop"]
        .into_iter()
        .map(|m| (m, TestHome::new()))
        .collect();
    // One user on every machine (the same `~`), as a user usually is.
    let user = tempfile::tempdir().expect("user home");
    let port = free_udp_port();
    let mut tokens: HashMap<String, String> = HashMap::new();
    let mut hub: Option<Child> = None;
    let mut saw_message = false;
    for raw in block("federation") {
        let at = machine(&raw);
        let home = homes
            .get(at)
            .unwrap_or_else(|| panic!("no machine for {raw:?}"));
        let mut line = raw.replace("0.0.0.0:7700", &format!("127.0.0.1:{port}"));
        if let Some(token) = tokens.get(at) {
            line = line.replace("'flotilla-enroll-v1:...'", &format!("'{token}'"));
        }
        let command = line.split(" # ").next().unwrap_or_default().trim();
        if command.ends_with('&') {
            let args: Vec<&str> = command
                .trim_end_matches('&')
                .split_whitespace()
                .skip(1)
                .collect();
            hub = Some(home.spawn(&args, "hub.log"));
            wait_until("the hub answers", PATIENCE, || {
                home.run(&["hub", "roster"]).status.success()
            });
            continue;
        }
        let out = must(sh(home.path(), user.path(), &line), &raw);
        if let Some(host) = command.strip_prefix("flotilla hub invite ") {
            tokens.insert(host.trim().to_owned(), out.trim().to_owned());
        }
        if command.starts_with("flotilla inbox --as reviewer") {
            saw_message = out.contains("please review");
        }
        if command.starts_with("flotilla lane run --host workstation") {
            assert!(
                out.contains("src/app"),
                "the remote lane ran in ~/src/app: {out}"
            );
        }
    }
    assert!(saw_message, "the reviewer got the laptop's message");
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    if let Some(mut hub) = hub {
        stop_child(&mut hub);
    }
}
