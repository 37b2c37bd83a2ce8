//! Running a CLI to completion with a bound on time: its own process group
//! (killed afterwards, so nothing it left behind survives the test), stdin
//! closed, stdout and stderr collected.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

/// How long to wait for the output pipes once the process group is gone.
const DRAIN: Duration = Duration::from_secs(10);

/// What a bounded run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// The exit status; `None` if the run hit its timeout and was killed.
    pub status: Option<ExitStatus>,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    /// From spawn to exit (or to the timeout).
    pub elapsed: Duration,
}

impl RunOutput {
    /// Whether the process exited 0 in time.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Status, time and both outputs, for assertion messages.
    pub fn describe(&self) -> String {
        let status = match self.status {
            Some(s) => s.to_string(),
            None => "timed out, killed".to_owned(),
        };
        format!(
            "{status} after {:.1?}\n--- stdout\n{}\n--- stderr\n{}",
            self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` in a process group of its own with stdin closed, for at most
/// `timeout`; then kills the whole group (whatever the CLI left running).
pub fn run_bounded(mut cmd: Command, timeout: Duration) -> RunOutput {
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", cmd.get_program()));
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx.recv_timeout(timeout).ok();
    let elapsed = started.elapsed();
    kill_group(pid);
    let status = match status {
        Some(done) => Some(done.expect("wait for the CLI")),
        None => {
            // Killed: reap it so no zombie stays behind.
            let _ = rx.recv_timeout(DRAIN);
            None
        }
    };
    RunOutput {
        status,
        stdout: collect(&stdout),
        stderr: collect(&stderr),
        elapsed,
    }
}

fn kill_group(pid: u32) {
    let pid = i32::try_from(pid).ok().and_then(Pid::from_raw);
    if let Some(pid) = pid {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

fn collect(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(DRAIN)
        .unwrap_or_else(|_| "<output still open: a process escaped the group>".to_owned())
}
