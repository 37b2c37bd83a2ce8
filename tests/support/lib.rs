//! Test support shared by every end-to-end test: the real `flotilla` binary,
//! throwaway homes with their daemons, a raw JSON-lines client for the
//! control socket, bounded waiting on conditions (never fixed sleeps), a
//! scripted model server, throwaway environments for the vendor CLIs and
//! network namespaces.

pub mod federation;
pub mod mcp;
pub mod model_server;
pub mod netns;
pub mod raw;
pub mod session;
pub mod vendor;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `flotilla` binary: `FLOTILLA_BIN`, else built once by cargo into this
/// workspace's target directory, with `flotilla-lane-shim` beside it.
pub fn flotilla_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("FLOTILLA_BIN") {
            return PathBuf::from(bin);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let exe = std::env::current_exe().expect("current exe");
        // target/<profile>/deps/e2e-HASH -> target/<profile>/flotilla
        let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "-p",
            "flotilla-cli",
            "--bin",
            "flotilla",
            // The lane shim the daemon starts beside it.
            "--bin",
            "flotilla-lane-shim",
        ]);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        assert!(
            build.status().expect("run cargo build").success(),
            "building flotilla failed"
        );
        profile_dir.join("flotilla")
    })
    .clone()
}

/// Writes `text` to `path` as an executable script (a fake CLI, say).
pub fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write the script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod 755");
}

/// Waits until `cond` holds, checking every few milliseconds, for at most
/// `timeout`; panics with `what` otherwise.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// Whether any process has `needle` in its command line (Linux /proc).
pub fn process_running(needle: &str) -> bool {
    process_running_except(needle, None)
}

/// Like [`process_running`], leaving out processes whose command line
/// also holds `except`.
pub fn process_running_except(needle: &str, except: Option<&str>) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let line = String::from_utf8_lossy(&c).replace('\0', " ");
                line.contains(needle) && except.is_none_or(|x| !line.contains(x))
            })
        })
}

/// Runs `cmd` to completion with `input` on its stdin (written from a
/// thread, so a command that does not read it cannot block the test).
pub fn output_with_stdin(mut cmd: Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    out
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free UDP port")
        .port()
}

/// Sends SIGTERM to `child` and waits (at most 30 s) for it to exit.
pub fn stop_child(child: &mut Child) -> std::process::ExitStatus {
    signal_child(child, "TERM")
}

/// Sends SIG`signal` to process `pid` (`STOP`, `CONT`...), without
/// waiting for anything.
pub fn signal(pid: impl std::fmt::Display, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// Sends SIG`signal` to `child` and waits (at most 30 s) for it to exit.
pub fn signal_child(child: &mut Child, signal: &str) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "process did not exit after SIG{signal}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A throwaway home, and the daemon run on it.
#[derive(Debug)]
pub struct TestHome {
    dir: tempfile::TempDir,
    /// A daemon started in the foreground by [`TestHome::spawn_daemon`].
    pub daemon: Option<Child>,
    /// Extra environment for every command.
    pub env: Vec<(String, String)>,
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHome {
    /// A new, empty home.
    pub fn new() -> Self {
        Self {
            dir: tempfile::Builder::new()
                .prefix("fl-")
                .tempdir()
                .expect("tempdir"),
            daemon: None,
            // Git needs an identity for the commits the daemon makes as a
            // person (a merge); a fresh CI machine may have none configured.
            env: [
                ("FLOTILLA_TEST_HOOKS", "1"),
                ("GIT_AUTHOR_NAME", "Flotilla Test"),
                ("GIT_AUTHOR_EMAIL", "test@flotilla.invalid"),
                ("GIT_COMMITTER_NAME", "Flotilla Test"),
                ("GIT_COMMITTER_EMAIL", "test@flotilla.invalid"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .to_vec(),
        }
    }

    /// The home directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A `flotilla --home HOME ARGS...` command, ready to run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(flotilla_bin());
        cmd.arg("--home").arg(self.path()).args(args);
        cmd.env_remove("FLOTILLA_HOME");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `flotilla --home HOME REST`: a command as this home's hints name it.
    pub fn flotilla_cmd(&self, rest: &str) -> String {
        format!("flotilla --home {} {rest}", self.path().display())
    }

    /// Runs a command to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run flotilla")
    }

    /// Runs a command with `input` on stdin.
    pub fn run_with_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        output_with_stdin(self.command(args), input)
    }

    /// Runs a command that must succeed; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "flotilla {args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    /// Runs a command with `--json` that must succeed; returns the document.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).expect("JSON output")
    }

    /// Runs a command that must fail with `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "flotilla {args:?}: stderr was\n{stderr}"
        );
        stderr
    }

    /// Starts `flotilla host run` in the foreground (as a service manager
    /// would) and waits until it answers.
    pub fn spawn_daemon(&mut self, name: &str) {
        let log = std::fs::File::create(self.path().join("daemon-test.stderr")).expect("log");
        let child = self
            .command(&["host", "run", "--name", name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn daemon");
        self.daemon = Some(child);
        self.wait_answering();
    }

    /// Starts `flotilla --home HOME ARGS...` in the background (a hub, say),
    /// its stderr in `HOME/LOG`; the caller stops it ([`stop_child`]).
    pub fn spawn(&self, args: &[&str], log: &str) -> Child {
        let log = std::fs::File::create(self.path().join(log)).expect("log");
        self.command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn flotilla")
    }

    /// Writes `config.toml`.
    pub fn write_config(&self, text: &str) {
        std::fs::write(self.path().join("config.toml"), text).expect("write config.toml");
    }

    /// Waits until the daemon answers `host status`.
    pub fn wait_answering(&self) {
        wait_until("the daemon to answer", Duration::from_secs(20), || {
            self.run(&["host", "status"]).status.success()
        });
    }

    /// The foreground daemon's pid.
    pub fn daemon_pid(&self) -> i32 {
        self.daemon.as_ref().expect("daemon running").id() as i32
    }

    /// Sends a signal to the foreground daemon and waits for it to exit;
    /// returns its exit status.
    pub fn signal_daemon(&mut self, signal: &str) -> std::process::ExitStatus {
        let mut child = self.daemon.take().expect("daemon running");
        signal_child(&mut child, signal)
    }

    /// `kill -9` of the foreground daemon, at once; waits for it to be gone.
    pub fn kill_daemon(&mut self) {
        let mut child = self.daemon.take().expect("daemon running");
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), None, "killed by a signal");
    }

    /// A raw client on this home's control socket.
    pub fn raw(&self) -> raw::RawClient {
        raw::RawClient::connect(&self.socket_path())
    }

    /// The control socket of this home.
    pub fn socket_path(&self) -> PathBuf {
        self.path().join("run/control.sock")
    }
}

impl Drop for TestHome {
    fn drop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // A daemon the test started itself (`up`, after its own one went
        // `down`) is this home's too.
        if self.socket_path().exists() {
            let _ = self
                .command(&["down"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}
