//! One daemon per home: an exclusive `flock` on `run/daemon.lock`, and the
//! holder's pid in `run/daemon.pid`. The kernel drops the lock when the
//! process dies, even by `kill -9`, so a stale pid file never blocks a start.
//!
//! The pid is written only once the daemon is sure it is the one: after the
//! lock and after the store opened (redb lets one process open it). So a
//! daemon refused at any step, even one that got a fresh lock because the
//! lock file was removed under a running daemon, never overwrites or
//! removes the running daemon's pid file. On drop, the pid file is removed
//! only if it still holds this process's pid.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use crate::home::Home;

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another daemon runs on this home.
    #[error(
        "another flotilla daemon (pid {pid}) is already running for {home}; \
         use it, or stop it with `flotilla down`"
    )]
    Held {
        /// The holder's pid, as it wrote it.
        pid: String,
        /// The home, for the message.
        home: String,
    },
    /// The lock file could not be used.
    #[error("cannot use the lock file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// The held lock; dropping it releases the lock and removes the pid file
/// this process wrote.
#[derive(Debug)]
pub struct DaemonLock {
    _file: File,
    pid_file: PathBuf,
    /// Whether [`DaemonLock::publish_pid`] wrote the pid file.
    published: bool,
}

impl DaemonLock {
    /// Takes the lock of `home`; the pid file is left as it is.
    pub fn acquire(home: &Home) -> Result<Self, LockError> {
        let path = home.lock_file();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| LockError::Io {
                path: path.clone(),
                source,
            })?;
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return Err(LockError::Held {
                pid: read_pid(&home.pid_file()).unwrap_or_else(|| "unknown".into()),
                home: home.label(),
            });
        }
        Ok(Self {
            _file: file,
            pid_file: home.pid_file(),
            published: false,
        })
    }

    /// Writes this process's pid to the pid file; call it once nothing else
    /// can refuse the start (the store is open).
    pub fn publish_pid(&mut self) -> Result<(), LockError> {
        let io = |source| LockError::Io {
            path: self.pid_file.clone(),
            source,
        };
        let mut pf = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&self.pid_file)
            .map_err(io)?;
        writeln!(pf, "{}", std::process::id()).map_err(io)?;
        self.published = true;
        Ok(())
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        let ours = std::process::id().to_string();
        if self.published && read_pid(&self.pid_file).as_deref() == Some(ours.as_str()) {
            let _ = std::fs::remove_file(&self.pid_file);
        }
    }
}

/// The pid recorded in a pid file.
pub fn read_pid(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_pid() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::at(tmp.path());
        home.prepare().expect("prepare");
        let mut first = DaemonLock::acquire(&home).expect("first");
        first.publish_pid().expect("pid");
        let err = DaemonLock::acquire(&home).expect_err("second");
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        assert!(!home.pid_file().exists());
        DaemonLock::acquire(&home).expect("free again");
    }

    #[test]
    fn issue_13_a_lock_that_never_published_leaves_the_pid_file_alone() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::at(tmp.path());
        home.prepare().expect("prepare");
        std::fs::write(home.pid_file(), "4242\n").expect("another daemon's pid");
        drop(DaemonLock::acquire(&home).expect("lock"));
        assert_eq!(read_pid(&home.pid_file()).as_deref(), Some("4242"));
    }

    #[test]
    fn issue_13_a_pid_file_rewritten_by_another_daemon_is_not_removed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::at(tmp.path());
        home.prepare().expect("prepare");
        let mut lock = DaemonLock::acquire(&home).expect("lock");
        lock.publish_pid().expect("pid");
        std::fs::write(home.pid_file(), "4242\n").expect("another daemon's pid");
        drop(lock);
        assert_eq!(read_pid(&home.pid_file()).as_deref(), Some("4242"));
    }
}
