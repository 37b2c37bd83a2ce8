//! One daemon per home: an exclusive `flock` on `run/daemon.lock`, and the
//! holder's pid in `run/daemon.pid`. The kernel drops the lock when the
//! process dies, even by `kill -9`, so a stale pid file never blocks a start.

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

/// The held lock; dropping it releases the lock and removes the pid file.
#[derive(Debug)]
pub struct DaemonLock {
    _file: File,
    pid_file: PathBuf,
}

impl DaemonLock {
    /// Takes the lock of `home` and writes this process's pid.
    pub fn acquire(home: &Home) -> Result<Self, LockError> {
        let path = home.lock_file();
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return Err(LockError::Held {
                pid: read_pid(&home.pid_file()).unwrap_or_else(|| "unknown".into()),
                home: home.label(),
            });
        }
        let pid_file = home.pid_file();
        let mut pf = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&pid_file)
            .map_err(io)?;
        writeln!(pf, "{}", std::process::id()).map_err(io)?;
        Ok(Self {
            _file: file,
            pid_file,
        })
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.pid_file);
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
        let first = DaemonLock::acquire(&home).expect("first");
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
}
