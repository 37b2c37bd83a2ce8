//! A home's files under stress (issue 13, §6): a refused second daemon
//! leaves the running one's pid file alone, the store, logs and lane files
//! are private from the moment they exist, a store that vanished is not
//! silently recreated empty, and `doctor` explains a store the daemon
//! cannot open.

use flotilla_tests::TestHome;

fn pid_in(home: &TestHome) -> Option<String> {
    std::fs::read_to_string(home.path().join("run/daemon.pid"))
        .ok()
        .map(|s| s.trim().to_owned())
}

#[test]
fn issue_13_a_refused_second_daemon_leaves_the_pid_file_alone() {
    let mut home = TestHome::new();
    home.spawn_daemon("one");
    let pid = home.daemon_pid().to_string();
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));

    let stderr = home.fails(&["host", "run", "--name", "two"], 6);
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));

    // A cleaner of runtime directories removed the lock file under the
    // running daemon: a second daemon takes a fresh lock, and the store
    // (which only one process may open) refuses it.
    std::fs::remove_file(home.path().join("run/daemon.lock")).expect("rm lock");
    let second = home.run(&["host", "run", "--name", "two"]);
    assert_eq!(
        pid_in(&home).as_deref(),
        Some(pid.as_str()),
        "the running daemon's pid file is intact"
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("open in another process"), "{stderr}");
    assert_eq!(second.status.code(), Some(6), "{stderr}");
    let status = home.json(&["host", "status"]);
    assert_eq!(status["pid"].to_string(), pid, "the first daemon answers");
    let up = home.json(&["up"]);
    assert_eq!(up["started"], false);
    assert_eq!(pid_in(&home).as_deref(), Some(pid.as_str()));
}
