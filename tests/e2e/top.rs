//! `flotilla top` in a real terminal (a tmux pane, driven with `send-keys`
//! and read with `capture-pane`): it shows the peers and lanes, `g`
//! filters by group, `f` follows a lane, `i` and `a` ask before they
//! interrupt or archive, `q` leaves the terminal as it found it; with no
//! daemon it says so and keeps trying; without a terminal or with
//! `--json` it refuses.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use flotilla_tests::{TestHome, flotilla_bin};

/// A detached tmux server with one pane running a shell script.
struct Pane {
    socket: PathBuf,
}

impl Pane {
    /// Runs `script` in a 120x40 pane.
    fn start(home: &TestHome, name: &str, script: &str) -> Self {
        let socket = home.path().join(format!("tmux-{name}.sock"));
        let started = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["new-session", "-d", "-s", "t", "-x", "120", "-y", "40"])
            .args(["sh", "-c", script])
            .status()
            .expect("tmux");
        assert!(started.success(), "tmux new-session");
        Self { socket }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's text, with its escape sequences when `escapes`.
    fn capture(&self, escapes: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", "t"];
        if escapes {
            args.push("-e");
        }
        self.tmux(&args)
    }

    /// Types keys (tmux key names: `Tab`, `Enter`, or plain characters).
    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Waits (at most 20 s) until the pane satisfies `cond`; returns it.
    fn wait(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        for _ in 0..400 {
            let pane = self.capture(false);
            if cond(&pane) {
                return pane;
            }
            assert!(Instant::now() < deadline, "{what}; the pane:\n{pane}");
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{what}: gave up after 400 looks at the pane");
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// A line of the pane holding every one of `words`.
fn row_with(pane: &str, words: &[&str]) -> bool {
    pane.lines().any(|l| words.iter().all(|w| l.contains(w)))
}

/// Runs `top` and then tells how it ended and how the terminal was left
/// (`stty` prints `icanon`/`-icanon` and `echo`/`-echo`).
fn top_script(home: &TestHome, env: &str) -> String {
    format!(
        "{env} '{}' --home '{}' top; echo TOP-EXITED-$?; \
         stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo; sleep 30",
        flotilla_bin().display(),
        home.path().display()
    )
}

fn lane_phase(home: &TestHome) -> (String, String) {
    let v = home.json(&["lane", "status", "worker"]);
    let text = |k: &str| v[k].as_str().unwrap_or("-").to_owned();
    (text("phase"), text("last_status"))
}

#[test]
fn top_shows_peers_and_lanes_filters_follows_interrupts_and_archives_on_yes_and_restores_the_terminal()
 {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "alpha", "-g", "red"]);
    home.ok(&["peer", "join", "beta", "-g", "blue"]);
    home.ok(&[
        "lane", "start", "--cli", "exec", "-n", "worker", "-g", "red", "--", "sleep", "120",
    ]);
    let pane = Pane::start(&home, "top", &top_script(&home, ""));
    pane.wait("top shows both peers and the running lane", |p| {
        p.contains("h/alpha")
            && p.contains("h/beta")
            && row_with(p, &["h/worker", "exec", "running"])
    });
    let styled = pane.capture(true);
    assert!(
        ["\u{1b}[32mrunning", "\u{1b}[38;5;2mrunning"]
            .iter()
            .any(|green| styled.contains(green)),
        "a running lane is green on a terminal: {styled:?}"
    );

    pane.send(&["g"]);
    pane.wait("g filters on the first group, blue", |p| {
        p.contains("group: blue") && p.contains("h/beta") && !p.contains("h/alpha")
    });
    pane.send(&["g"]);
    pane.wait("g again filters on red", |p| {
        p.contains("group: red")
            && p.contains("h/alpha")
            && !p.contains("h/beta")
            && row_with(p, &["h/worker", "running"])
    });

    pane.send(&["Tab", "Tab", "f"]);
    pane.wait("f follows the lane's events", |p| {
        p.contains("events of worker") && p.contains("turn.started")
    });
    pane.send(&["i"]);
    pane.wait("i asks first", |p| p.contains("interrupt lane worker? y/n"));
    assert_eq!(
        lane_phase(&home).0,
        "running",
        "nothing happens before the answer"
    );
    pane.send(&["y"]);
    pane.wait("the lane's row turns idle", |p| {
        row_with(p, &["h/worker", "idle", "turn.completed interrupted"])
    });
    assert_eq!(
        lane_phase(&home),
        ("idle".to_owned(), "interrupted".to_owned())
    );

    pane.wait("the followed events show the end of the turn", |p| {
        p.lines()
            .any(|l| l.contains("turn.completed interrupted exit"))
    });

    pane.send(&["Escape"]);
    pane.wait("Esc stops following", |p| !p.contains("events of worker"));
    pane.send(&["a"]);
    pane.wait("a asks first", |p| p.contains("archive lane worker? y/n"));
    assert_eq!(lane_phase(&home).0, "idle", "nothing before the answer");
    pane.send(&["y"]);
    pane.wait("the archived lane leaves the lanes panel", |p| {
        p.contains("archived h/worker") && !row_with(p, &["h/worker", "exec"])
    });
    assert_eq!(lane_phase(&home).0, "archived");

    pane.send(&["q"]);
    let after = pane.wait("q ends top", |p| {
        p.contains("TOP-EXITED-0") && p.contains("echo")
    });
    assert!(
        !after.contains("q quit") && !after.contains("h/alpha"),
        "the alternate screen is left: {after}"
    );
    let modes: Vec<&str> = after.lines().map(str::trim).collect();
    assert!(
        modes.contains(&"icanon") && modes.contains(&"echo"),
        "raw mode is off again: {after}"
    );
}

#[test]
fn top_says_the_daemon_is_down_keeps_trying_and_respects_no_color() {
    let mut home = TestHome::new();
    let pane = Pane::start(&home, "down", &top_script(&home, "NO_COLOR=1"));
    let socket = home.socket_path().display().to_string();
    pane.wait("top explains that the daemon is not reachable", |p| {
        p.contains(&format!("daemon not reachable at {socket}")) && p.contains("flotilla up")
    });
    home.spawn_daemon("h");
    home.ok(&["peer", "join", "late", "-g", "red"]);
    let p = pane.wait("top finds the daemon once it runs", |p| {
        p.contains("h/late") && !p.contains("daemon not reachable")
    });
    assert!(p.contains("group: all"), "{p}");
    let raw = pane.capture(true);
    for escape in ["\u{1b}[1m", "\u{1b}[3", "\u{1b}[7m"] {
        assert!(!raw.contains(escape), "NO_COLOR: {escape:?} in {raw:?}");
    }
    assert!(raw.contains("> h"), "the selection is still marked: {raw}");
    pane.send(&["q"]);
    pane.wait("q ends top", |p| p.contains("TOP-EXITED-0"));
}

#[test]
fn top_refuses_a_pipe_and_json_and_has_its_manual_page() {
    let home = TestHome::new();
    let man = home.path().join("man");
    home.ok(&["man", "--out", man.to_str().expect("utf-8 path")]);
    let page = std::fs::read_to_string(man.join("flotilla-top.1")).expect("flotilla-top.1");
    assert!(
        page.contains("\\-\\-all") || page.contains("--all"),
        "{page}"
    );
    let stderr = home.fails(&["top"], 2);
    assert!(
        stderr.contains("needs a terminal") && stderr.contains(&home.flotilla_cmd("roster --json")),
        "{stderr}"
    );
    let out = home.run(&["--json", "top"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON envelope");
    assert_eq!(v["error"]["code"], "usage");
    assert!(
        v["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("roster --json")),
        "{v}"
    );
}

#[test]
fn top_all_adds_the_federations_hosts_and_their_peers() {
    let (_hub, _server, laptop, _work) = crate::federation::two_hosts("");
    let script = format!(
        "'{bin}' --home '{home}' top; '{bin}' --home '{home}' top --all; sleep 30",
        bin = flotilla_bin().display(),
        home = laptop.path().display()
    );
    let pane = Pane::start(&laptop, "all", &script);
    let p = pane.wait("top shows this host, linked", |p| {
        p.contains("laptop/lead") && row_with(p, &["laptop", "connected", " ms"])
    });
    assert!(
        !p.contains("work/builder") && !row_with(&p, &["work", "online"]),
        "without --all, this host only: {p}"
    );
    pane.send(&["q"]);
    pane.wait("top --all shows the other host and its peer", |p| {
        p.contains("work/builder") && row_with(p, &["work", "online"])
    });
    pane.send(&["q"]);
}
