//! Issue 13, point 9, chaos: the daemon's store on a tiny tmpfs that fills
//! up. The daemon runs in a mount namespace of its own (made by the test
//! with `unshare`, so nothing outside it sees the mount) with `state/` on
//! a 4 MiB tmpfs; its socket and logs stay on the ordinary disk, where
//! the test's commands reach them. A send that no longer fits gets a
//! clear error, every acknowledged message can still be read, and the
//! daemon keeps serving reads.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flotilla_tests::{TestHome, flotilla_bin, stop_child, wait_until};
use serde_json::Value;

/// `flotilla host run` inside a private mount namespace with `state/` on
/// a tmpfs of `size`.
fn daemon_on_tmpfs(home: &TestHome, size: &str) -> Child {
    let log = std::fs::File::create(home.path().join("daemon-test.stderr")).expect("log");
    std::fs::create_dir_all(home.path().join("state")).expect("state dir");
    let script = format!(
        "mount -t tmpfs -o size={size},mode=0700 flotilla-test \"$1/state\" && \
         head -c 1048576 /dev/zero > \"$1/state/filler\" && \
         exec \"$2\" --home \"$1\" host run --name h"
    );
    let child = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(home.path())
        .arg(flotilla_bin())
        .env("FLOTILLA_TEST_HOOKS", "1")
        .env_remove("FLOTILLA_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("unshare (util-linux) runs the daemon in a mount namespace");
    home.wait_answering();
    child
}

fn peek(home: &TestHome) -> Vec<String> {
    let out = home.json(&["inbox", "--as", "b", "--peek", "--limit", "1000"]);
    out["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_full_disk_refuses_sends_clearly_loses_nothing_acknowledged_and_keeps_serving_reads() {
    let home = TestHome::new();
    let mut daemon = daemon_on_tmpfs(&home, "4m");
    home.ok(&["peer", "join", "a", "-g", "g"]);
    home.ok(&["peer", "join", "b", "-g", "g"]);
    let body = vec![b'x'; 256 * 1024];
    let mut acked = Vec::new();
    let mut refusal = None;
    for i in 0..64 {
        let id = format!("m{i}");
        let out = home.run_with_stdin(&["send", "--as", "a", "--to", "b", "--id", &id, "-"], &body);
        if out.status.success() {
            acked.push(id);
        } else {
            refusal = Some(out);
            break;
        }
    }
    let refusal = refusal.expect("a 4 MiB store fills before 16 MiB of messages");
    let stderr = String::from_utf8_lossy(&refusal.stderr);
    eprintln!("refused with {:?}: {stderr}", refusal.status.code());
    assert!(!acked.is_empty(), "some messages fit");
    assert_eq!(refusal.status.code(), Some(1), "the disk failed: {stderr}");
    assert!(
        stderr.contains("the disk holding the store is full") && stderr.contains("free space"),
        "the error says the disk is full: {stderr}"
    );
    let status: Value = home.json(&["host", "status"]);
    assert_eq!(status["host"], "h", "the daemon still answers: {status}");
    assert_eq!(peek(&home), acked, "every acknowledged message is readable");
    // Space comes back (the filler put there beside the store goes): the
    // daemon takes messages again, without a restart.
    let freed = Command::new("nsenter")
        .args(["-t", &daemon.id().to_string(), "-m", "rm"])
        .arg(home.path().join("state/filler"))
        .status()
        .expect("nsenter");
    assert!(freed.success(), "the filler is removed");
    home.ok(&["inbox", "--as", "b", "--limit", "1000"]);
    home.ok(&[
        "send",
        "--as",
        "a",
        "--to",
        "b",
        "--id",
        "after",
        "space again",
    ]);
    assert_eq!(peek(&home), ["after"]);
    stop_child(&mut daemon);
    wait_until("the daemon to stop", Duration::from_secs(20), || {
        !home.run(&["host", "status"]).status.success()
    });
}
