//! The connector actor: one per running CLI process.
//!
//! It starts the turn's lane shim (or adopts one that survived a daemon
//! restart), follows the turn's stdout file, hands each complete line to the
//! CLI's parser and forwards the events to its lane, notices the exit, and
//! signals the process group on interrupt (SIGINT, then SIGTERM and SIGKILL
//! after grace periods). It owns no lane state; the lane actor decides what
//! a turn's end means.

use std::io::{Read, Seek, SeekFrom};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ractor::concurrency::JoinHandle;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use rustix::process::Signal;

use super::cli::{CommandPlan, Outcome, TurnParser};
use super::lane::LaneMsg;
use super::process::{
    TurnFiles, group_alive, is_same_process, signal_group, start_time, tree_cpu_ticks,
};

/// How often output and exit are checked.
const POLL: Duration = Duration::from_millis(40);
/// Most output read in one poll while the process runs.
const READ_CHUNK: u64 = 4 * 1024 * 1024;
/// The process group's CPU time is read every this many polls (~1 s).
const CPU_EVERY: u64 = 25;

/// Messages of a connector.
#[derive(Debug)]
pub enum ConnectorMsg {
    /// Check output and exit.
    Poll,
    /// Stop the process: SIGINT now, escalating after `grace`.
    Interrupt(Duration),
    /// Escalate an interrupt.
    Escalate(Signal, Duration),
}

/// A handle on a connector.
pub type ConnectorRef = ActorRef<ConnectorMsg>;

/// How the connector starts.
#[derive(Debug)]
pub enum Launch {
    /// Follow a shim just started ([`spawn_shim`]) whose pid is on disk:
    /// the connector gives it its go.
    Spawned(tokio::process::Child),
    /// Follow a shim that is already running (after a daemon restart).
    Adopt {
        /// The shim's pid.
        pid: u32,
        /// Its start time, so a new process that reuses the pid is not
        /// taken for it.
        start: Option<u64>,
        /// Bytes of stdout already read.
        offset: u64,
    },
}

/// Arguments of a connector.
#[derive(Debug)]
pub struct ConnectorArgs {
    /// The turn's files.
    pub files: TurnFiles,
    /// Start or adopt.
    pub launch: Launch,
    /// The CLI's parser.
    pub parser: Box<dyn TurnParser>,
    /// The lane to report to.
    pub lane: ActorRef<LaneMsg>,
}

/// The connector actor.
#[derive(Debug)]
pub struct Connector;

/// The connector's state.
#[derive(Debug)]
pub struct ConnectorState {
    files: TurnFiles,
    parser: Box<dyn TurnParser>,
    lane: ActorRef<LaneMsg>,
    /// Set when the shim (our child) has exited; adopted shims are watched
    /// through their pid instead.
    shim_gone: Option<Arc<AtomicBool>>,
    pid: u32,
    /// The adopted shim's start time (pid and start time name it).
    pid_start: Option<u64>,
    offset: u64,
    /// Output before this byte was turned into events before a daemon
    /// restart: it is parsed again (to rebuild the parser's state) but its
    /// events are not sent twice.
    replay_until: u64,
    partial: Vec<u8>,
    ticker: JoinHandle<()>,
    cpu: Option<u64>,
    polls: u64,
    done: bool,
}

#[cfg(test)]
#[path = "connector_tests.rs"]
mod tests;

impl Actor for Connector {
    type Msg = ConnectorMsg;
    type State = ConnectorState;
    type Arguments = ConnectorArgs;

