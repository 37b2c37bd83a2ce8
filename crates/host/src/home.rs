//! Where one host keeps everything: its config file, store, runtime files
//! (socket, pid, lock), logs and certificates.
//!
//! Owns path resolution (`--home DIR` / `FLOTILLA_HOME`, else the XDG
//! places), creating directories private to the user, refusing unsafe
//! runtime directories, and choosing a socket path that fits the platform's
//! limit. Must not open the store or bind the socket.

use std::fs::{self, DirBuilder};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Longest Unix socket path, including the terminating NUL.
#[cfg(target_os = "macos")]
pub const SOCKET_PATH_LIMIT: usize = 104;
/// Longest Unix socket path, including the terminating NUL.
#[cfg(not(target_os = "macos"))]
pub const SOCKET_PATH_LIMIT: usize = 108;

/// Why a home cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HomeError {
    /// A directory belongs to someone else.
    #[error(
        "{path} belongs to uid {owner}, not to you (uid {me}); refusing to use it. \
         Remove it or point --home (or FLOTILLA_HOME) somewhere you own"
    )]
    NotOwned {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// The current user.
        me: u32,
    },
    /// A directory is writable by group or others.
    #[error(
        "{path} is writable by group or others (mode {mode:o}); refusing to use it. Fix it with: chmod 700 {path}"
    )]
    Writable {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// No home directory to derive the XDG places from.
    #[error("cannot tell where your home directory is: set HOME, or pass --home DIR")]
    NoHomeDir,
    /// A directory could not be created or inspected.
    #[error("cannot prepare {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// The places of one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    /// `--home DIR`, when one was given.
    pub root: Option<PathBuf>,
    /// `config.toml`.
    pub config_file: PathBuf,
    /// The store and other durable state.
    pub state_dir: PathBuf,
    /// Socket, pid and lock.
    pub run_dir: PathBuf,
    /// Log files.
    pub logs_dir: PathBuf,
    /// Certificates and keys.
    pub certs_dir: PathBuf,
}

impl Home {
    /// Everything under one directory.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = absolute(root.into());
        Self {
            config_file: root.join("config.toml"),
            state_dir: root.join("state"),
            run_dir: root.join("run"),
            logs_dir: root.join("logs"),
            certs_dir: root.join("certs"),
            root: Some(root),
        }
    }

    /// The XDG places of the current user.
    pub fn xdg() -> Result<Self, HomeError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or(HomeError::NoHomeDir)?;
        let env_dir = |var: &str, fallback: PathBuf| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or(fallback)
                .join("flotilla")
        };
        let config = env_dir("XDG_CONFIG_HOME", home.join(".config"));
        let state = env_dir("XDG_STATE_HOME", home.join(".local/state"));
        let run = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir.join("flotilla"),
            _ => tmp_private_dir(),
        };
        Ok(Self {
            root: None,
            config_file: config.join("config.toml"),
            certs_dir: config.join("certs"),
            logs_dir: state.join("logs"),
            state_dir: state,
            run_dir: run,
        })
    }

    /// `--home` if given, else `FLOTILLA_HOME` (clap passes both as one
    /// option), else the XDG places.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self, HomeError> {
        match explicit {
            Some(dir) => Ok(Self::at(dir)),
            None => Self::xdg(),
        }
    }

    /// A short description for messages.
    pub fn label(&self) -> String {
        match &self.root {
            Some(root) => root.display().to_string(),
            None => format!("{} (XDG default)", self.state_dir.display()),
        }
    }

    /// The store's file.
    pub fn store_file(&self) -> PathBuf {
        self.state_dir.join("host.redb")
    }

    /// The daemon's lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.run_dir.join("daemon.lock")
    }

    /// The daemon's pid file.
    pub fn pid_file(&self) -> PathBuf {
        self.run_dir.join("daemon.pid")
    }

    /// The user's claim policy (`policy.toml`, next to `config.toml`).
    pub fn policy_file(&self) -> PathBuf {
        self.config_file.with_file_name("policy.toml")
    }

    /// Where claims' worktrees and their hooks live.
    pub fn worktrees_dir(&self) -> PathBuf {
        self.state_dir.join("worktrees")
    }

    /// The daemon's log file.
    pub fn log_file(&self) -> PathBuf {
        self.logs_dir.join("daemon.log")
    }

    /// Where the fallback socket path is recorded, when one is used.
    pub fn socket_record(&self) -> PathBuf {
        self.run_dir.join("socket-path")
    }

    /// The control socket: `run/control.sock`, or, when that is longer than
    /// the platform allows, a short path in a private directory under `/tmp`
    /// named after this home.
    pub fn socket_path(&self) -> PathBuf {
        let preferred = self.run_dir.join("control.sock");
        if preferred.as_os_str().len() < SOCKET_PATH_LIMIT {
            return preferred;
        }
        let digest = fnv1a(self.run_dir.as_os_str().as_encoded_bytes());
        tmp_private_dir().join(format!("{digest:016x}.sock"))
    }

    /// Whether the socket lives outside the home (the path was too long).
    pub fn socket_is_fallback(&self) -> bool {
        !self.socket_path().starts_with(&self.run_dir)
    }

    /// Creates every directory (0700) and checks that the runtime
    /// directories are private to the user.
    pub fn prepare(&self) -> Result<(), HomeError> {
        if let Some(root) = &self.root {
            create_private(root)?;
        }
        if let Some(parent) = self.config_file.parent() {
            create_private(parent)?;
        }
        for dir in [&self.state_dir, &self.logs_dir, &self.certs_dir] {
            create_private(dir)?;
        }
        create_private(&self.run_dir)?;
        check_private(&self.run_dir)?;
        if let Some(dir) = self
            .socket_path()
            .parent()
            .filter(|_| self.socket_is_fallback())
        {
            create_private(dir)?;
            check_private(dir)?;
        }
        Ok(())
    }
}

