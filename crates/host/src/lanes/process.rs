//! Processes of lanes: each turn runs under a lane shim (`flotilla
//! lane-shim`) that leads its own process group, feeds the prompt from a
//! file to the CLI's stdin, sends output to files and records the exit
//! code. So a turn survives a daemon crash and can be adopted, and a signal
//! to the group reaches every process of the turn.
//!
//! This module holds the OS facts: a process's identity (pid and start
//! time), whether it lives, signalling its group, and the turn's files.

use std::path::{Path, PathBuf};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process};
#[cfg(test)]
use std::os::unix::process::CommandExt;

/// The files of one turn, in `state/lanes/NAME/turn-N/`.
#[derive(Debug, Clone)]
pub struct TurnFiles {
    /// The directory.
    pub dir: PathBuf,
}

impl TurnFiles {
    /// The files of turn `turn` of lane `lane` under the state directory.
    pub fn new(state_dir: &Path, lane: &str, turn: u32) -> Self {
        Self::attempt(state_dir, lane, turn, 0)
    }

    /// The files of a watchdog restart of a turn (`attempt` 0 is the first
    /// run), each in its own directory so output is never read twice.
    pub fn attempt(state_dir: &Path, lane: &str, turn: u32, attempt: u32) -> Self {
        let leaf = match attempt {
            0 => format!("turn-{turn}"),
            n => format!("turn-{turn}.restart-{n}"),
        };
        Self {
            dir: state_dir.join("lanes").join(lane).join(leaf),
        }
    }

    /// The prompt (0600).
    pub fn prompt(&self) -> PathBuf {
        self.dir.join("prompt")
    }

    /// The CLI's stdout.
    pub fn stdout(&self) -> PathBuf {
        self.dir.join("stdout")
    }

    /// The CLI's stderr.
    pub fn stderr(&self) -> PathBuf {
        self.dir.join("stderr")
    }

    /// The exit code, written by the shim when the CLI exits.
    pub fn exit(&self) -> PathBuf {
        self.dir.join("exit")
    }

    /// The recorded exit code, if the CLI has exited.
    pub fn read_exit(&self) -> Option<i32> {
        std::fs::read_to_string(self.exit())
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// The start time of a process in clock ticks since boot (Linux), used with
/// the pid to recognise the same process after a daemon restart.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after
    // the last ')'. starttime is field 22, the 20th after the name.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `pid` is alive (a zombie is not) and, when a start time is known, the same process.
pub fn is_same_process(pid: u32, start: Option<u64>) -> bool {
    let Some(p) = Pid::from_raw(pid as i32) else {
        return false;
    };
    if test_kill_process(p).is_err() || is_zombie(pid) {
        return false;
    }
    match (start, start_time(pid)) {
        (Some(want), Some(got)) => want == got,
        _ => true,
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rfind(')')
                .map(|i| stat[i + 1..].trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// CPU time (user + system, in clock ticks) used so far by `root` and
/// every process below it (Linux; `None` once `root` is gone). Only the
/// turn's own processes are read, through each one's `children` list: no
/// scan of all of `/proc`. Below the shim (a child subreaper) are all of
/// its group and the processes that left it with `setsid`.
pub fn tree_cpu_ticks(root: u32) -> Option<u64> {
    let mut total = cpu_ticks(root)?;
    let mut stack = children(root);
    let mut seen = 0usize;
    while let Some(pid) = stack.pop() {
        // A bound against a tree that changes under the walk.
        seen += 1;
        if seen > 100_000 {
            break;
        }
        total += cpu_ticks(pid).unwrap_or(0);
        stack.extend(children(pid));
    }
    Some(total)
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                list.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// CPU time (user + system, in clock ticks) used so far by `pid`.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Sends `signal` to the process group led by `pid`; false if it is gone.
pub fn signal_group(pid: u32, signal: Signal) -> bool {
    match Pid::from_raw(pid as i32) {
        Some(p) => kill_process_group(p, signal).is_ok(),
        None => false,
    }
}

/// Whether any process of the group led by `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    match Pid::from_raw(pgid as i32) {
        Some(p) => rustix::process::test_kill_process_group(p).is_ok(),
        None => false,
    }
}

/// Whether the group led by `pgid` is alive and still a turn's whose shim
/// started at `start`. Linux never gives a new process a pid still in use
/// as a group id, so once the turn's group has died its number can lead
/// someone else's group: a live process with that pid but another start
/// time, or a member older than the shim, means the group is not ours (a
/// daemon restarting after a reboot or a pid wrap must not stop it).
pub fn group_is_the_turns(pgid: u32, start: Option<u64>) -> bool {
    if !group_alive(pgid) {
        return false;
    }
    let Some(start) = start else {
        return true;
    };
    if start_time(pgid).is_some_and(|s| s != start) {
        return false;
    }
    !group_members(pgid)
        .into_iter()
        .any(|pid| start_time(pid).is_some_and(|s| s < start))
}

/// The processes of group `pgid` (Linux: a scan of `/proc`, for the rare
/// checks at recovery and reaping; empty elsewhere).
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| process_group(*pid) == Some(pgid))
        .collect()
}

/// The process group of `pid`, from `/proc/PID/stat` (Linux).
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Point 2.vii: the CPU time of a turn is read from its own process
    /// tree (not by scanning every process's group), so a child that left
    /// the group with `setsid` and works counts as progress.
    #[test]
    fn the_cpu_time_of_a_turn_includes_every_process_below_its_shim() {
        let mut tree = std::process::Command::new("sh")
            .arg("-c")
            .arg("setsid sh -c 'while :; do :; done' & wait")
            .process_group(0)
            .spawn()
            .expect("sh");
        let root = tree.id();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut ticks = 0;
        while Instant::now() < deadline && ticks < 20 {
            ticks = tree_cpu_ticks(root).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(50));
        }
        let busy: Vec<u32> = children(root);
        for pid in &busy {
            if let Some(p) = rustix::process::Pid::from_raw(*pid as i32) {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        let _ = tree.kill();
        let _ = tree.wait();
        assert!(
            ticks >= 20,
            "the busy child's CPU time counts: {ticks} ticks"
        );
    }

    /// A group whose leader (the shim) has exited but whose member lives is
    /// still the turn's; a live process that only shares the number (a
    /// later start time) leads a group that is not.
    #[test]
    fn a_turns_group_is_recognised_and_a_reused_number_is_not() {
        let mut lead = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 30 >/dev/null 2>&1 & echo started")
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let pgid = lead.id();
        let start = start_time(pgid);
        assert!(start.is_some(), "a start time on Linux");
        let _ = lead.wait();
        assert!(group_alive(pgid), "the sleep keeps the group");
        assert!(
            group_is_the_turns(pgid, start),
            "the orphaned member is the turn's"
        );
        assert!(
            !group_is_the_turns(pgid, start.map(|s| s + 1000)),
            "a member older than the shim is not the turn's"
        );
        signal_group(pgid, Signal::KILL);

        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep");
        let theirs = start_time(other.id()).map(|s| s.saturating_sub(1));
        assert!(
            !group_is_the_turns(other.id(), theirs),
            "a live leader with another start time leads someone else's group"
        );
        let _ = other.kill();
        let _ = other.wait();
    }
}