    async fn pre_start(
        &self,
        myself: ConnectorRef,
        args: ConnectorArgs,
    ) -> Result<ConnectorState, ActorProcessingErr> {
        let (child, (pid, pid_start), replay_until) = match args.launch {
            Launch::Spawned(mut child) => {
                let pid = child.id().ok_or("the lane shim exited at once")?;
                // Its pid is on disk: it may run the command now.
                if let Some(mut go) = child.stdin.take() {
                    use tokio::io::AsyncWriteExt;
                    if let Err(e) = go.write_all(b"g").await {
                        tracing::warn!(pid, "the go to the lane shim failed: {e}");
                    }
                }
                // Wake the connector the moment the shim exits, rather than
                // at its next poll.
                let gone = Arc::new(AtomicBool::new(false));
                let (flag, me) = (gone.clone(), myself.clone());
                tokio::spawn(async move {
                    let _ = child.wait().await;
                    flag.store(true, Ordering::SeqCst);
                    let _ = me.cast(ConnectorMsg::Poll);
                });
                (Some(gone), (pid, None), 0)
            }
            Launch::Adopt { pid, start, offset } => (None, (pid, start), offset),
        };
        let ticker = myself.send_interval(POLL, || ConnectorMsg::Poll);
        Ok(ConnectorState {
            files: args.files,
            parser: args.parser,
            lane: args.lane,
            shim_gone: child,
            pid,
            pid_start,
            offset: 0,
            replay_until,
            partial: Vec::new(),
            ticker,
            cpu: None,
            polls: 0,
            done: false,
        })
    }

    async fn post_stop(
        &self,
        _: ConnectorRef,
        state: &mut ConnectorState,
    ) -> Result<(), ActorProcessingErr> {
        state.ticker.abort();
        Ok(())
    }

    async fn handle(
        &self,
        myself: ConnectorRef,
        msg: ConnectorMsg,
        state: &mut ConnectorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ConnectorMsg::Poll => state.poll(&myself)?,
            ConnectorMsg::Interrupt(grace) => {
                signal_group(state.pid, Signal::INT);
                myself.send_after(grace, move || ConnectorMsg::Escalate(Signal::TERM, grace));
            }
            ConnectorMsg::Escalate(sig, grace) => {
                if !state.done && group_alive(state.pid) {
                    tracing::info!(pid = state.pid, signal = ?sig, "escalating the interrupt");
                    signal_group(state.pid, sig);
                    if sig == Signal::KILL {
                        crate::crash_point::pause("lane.killed").await;
                    } else {
                        myself
                            .send_after(grace, move || ConnectorMsg::Escalate(Signal::KILL, grace));
                    }
                }
            }
        }
        Ok(())
    }
}