fn absolute(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(&path))
            .unwrap_or(path)
    }
}

fn tmp_private_dir() -> PathBuf {
    PathBuf::from(format!(
        "/tmp/flotilla-{}",
        rustix::process::geteuid().as_raw()
    ))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> HomeError + '_ {
    move |source| HomeError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Creates a directory (and parents) with mode 0700 if it is missing.
pub fn create_private(dir: &Path) -> Result<(), HomeError> {
    if dir.is_dir() {
        return Ok(());
    }
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_err(dir))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io_err(dir))
}

/// Refuses a directory that another user owns or that group or others can
/// write.
pub fn check_private(dir: &Path) -> Result<(), HomeError> {
    let meta = fs::metadata(dir).map_err(io_err(dir))?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(HomeError::NotOwned {
            path: dir.to_owned(),
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(HomeError::Writable {
            path: dir.to_owned(),
            mode,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_puts_everything_under_its_root() {
        let home = Home::at("/x/h");
        assert_eq!(home.config_file, Path::new("/x/h/config.toml"));
        assert_eq!(home.store_file(), Path::new("/x/h/state/host.redb"));
        assert_eq!(home.socket_path(), Path::new("/x/h/run/control.sock"));
        assert!(!home.socket_is_fallback());
    }

    #[test]
    fn long_socket_paths_fall_back_to_a_short_private_one() {
        let deep = format!("/tmp/{}", "d".repeat(120));
        let home = Home::at(&deep);
        let sock = home.socket_path();
        assert!(
            sock.as_os_str().len() < SOCKET_PATH_LIMIT,
            "{}",
            sock.display()
        );
        assert!(home.socket_is_fallback());
        assert_eq!(sock, Home::at(&deep).socket_path(), "stable for one home");
        assert_ne!(sock, Home::at(format!("{deep}x")).socket_path());
    }

    #[test]
    fn prepare_makes_private_dirs_and_refuses_open_ones() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::at(tmp.path().join("h"));
        home.prepare().expect("prepare");
        let mode = fs::metadata(&home.run_dir).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(&home.run_dir, fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = home.prepare().expect_err("must refuse");
        assert!(err.to_string().contains("chmod 700"), "{err}");
    }
}
