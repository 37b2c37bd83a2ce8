//! The lane shim's part of "no process outlives its lane": on Linux the
//! shim is a child subreaper, so every descendant whose parent exits is
//! re-parented to the shim instead of init, including one that left the
//! turn's process group with `setsid` (which a signal to the group never
//! reaches). When the CLI has exited, the shim ends every descendant still
//! there; when it is told to terminate, it ends at once those outside the
//! turn's group (the group itself gets the daemon's signals). On macOS there
//! is no subreaper: a process that escapes with `setsid` there can outlive
//! its lane (docs/lanes.md says so).
//!
//! Reads `/proc`; must not touch the turn's files.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

/// How long descendants get to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_millis(500);

/// Makes this process a child subreaper (Linux; elsewhere nothing).
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    match rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        Ok(()) => SUBREAPER.store(true, std::sync::atomic::Ordering::Release),
        Err(e) => tracing::debug!("cannot become a child subreaper: {e}"),
    }
}

/// Whether [`become_subreaper`] took.
#[cfg(target_os = "linux")]
static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process, a child subreaper, has no child at all (none
/// alive, none unreaped), so no descendant either: a descendant whose
/// parent died was handed to this process, so every living descendant has
/// a living child of this process above it. One system call instead of a
/// walk over every process (most turns leave nothing behind).
#[cfg(target_os = "linux")]
pub(crate) fn childless() -> bool {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    SUBREAPER.load(std::sync::atomic::Ordering::Acquire)
        && matches!(waitid(WaitId::All, options), Err(rustix::io::Errno::CHILD))
}

/// Elsewhere there is no child subreaper: always walk.
#[cfg(not(target_os = "linux"))]
pub(crate) fn childless() -> bool {
    false
}

/// `(pid, parent, process group)` of every process, from `/proc`.
fn processes() -> Vec<(u32, u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let rest = stat.get(stat.rfind(')')? + 2..)?;
            let mut fields = rest.split_whitespace().skip(1);
            let ppid = fields.next()?.parse().ok()?;
            let pgrp = fields.next()?.parse().ok()?;
            Some((pid, ppid, pgrp))
        })
        .collect()
}

/// The descendants of `root` as `(pid, process group)`.
pub(crate) fn descendants(root: u32) -> Vec<(u32, u32)> {
    let all = processes();
    let mut children: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    for (pid, ppid, pgrp) in all {
        children.entry(ppid).or_default().push((pid, pgrp));
    }
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(parent) = todo.pop() {
        for &(pid, pgrp) in children.get(&parent).into_iter().flatten() {
            if seen.insert(pid) {
                out.push((pid, pgrp));
                todo.push(pid);
            }
        }
    }
    out
}

fn signal_all(pids: &[u32], signal: Signal) {
    for &pid in pids {
        if let Some(p) = Pid::from_raw(pid as i32) {
            let _ = kill_process(p, signal);
        }
    }
}

/// Reaps exited children (re-parented orphans become ours to reap).
fn reap() {
    while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
}

/// Ends the descendants of this process: those outside `group` only, or
/// all of them; SIGTERM, then SIGKILL for any left after a short grace.
/// Exited children are reaped only when all are ended (the CLI has been
/// waited for by then; before, its status must stay for the shim).
pub(crate) fn end_descendants(outside_group: Option<u32>) {
    let me = std::process::id();
    let reap = || {
        if outside_group.is_none() {
            reap();
        }
    };
    let pick = || -> Vec<u32> {
        descendants(me)
            .into_iter()
            .filter(|(_, pgrp)| outside_group.is_none_or(|g| *pgrp != g))
            .map(|(pid, _)| pid)
            .collect()
    };
    let first = pick();
    if first.is_empty() {
        return;
    }
    signal_all(&first, Signal::TERM);
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline && !pick().is_empty() {
        reap();
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_all(&pick(), Signal::KILL);
    reap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_child_is_a_descendant_with_its_group() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        let found = descendants(std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.iter().any(|(pid, _)| *pid == child.id()), "{found:?}");
    }
}