/// No process outlives its turn: once the shim has exited, whatever is left
/// of its process group (background children of the CLI) gets SIGTERM, and
/// SIGKILL if it lingers.
fn reap_group(pgid: u32) {
    if !group_alive(pgid) {
        return;
    }
    signal_group(pgid, Signal::TERM);
    tokio::spawn(async move {
        for _ in 0..50 {
            if !group_alive(pgid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        signal_group(pgid, Signal::KILL);
    });
}

/// Starts the shim of a turn, gated: it runs nothing before its go, which
/// the connector of [`Launch::Spawned`] gives; dropped before that, it
/// exits without running anything.
pub(crate) fn spawn_shim(
    files: &TurnFiles,
    plan: &CommandPlan,
    cwd: &std::path::Path,
    env: &[(String, String)],
    env_remove: &[&'static str],
) -> std::io::Result<tokio::process::Child> {
    if let Some(home) = &plan.cli_home
        && let Some(warning) = super::cli_home::prepare(home)?
    {
        tracing::warn!("{warning}");
    }
    let mut cmd = shim_command()?;
    for name in env_remove {
        cmd.env_remove(name);
    }
    cmd.arg("--gated").arg("--dir").arg(&files.dir);
    if plan.stdin_prompt {
        cmd.arg("--stdin-prompt");
    }
    cmd.arg("--").args(&plan.argv);
    cmd.current_dir(cwd)
        .env("PWD", cwd)
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(false)
        .spawn()
}

/// The shim: `flotilla-lane-shim` next to this program when it is there (a
/// small program, quick to start), else this program's `lane-shim`.
fn shim_command() -> std::io::Result<tokio::process::Command> {
    let exe = std::env::current_exe()?;
    let small = exe.with_file_name(SHIM_PROGRAM);
    Ok(if small.is_file() {
        tokio::process::Command::new(small)
    } else {
        let mut cmd = tokio::process::Command::new(exe);
        cmd.arg("lane-shim");
        cmd
    })
}

/// The lane shim's own program, installed beside `flotilla`.
pub const SHIM_PROGRAM: &str = "flotilla-lane-shim";

/// Writes a file of the plan, readable by the owner only.
pub(crate) fn write_private(path: &std::path::Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

impl ConnectorState {
    fn poll(&mut self, myself: &ConnectorRef) -> Result<(), ActorProcessingErr> {
        if self.done {
            return Ok(());
        }
        let exited = self.exited();
        let kinds = self.read_lines(exited)?;
        if !kinds.is_empty() {
            let consumed = self.offset - self.partial.len() as u64;
            let _ = self.lane.cast(LaneMsg::Events {
                kinds,
                offset: consumed,
            });
        }
        self.polls += 1;
        if self.polls.is_multiple_of(CPU_EVERY) {
            let cpu = tree_cpu_ticks(self.pid);
            if cpu != self.cpu {
                self.cpu = cpu;
                let _ = self.lane.cast(LaneMsg::Progress);
            }
        }
        if exited {
            self.done = true;
            // A pid that now names another process: the turn's group is
            // gone (Linux never reuses a pid still in use as a group id),
            // and that process's own group is not ours to stop.
            let reused = self.shim_gone.is_none()
                && self.pid_start.is_some()
                && start_time(self.pid).is_some_and(|s| Some(s) != self.pid_start);
            if !reused {
                reap_group(self.pid);
            }
            let exit = self.files.read_exit();
            let stderr = std::fs::read_to_string(self.files.stderr()).unwrap_or_default();
            let outcome: Outcome = self
                .parser
                .finish(exit, &super::cli::tail(&stderr, 16 * 1024));
            let _ = self.lane.cast(LaneMsg::Exited { outcome, exit });
            myself.stop(None);
        }
        Ok(())
    }

    fn exited(&mut self) -> bool {
        if self.files.read_exit().is_some() {
            return true;
        }
        match &self.shim_gone {
            Some(gone) => gone.load(Ordering::SeqCst),
            None => !is_same_process(self.pid, self.pid_start),
        }
    }

    /// Reads new complete lines of stdout (and the last partial line once
    /// the process has exited) and parses them.
    fn read_lines(
        &mut self,
        final_read: bool,
    ) -> std::io::Result<Vec<flotilla_actors::lane::events::EventKind>> {
        let mut file = match std::fs::File::open(self.files.stdout()) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut kinds = Vec::new();
        // While the process runs, a chunk per poll; once it has exited,
        // everything to the end, so the last line is never cut short.
        loop {
            file.seek(SeekFrom::Start(self.offset))?;
            let mut buf = Vec::new();
            file.by_ref().take(READ_CHUNK).read_to_end(&mut buf)?;
            let more = buf.len() as u64 == READ_CHUNK;
            self.offset += buf.len() as u64;
            self.partial.extend_from_slice(&buf);
            self.parse_complete_lines(&mut kinds);
            if !(final_read && more) {
                break;
            }
        }
        if final_read && !self.partial.is_empty() {
            let text = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
            kinds.extend(self.parser.line(&text));
        }
        Ok(kinds)
    }

    /// Hands every complete line of `partial` to the parser.
    fn parse_complete_lines(&mut self, kinds: &mut Vec<flotilla_actors::lane::events::EventKind>) {
        let mut consumed = self.offset - self.partial.len() as u64;
        while let Some(i) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=i).collect();
            consumed += line.len() as u64;
            let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            let parsed = self.parser.line(text.trim_end_matches('\r'));
            if consumed > self.replay_until {
                kinds.extend(parsed);
            }
        }
    }
}
